#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A bash selftest with the shell helper (selftests/lib/sh/ksft_perfmon.sh)
# around its traffic: iperf3 from a netns (the remote endpoint) to this
# one over veth, each second's throughput recorded by the test, both
# endpoints sampled by ksft_perfmon. Prints KTAP; needs the module loaded
# and root. With "ssh", the helper reaches the remote over ssh, an sshd in
# the netns (selftests/lib/sh/ssh_env.sh), as the netdev CI's remotes are,
# 50 ms away each way.
#
# usage: perfmon_sh_test.sh [ssh]

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=selftests/lib/sh/ksft_perfmon.sh
source "$top/selftests/lib/sh/ksft_perfmon.sh"
R=kpm-sh-remote
POLICY='{"name":"throughput","regression":{"better":"higher","compare":"p50","relative_tolerance":0.05},"summarize":"distribution"}'

# shellcheck source=selftests/lib/sh/ssh_env.sh
source "$top/selftests/lib/sh/ssh_env.sh"
sshd=$(mktemp -d)

cleanup() {
	ssh_remote_stop "$sshd"
	ip netns del $R 2>/dev/null
	[ -n "${srv:-}" ] && kill "$srv" 2>/dev/null
}
trap cleanup EXIT

echo "TAP version 13"
echo "1..1"
PERFMON_START_NS=$("$KSFT_PERFMON_NL" clock)
ip netns add $R &&
ip link add kpm-sa type veth peer name kpm-sb netns $R &&
ip addr add 192.0.2.1/24 dev kpm-sa && ip link set kpm-sa up &&
ip -n $R addr add 192.0.2.2/24 dev kpm-sb && ip -n $R link set kpm-sb up &&
ip -n $R link set lo up ||
	{ echo "not ok 1 perfmon_sh # setup failed"; exit 1; }
iperf3 -s -1 -B 192.0.2.1 > /dev/null 2>&1 &
srv=$!
sleep 0.5

ok=1
# the remote's CLOCK_MONOTONIC 1000 s ahead of ours, as another host's is:
# the helper must line both up
if [ "${1:-}" = ssh ]; then
	ssh_remote_start $R 192.0.2.2 1000 "$sshd" &&
		ssh_link_delay kpm-sa $R kpm-sb 50 ||
		{ echo "not ok 1 perfmon_sh # no sshd"; exit 1; }
	remote="$sshd/bin/ssh kpm-remote"
else
	remote="ip netns exec $R unshare --time --monotonic 1000 sh -c"
fi
t0=$SECONDS
perfmon_start -i 250 -m cpu.softnet.processed -l kpm-sa -r "$remote" \
	-R kpm-sb || ok=0
echo "# both hosts sampling after $((SECONDS - t0)) s"
printf '# remote round trip: %d.%09d s\n' \
	$((${PERFMON_REMOTE_TRIP_NS:-0} / 1000000000)) \
	$((${PERFMON_REMOTE_TRIP_NS:-0} % 1000000000))
# ... which it is, so that lining the hosts up is tested with an offset:
# read between two reads of ours, it is that far ahead of one and the other
before=$("$KSFT_PERFMON_NL" clock)
rclock=$($remote "$KSFT_PERFMON_NL clock")
after=$("$KSFT_PERFMON_NL" clock)
echo "# the remote's clock is $((rclock - after)) to $((rclock - before)) ns ahead"
[ $((rclock - before)) -ge 1000000000000 ] &&
	[ $((rclock - after)) -le 1000000000000 ] || ok=0
# each interval's line as it comes, in Gbit/s
ip netns exec $R iperf3 -c 192.0.2.1 -t 4 -i 1 -f m --forceflush |
while read -r line; do
	case "$line" in
	*sender*|*receiver*) ;;
	*Mbits/sec*)
		gbps=$(echo "$line" | awk '{ for (i = 2; i <= NF; i++)
			if ($i == "Mbits/sec") print $(i - 1) / 1000 }')
		perfmon_metric throughput "$gbps" "$POLICY"
		POLICY= ;;
	esac
done
sleep 0.3
perfmon_stop || ok=0
# on the monitor's clock, for the check that every time is inside
now=$("$KSFT_PERFMON_NL" clock)
printf '# elapsed: %d.%09d s\n' $(((now - PERFMON_START_NS) / 1000000000)) \
	$(((now - PERFMON_START_NS) % 1000000000))
if [ $ok = 1 ]; then
	echo "ok 1 perfmon_sh"
else
	echo "not ok 1 perfmon_sh"
fi
