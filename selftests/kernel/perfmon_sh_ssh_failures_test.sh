#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The shell helper (selftests/lib/sh/ksft_perfmon.sh) when its remote,
# over ssh (an sshd in a netns: selftests/lib/sh/ssh_env.sh), fails as
# the netdev CI's remotes do: a record there that cannot start, one that
# is slow to start, and a connection lost while it samples. Each must
# end in the helper's message and a non-zero status, with no record (or
# what the remote's command started) left on either host. Prints KTAP;
# needs the module loaded and root.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=selftests/lib/sh/ksft_perfmon.sh
source "$top/selftests/lib/sh/ksft_perfmon.sh"
# shellcheck source=selftests/lib/sh/ssh_env.sh
source "$top/selftests/lib/sh/ssh_env.sh"
R=kpm-shf-remote
sshd=$(mktemp -d)
slow=$(mktemp)
n=0 failed=0

cleanup() {
	ssh_remote_stop "$sshd"
	ip netns del $R 2>/dev/null
	rm -f "$slow" "$slow.waited"
}
trap cleanup EXIT

check() {	# NAME COMMAND...
	local name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n $name"
	else
		echo "not ok $n $name"
		failed=1
	fi
}

# what runs with WHAT in its command line, here and on the remote (one
# kernel, but asked of each as of two hosts): nothing
nothing_left() {	# WHAT
	local here there pat="[${1:0:1}]${1:1}" i
	# within 3 s: a record stopped takes a moment to end
	for i in $(seq 15); do
		here=$(pgrep -af "$pat")
		there=$($remote "pgrep -af '$pat'")
		[ -z "$here$there" ] && return 0
		sleep 0.2
	done
	echo "# still running: ${here:+here: $here} ${there:+remote: $there}"
	return 1
}

echo "TAP version 13"
ip netns add $R &&
ip link add kpm-fa type veth peer name kpm-fb netns $R &&
ip addr add 192.0.2.1/24 dev kpm-fa && ip link set kpm-fa up &&
ip -n $R addr add 192.0.2.2/24 dev kpm-fb && ip -n $R link set kpm-fb up &&
ip -n $R link set lo up &&
ssh_remote_start $R 192.0.2.2 1000 "$sshd" ||
	{ echo "1..1"; echo "not ok 1 setup"; exit 1; }
remote="$sshd/bin/ssh kpm-remote"
echo "1..8"

# the remote has no such netdev: its record says so and exits
err=$(perfmon_start -i 100 -l kpm-fa -r "$remote" -R kpm-none 2>&1 >/dev/null)
rc=$?
echo "# perfmon_start returned $rc: $err"
check cannot_start_fails [ "$rc" -ne 0 ]
check cannot_start_says_why \
	eval '[[ "$err" == "perfmon: record did not start: "*kpm-none* ]]'
check cannot_start_nothing_left nothing_left "ksft-perfmon-nl record"

# a remote whose record would start after 40 s, 3 s allowed: its tool
# waits when it records as the remote
cat > "$slow" <<EOF
#!/bin/sh
case "\$1 \$* " in
"record "*" --host remote "*) sleep 40; touch "\$0.waited" ;;
esac
exec $KSFT_PERFMON_NL "\$@"
EOF
chmod +x "$slow"
t0=$SECONDS
err=$(KSFT_PERFMON_NL=$slow PERFMON_READY_S=3 \
	perfmon_start -i 100 -l kpm-fa -r "$remote" -R kpm-fb 2>&1 >/dev/null)
rc=$?
took=$((SECONDS - t0))
echo "# perfmon_start returned $rc after $took s: $err"
check slow_start_fails eval '[ "$rc" -ne 0 ] && [ ! -e "$slow.waited" ] &&
	[[ "$err" == "perfmon: record did not start: not sampling after 3 s"* ]]'
# the remote command's shell and its sleep, and the local record
check slow_start_nothing_left eval 'nothing_left "sleep 40" &&
	nothing_left "ksft-perfmon-nl record"'

# the remote record's connection cut while it samples: the sshd that
# serves it killed
perfmon_start -i 100 -l kpm-fa -r "$remote" -R kpm-fb
rc=$?
rpid=$(cat "$_perfmon_dir/remote.pid" 2>/dev/null)
served=$($remote "ps -o ppid= -p $rpid" | tr -d ' ')
what=$($remote "ps -o args= -p $served")
sleep 0.5
$remote "kill -KILL $served"
sleep 1
out=$(perfmon_stop)
st=$?
echo "# record $rpid, served by $served ($what): killed; perfmon_stop returned $st"
grep -v ktap-metric <<< "$out"
check lost_connection_says_so eval '[ "$rc" -eq 0 ] && [ "$st" -ne 0 ] &&
	[[ "$what" == sshd* ]] &&
	grep -qx "# perfmon (remote): record exited 255: its connection was lost" <<< "$out"'
check lost_connection_local_lines_kept \
	grep -q '^# ktap-metric-json: {"host":"local"' <<< "$out"
check lost_connection_nothing_left nothing_left "ksft-perfmon-nl record"
exit "$failed"
