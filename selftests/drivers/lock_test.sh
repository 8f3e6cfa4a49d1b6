#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Drivers whose ndo_get_stats64 takes a spinlock that their own process
# context takes too, sampled at 1 ms while that process context runs. The
# guest has one vCPU and two emulated e1000e NICs on a QEMU hub (vm.sh
# --smp 1 --e1000e 2): one NIC in each of two netns, iperf3 between them,
# and a bond over veth beside them. While both hosts record, readers of
# the same stats loop: /proc/net/dev (e1000e's and bonding's
# ndo_get_stats64), ethtool -S (e1000e's stats lock) and ip -s link
# (rtnetlink). e1000e's own watchdog work takes its stats lock every two
# seconds. A sampler that called them from softirq would deadlock the CPU
# (e1000e, bonding) or make lockdep report inconsistent lock usage.
#
# selftests/lib/py/check_drv_lock.py then checks the raw samples: every one
# there, in order, counters that never go back, the e1000e counters equal
# to sysfs once the link is quiet, and iperf3's bytes within them.
#
# usage: lock_test.sh [SECONDS]    (default 20 of traffic)

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tool=$top/tools/ksft-perfmon-nl
secs=${1:-20}
out=$(mktemp -d)
A=kpm-drv-a B=kpm-drv-b
ring=16384
pids=()
t0=$(date +%s)
say() { echo "# drv_lock: $* at $(($(date +%s) - t0)) s" >&3; }
exec 3>&1

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	ip netns del $A 2>/dev/null
	ip netns del $B 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT

bail() {
	echo "1..1"
	echo "not ok 1 drv_lock.setup # $*"
	exit 1
}

# modules on Debian's kernels, built in on the debug kernel
modprobe -q e1000e 2>/dev/null
modprobe -q bonding 2>/dev/null
nics=()
for d in /sys/class/net/*; do
	[ "$(basename "$(readlink "$d/device/driver" 2>/dev/null)")" = e1000e ] &&
		nics+=("$(basename "$d")")
done
[ ${#nics[@]} -eq 2 ] || bail "want 2 e1000e NICs (vm.sh --e1000e 2), have ${#nics[@]}"
e0=${nics[0]} e1=${nics[1]}
command -v ethtool > /dev/null || bail "no ethtool"

ip netns add $A && ip netns add $B || bail "ip netns add"
for ns in $A $B; do
	ip netns exec $ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec $ns sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	ip -n $ns link set lo up
done
ip link set "$e0" netns $A && ip link set "$e1" netns $B ||
	bail "moving the e1000e NICs"
ip -n $A addr add 192.0.2.1/24 dev "$e0" && ip -n $A link set "$e0" up &&
ip -n $B addr add 192.0.2.2/24 dev "$e1" && ip -n $B link set "$e1" up ||
	bail "e1000e addresses"
# bond0 in A and bond1 in B, each over two veth of a pair
ip -n $A link add bond0 type bond mode balance-rr &&
ip -n $B link add bond1 type bond mode balance-rr || bail "no bonding"
for i in 0 1; do
	ip -n $A link add vb$i type veth peer name vp$i netns $B &&
	ip -n $A link set vb$i master bond0 &&
	ip -n $B link set vp$i master bond1 || bail "bond slaves"
done
ip -n $A addr add 198.18.0.1/24 dev bond0 && ip -n $A link set bond0 up &&
ip -n $B addr add 198.18.0.2/24 dev bond1 && ip -n $B link set bond1 up ||
	bail "bond addresses"

# e1000e's watchdog raises the carrier a moment after the link is up
for ((i = 0; i < 100; i++)); do
	[ "$(ip netns exec $A cat /sys/class/net/"$e0"/carrier 2>/dev/null)" = 1 ] &&
	[ "$(ip netns exec $B cat /sys/class/net/"$e1"/carrier 2>/dev/null)" = 1 ] &&
		break
	sleep 0.1
done
ip netns exec $A ping -q -c 1 -W 5 192.0.2.2 > /dev/null ||
	bail "no traffic over the e1000e pair"

bg() {	# NETNS COMMAND...: in a process group of its own, for cleanup
	local ns=$1
	shift
	setsid ip netns exec "$ns" "$@" > /dev/null 2>&1 &
	pids+=($!)
}
bg $B iperf3 -s -B 192.0.2.2
sleep 1

# The clock once a host's session has left debugfs, or its record has
# exited (the session came and went between two looks): record asked
# for the session's counts before it deleted it, so no period the kernel
# counted as missed expired later. The sessions are told apart by their
# interval and ring. bash reads debugfs whole and paces itself with
# read -t on a FIFO that no one writes, as the workload's readers do; it
# looks every 20 ms only once the workload is over. A session left 30 s
# after its record exited gives no clock, which the check fails.
mkfifo "$out/pace"
gone_clock() {	# INTERVAL_NS EXITED_FILE
	local all= seen=0 there=1 pace=0.5 left=1500
	exec 5<> "$out/pace"
	while [ $there = 1 ] || { [ $seen = 0 ] && [ ! -e "$2" ]; }; do
		read -t $pace -u 5
		[ -e "$out/quiet" ] || [ -e "$2" ] || continue
		pace=0.02
		if [ -e "$2" ]; then
			left=$((left - 1))
			[ $left -gt 0 ] || return 1
		fi
		# one read(2) after another: a seek would show it anew; and
		# one that failed is no proof of absence
		read -r -d '' all < /sys/kernel/debug/ksft_perfmon/sessions
		[[ $all == "id interval_ns "* ]] || continue
		there=0
		[[ $all =~ $'\n'[0-9]+" $1 $ring " ]] && there=1 seen=1
	done
	"$tool" clock
}
unwatch() {	# PID: waited for, so no longer for cleanup to kill
	local p keep=()
	for p in "${pids[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	pids=("${keep[@]}")
}
gone_clock 1000000 "$out/exited.a" > "$out/end.a" &
watch_a=$!
gone_clock 10000000 "$out/exited.b" > "$out/end.b" &
watch_b=$!
pids+=($watch_a $watch_b)
say "set up; recording"

# B records until A's workload is over. A's workload is the traffic with
# the readers looping beside it, then a quiet e1000e link read twice
# through sysfs with the clock before each read. A samples at 1 ms, B at
# 10 ms: e1000e's stats are some fifty registers read one by one, each a
# trap into QEMU under TCG, and two sessions at 1 ms took most of a
# KASAN kernel's only vCPU.
ip netns exec $B "$tool" record --raw --ifname "$e1" --ifname bond1 \
	--interval 10 --ring $ring --duration 36000 > "$out/b.json" 2> "$out/b.err" &
rec_b=$!
workload() {
	local i s v readers=()

	# At nice 10, so that iperf3 and record get the vCPU they need and
	# the readers the rest: /proc/net/dev read by bash itself, as fast as
	# it goes; ethtool and ip a process each, paced by bash's read -t on
	# a FIFO (a KASAN kernel under TCG forks too slowly to loop on them
	# bare)
	for i in $A $B; do
		setsid ip netns exec $i nice -n 10 bash -c \
			'while :; do while read -r l; do :; done < /proc/net/dev; done' &
		readers+=($!)
	done
	for i in "$A ethtool -S $E0" "$B ethtool -S $E1" "$A ip -s -s link show"; do
		setsid ip netns exec ${i%% *} nice -n 10 bash -c \
			"exec 5<> $OUT/pace; while :; do ${i#* } > /dev/null; read -t 0.01 -u 5; done" &
		readers+=($!)
	done
	ping -q -i 0.01 198.18.0.2 > /dev/null &
	readers+=($!)
	# at a rate that leaves the vCPU to the readers and the sampler, and
	# bounded: a client that hangs must not hang the test
	timeout $((SECS * 3 + 60)) iperf3 -c 192.0.2.2 -t "$SECS" -b 200M \
		--connect-timeout 30000 -J > "$OUT/iperf3.json"
	echo "# drv_lock: iperf3 exited $? at $(($(date +%s) - T0)) s" >&3
	for i in "${readers[@]}"; do
		kill -- "-$i" 2>/dev/null || kill "$i"
	done
	wait
	sleep 0.5
	# read by bash itself where it can: forks are slow on a KASAN kernel
	for i in 0 1; do
		echo "clock $("$TOOL" clock)"
		for s in rx_packets tx_packets rx_bytes tx_bytes; do
			read -r v < "/sys/class/net/$E0/statistics/$s"
			echo "a $s $v"
		done
		ip netns exec "$B" bash -c 'for s in rx_packets tx_packets rx_bytes tx_bytes; do
			read -r v < "/sys/class/net/$1/statistics/$s"; echo "b $s $v"; done' - "$E1"
	done > "$OUT/sysfs"
	echo "# drv_lock: sysfs read at $(($(date +%s) - T0)) s" >&3
	sleep 0.1
	touch "$OUT/quiet"
	kill -TERM "$REC_B"
}
export -f workload
export A B E0=$e0 E1=$e1 SECS=$secs OUT=$out TOOL=$tool T0=$t0 REC_B=$rec_b
ip netns exec $A "$tool" record --raw --ifname "$e0" --ifname bond0 \
	--interval 1 --ring $ring -- bash -c workload > "$out/a.json" 2> "$out/a.err"
rc_a=$?
touch "$out/exited.a"
wait $watch_a
unwatch $watch_a
say "host A recorded"
# the workload stopped it; a workload that failed did not
kill -TERM $rec_b 2>/dev/null
wait $rec_b
rc_b=$?
touch "$out/exited.b"
wait $watch_b
unwatch $watch_b
say "host B recorded: $(wc -l < "$out/a.json") and $(wc -l < "$out/b.json") lines"
for f in a.err b.err; do
	sed "s/^/# $f: /" "$out/$f"
done

python3 "$top/selftests/lib/py/check_drv_lock.py" --dir "$out" --secs "$secs" \
	--rc-a "$rc_a" --rc-b "$rc_b"
rc=$?
say "checked"
exit $rc
