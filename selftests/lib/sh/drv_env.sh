#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's driver selftest library with PerfMonitor around iperf3
# (selftests/kernel/perfmon_py_test.py), in the library's two local setups:
#   veth   NetDrvEpEnv's NETIF mode over a veth pair, the remote endpoint
#          a netns (REMOTE_TYPE=netns)
#   ssh    the same veth pair, the remote endpoint reached over ssh
#          (REMOTE_TYPE=ssh): an sshd in the netns (selftests/lib/sh/ssh_env.sh),
#          50 ms away each way
#   nsim   its netdevsim mode (needs netdevsim; Debian's 6.12 has none)
# The test is copied into KSFT_DIR/drivers/net, where the library finds
# itself. Needs the module loaded and root; KTAP output from
# check_perfmon_output.py, non-zero exit when a check failed. With
# "failures", the test is
# selftests/kernel/perfmon_py_remote_failures_test.py instead, its own
# KTAP the output. With "rfc", the library is a copy of KSFT_DIR's with
# the RFC's patches 1-4 from $KPM_RFC_PATCHES applied (its metric API
# and SystemMonitor), and the tests are its drivers/net/hw/iperf.py with
# SystemMonitor imported from ksft_perfmon.py, checked by
# check_rfc_output.py, and selftests/kernel/rfc_monitors_test.py; without
# the patches, one result that skips. With "ktap",
# selftests/kernel/record_ktap_test.py: record --ktap over KSFT_DIR's
# run_kselftest.sh, whose drivers/net program gets this config, and
# record the remote too (over ssh, only that test).
#
# usage: drv_env.sh veth|ssh|nsim KSFT_DIR [failures|rfc|ktap]

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
rfc | ktap) test= ;;
*) echo "usage: drv_env.sh veth|ssh|nsim KSFT_DIR [failures|rfc|ktap]" >&2; exit 2 ;;
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
		# far: PerfMonitor's remote must stop with ours all the same
		ssh_link_delay kpm-va $R kpm-vb 50 || exit 1
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
	echo "usage: drv_env.sh veth|ssh|nsim KSFT_DIR [failures|rfc|ktap]" >&2
	exit 2
	;;
esac

# KSFT_DIR's net/lib and drivers/net in @out/tools/testing/selftests, the
# RFC's patches applied, with the tree's ynl and specs beside them
rfc_tree() {	# OUT
	local src p
	src=$(cd "$ksft/../../.." && pwd) || return
	mkdir -p "$1/tools" &&
		(cd "$src" && cp -a --parents tools/testing/selftests/net/lib \
			tools/testing/selftests/drivers/net "$1") &&
		ln -s "$src/tools/net" "$1/tools/net" &&
		ln -s "$src/Documentation" "$1/Documentation" || return
	for p in 0001 0002 0003 0004; do
		patch -p1 -F3 -s --no-backup-if-mismatch -d "$1" \
			< "$KPM_RFC_PATCHES/$p.patch" || return
	done
}

if [ "$what" = rfc ]; then
	if [ -z "${KPM_RFC_PATCHES:-}" ]; then
		echo "ok 1 rfc.patches_applied # SKIP KPM_RFC_PATCHES is not set: no RFC to test with"
		exit 0
	fi
	rfc=$(mktemp -d)
	trap 'rm -rf "$rfc" "$out"; ssh_remote_stop "$sshd"; ip netns del $R 2>/dev/null' EXIT
	rfc_tree "$rfc"
	rc=$?
	hw=$rfc/tools/testing/selftests/drivers/net/hw
	# after the library's import, which it overrides
	[ $rc -eq 0 ] && sed '/^from lib.py import/,/)$/{/)$/a\
from ksft_perfmon import SystemMonitor  # ksft_perfmon'"'"'s, not the library'"'"'s
}' "$hw/iperf.py" > "$hw/iperf_kpm.py"
	# the one import, and nothing else
	[ $rc -eq 0 ] && [ "$(diff "$hw/iperf.py" "$hw/iperf_kpm.py" | grep -c '^[<>]')" = 1 ] ||
		rc=1
	echo "$( [ $rc -eq 0 ] || printf not\ )ok 1 rfc.patches_applied"
	[ $rc -eq 0 ] || exit 1
	cp "$top/selftests/kernel/rfc_monitors_test.py" "$hw/" || exit 1
	export PYTHONPATH=$top/selftests/lib/py
	export KSFT_PERFMON_NL=$top/tools/ksft-perfmon-nl
	python3 "$hw/iperf_kpm.py" > "$out" 2>&1
	rc=$?
	grep -v 'ktap-metric' "$out" | sed 's/^/# /'
	echo "# $(grep -c 'ktap-metric' "$out") metric lines; iperf_kpm.py exited $rc"
	python3 "$top/selftests/lib/py/check_rfc_output.py" "$out" \
		iperf_kpm.test_iperf || rc=1
	# its one case is a result
	python3 "$hw/rfc_monitors_test.py" > "$out" 2>&1 || rc=1
	grep -v 'ktap-metric' "$out" |
		sed 's/^\(not \)\{0,1\}ok 1 /\1ok 2 rfc./'
	exit "$rc"
fi

if [ "$what" = ktap ]; then
	# over ssh, the kernel's runner: the programs of known cases are
	# the same there
	KPM_REMOTE_IFNAME=kpm-vb python3 \
		"$top/selftests/kernel/record_ktap_test.py" "$ksft" \
		$([ "$mode" = ssh ] && echo runner_remote)
	exit
fi

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
