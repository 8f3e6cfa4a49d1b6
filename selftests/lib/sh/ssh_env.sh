# SPDX-License-Identifier: GPL-2.0
#
# A remote host over ssh, as the netdev CI has one, inside this machine:
# an sshd in a network namespace, listening on the namespace's test
# address only, in a time namespace of its own (its CLOCK_MONOTONIC
# ahead of ours, as another host's is), with a host key and a client key
# made for it. Nothing leaves the machine.
#
#   source ssh_env.sh
#   ssh_remote_start NS ADDR AHEAD_S DIR   # DIR: a new, empty directory
#   ssh_link_delay DEV NS PEER_DEV MS      # if the remote is to be far
#   ssh kpm-remote COMMAND                 # with DIR/bin first in PATH
#   ssh_remote_stop DIR
#
# DIR/ssh_config names the remote kpm-remote (root, the client key, the
# host key known, no prompt: BatchMode), a connection a command, as the
# library makes them; DIR/bin/ssh and DIR/bin/scp use it, for programs
# that run "ssh HOST" and "scp" as the kernel's driver selftest library
# does (REMOTE_TYPE=ssh REMOTE_ARGS=kpm-remote).

ssh_remote_start() {	# NS ADDR AHEAD_S DIR
	local ns=$1 addr=$2 ahead=$3 d=$4 i err
	mkdir -p "$d/bin" /run/sshd || return 1
	ssh-keygen -q -t ed25519 -N '' -C kpm-host -f "$d/host_key" &&
		ssh-keygen -q -t ed25519 -N '' -C kpm-client -f "$d/client_key" ||
		return 1
	cp "$d/client_key.pub" "$d/authorized_keys"
	cat > "$d/sshd_config" <<-EOF
		ListenAddress $addr
		HostKey $d/host_key
		AuthorizedKeysFile $d/authorized_keys
		PermitRootLogin prohibit-password
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
		StrictModes no
		PidFile $d/sshd.pid
		Subsystem sftp internal-sftp
		# Debian's bash runs root's ~/.bashrc for a command of sshd's
		# unless it is a nested shell: this host's takes 4 s under
		# emulation (pyenv), a remote's own business
		SetEnv SHLVL=1
	EOF
	echo "$addr $(cut -d' ' -f1,2 "$d/host_key.pub")" > "$d/known_hosts"
	cat > "$d/ssh_config" <<-EOF
		Host kpm-remote
			HostName $addr
			User root
			IdentityFile $d/client_key
			IdentitiesOnly yes
			UserKnownHostsFile $d/known_hosts
			StrictHostKeyChecking yes
			BatchMode yes
			ConnectTimeout 10
			ServerAliveInterval 5
			ServerAliveCountMax 3
			# cheaper than the default under emulation
			KexAlgorithms curve25519-sha256
			Ciphers aes128-gcm@openssh.com
	EOF
	for i in ssh scp; do
		printf '#!/bin/sh\nexec /usr/bin/%s -F "%s" "$@"\n' "$i" \
			"$d/ssh_config" > "$d/bin/$i"
		chmod +x "$d/bin/$i"
	done
	# sshd forks into the background: its daemon, and every session of
	# it, in the time namespace
	ip netns exec "$ns" unshare --time --monotonic "$ahead" \
		/usr/sbin/sshd -f "$d/sshd_config" -E "$d/sshd.log" || return 1
	echo "$ns" > "$d/netns"
	for i in $(seq 50); do
		err=$("$d/bin/ssh" kpm-remote true 2>&1) && return 0
		sleep 0.2
	done
	echo "ssh_remote_start: no answer from sshd on $addr: $err; $(cat "$d/sshd.log")" >&2
	return 1
}

# the link to the remote as slow as a distant host's: MS ms each way, on
# both ends of a veth pair, with a queue long enough for the traffic of
# a test (netem's default, 1000 packets, drops a TCP window's worth). A
# kernel without netem (the debug kernel's config) keeps the veth as it
# is, and says so.
ssh_link_delay() {	# DEV NS PEER_DEV MS
	if ! tc qdisc add dev "$1" root netem delay "$4ms" limit 100000 \
	     2>/dev/null; then
		echo "# no netem in this kernel: the remote is not delayed"
		return 0
	fi
	ip netns exec "$2" tc qdisc add dev "$3" root netem delay "$4ms" \
		limit 100000
}

# sshd, and whatever runs in its netns still (a session, what a test left):
# a netns with a process in it outlives "ip netns del", with its veth
ssh_remote_stop() {	# DIR
	[ -s "$1/sshd.pid" ] && kill "$(cat "$1/sshd.pid")" 2> /dev/null
	[ -s "$1/netns" ] &&
		ip netns pids "$(cat "$1/netns")" 2> /dev/null | xargs -r kill -KILL
	rm -rf "$1"
}
