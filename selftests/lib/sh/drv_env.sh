#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's driver selftest library with PerfMonitor around iperf3
# (selftests/kernel/perfmon_py_test.py), in the library's two local setups:
#   veth   NetDrvEpEnv's NETIF mode over a veth pair, the remote endpoint
#          a netns (REMOTE_TYPE=netns)
#   ssh    the same veth pair, the remote endpoint reached over ssh
#          (REMOTE_TYPE=ssh): an sshd in the netns (selftests/lib/sh/ssh_env.sh)
#   nsim   its netdevsim mode (needs netdevsim; Debian's 6.12 has none)
# The test is copied into KSFT_DIR/drivers/net, where the library finds
# itself. Needs the module loaded and root; KTAP output from
# check_perfmon_output.py, non-zero exit when a check failed. With
# "failures", the test is
# selftests/kernel/perfmon_py_remote_failures_test.py instead, its own
# KTAP the output.
#
# usage: drv_env.sh veth|ssh|nsim KSFT_DIR [failures]

set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
mode=$1 ksft=$2 what=${3:-perfmon}
R=kpm-drv-remote
case=iperf3_monitored

[ -f "$ksft/drivers/net/lib/py/env.py" ] || {
	echo "drv_env.sh: no driver selftest library in $ksft" >&2
	exit 1
}
test=$ksft/drivers/net/kpm_perfmon.py
case "$what" in
perfmon) cp "$top/selftests/kernel/perfmon_py_test.py" "$test" || exit 1 ;;
failures) cp "$top/selftests/kernel/perfmon_py_remote_failures_test.py" \
		"$test" || exit 1 ;;
*) echo "usage: drv_env.sh veth|ssh|nsim KSFT_DIR [failures]" >&2; exit 2 ;;
esac
out=$(mktemp)
sshd=$(mktemp -d)
trap 'rm -f "$test" "$out"; ssh_remote_stop "$sshd"; ip netns del $R 2>/dev/null' EXIT
# shellcheck source=selftests/lib/sh/ssh_env.sh
source "$top/selftests/lib/sh/ssh_env.sh"

case "$mode" in
veth | ssh)
	ip netns add $R || exit 1
	ip link add kpm-va type veth peer name kpm-vb netns $R || exit 1
	ip addr add 192.0.2.1/24 dev kpm-va
	ip link set kpm-va up
	ip -n $R addr add 192.0.2.2/24 dev kpm-vb
	ip -n $R link set kpm-vb up
	ip -n $R link set lo up
	export NETIF=kpm-va LOCAL_V4=192.0.2.1 REMOTE_V4=192.0.2.2
	export REMOTE_TYPE=netns REMOTE_ARGS=$R
	if [ "$mode" = ssh ]; then
		# the sshd's clock 1000 s ahead of ours, as another host's is
		ssh_remote_start $R 192.0.2.2 1000 "$sshd" || exit 1
		export PATH=$sshd/bin:$PATH
		export REMOTE_TYPE=ssh REMOTE_ARGS=kpm-remote
	fi
	;;
nsim)
	if ! modprobe -q netdevsim 2>/dev/null &&
	   [ ! -d /sys/bus/netdevsim ]; then
		echo "ok 1 drv.nsim # SKIP no netdevsim in this kernel"
		exit 0
	fi
	;;
*)
	echo "usage: drv_env.sh veth|ssh|nsim KSFT_DIR [failures]" >&2
	exit 2
	;;
esac

if [ "$what" = failures ]; then
	PYTHONPATH=$top/selftests/lib/py \
		KSFT_PERFMON_NL=$top/tools/ksft-perfmon-nl python3 "$test"
	exit
fi

# the remote's CLOCK_MONOTONIC 1000 s ahead of ours, as another host's is
# (perfmon_py_test.py puts a netns remote's there): PerfMonitor must line both
# up
PYTHONPATH=$top/selftests/lib/py KSFT_PERFMON_NL=$top/tools/ksft-perfmon-nl \
	KPM_REMOTE_CLOCK_AHEAD=1000 python3 "$test" > "$out" 2>&1
rc=$?
# the test's own output, for the log, with its metric lines counted
grep -v 'ktap-metric' "$out" | sed 's/^/# /'
echo "# $(grep -c 'ktap-metric' "$out") metric lines; test exited $rc"
sed -n '/ktap-metric-json: .*"throughput"/{p;q}' "$out"
python3 "$top/selftests/lib/py/check_perfmon_output.py" "$out" "$case" || exit 1
exit "$rc"
