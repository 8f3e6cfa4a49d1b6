#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: boot Debian's 6.12 kernel under QEMU, load the module, and
# record on two endpoints (network namespaces joined by veth) while iperf3
# runs between them and frames are dropped. Into build/run/: the run's
# KTAP lines, its plots, a page of both and an OpenMetrics file; on the
# screen, how many checks of the run passed (and those that failed) and
# the report's summary of both hosts.

set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
kver=$(scripts/kernel.sh version)
out=build/run
rm -rf "$out"
mkdir -p "$out"
echo "# booting $kver under QEMU (${KPM_KVM:+kvm}${KPM_KVM:-tcg})" >&2

# shellcheck disable=SC2016
scripts/vm.sh --kernel "/boot/vmlinuz-$kver" --modules "/lib/modules/$kver" \
	${KPM_KVM:+--kvm} -- bash -c '
	insmod ./ksft_perfmon.ko || exit 1
	mkdir -p /tmp/kpm-run
	KPM_E2E_OUT=/tmp/kpm-run selftests/kernel/e2e_two_hosts_test.sh \
		> /tmp/kpm-run/checks
	rc=$?
	echo KPM-RUN-BEGIN
	cat /tmp/kpm-run/two_hosts.ktap
	echo KPM-RUN-END
	grep -B3 "^not ok" /tmp/kpm-run/checks | sed "s/^/KPM-RUN-FAILED: /"
	echo "# $(grep -c "^ok" /tmp/kpm-run/checks) format and traffic checks passed, $(grep -c "^not ok" /tmp/kpm-run/checks) failed"
	rmmod ksft_perfmon
	exit $rc' | tr -d '\r' > "$out/console.log" && rc=0 || rc=$?

sed -n '/^KPM-RUN-BEGIN$/,/^KPM-RUN-END$/{//!p}' "$out/console.log" \
	> "$out/two_hosts.ktap"
sed -n 's/^KPM-RUN-FAILED: //p' "$out/console.log"
grep '^# .* checks passed' "$out/console.log" ||
	{ tail -n 20 "$out/console.log"; exit 1; }
echo
tools/ksft-perfmon-report --svg "$out/plots" --html "$out/two_hosts.html" \
	--openmetrics "$out/two_hosts.om" \
	--run "$(date -u +%Y%m%dT%H%M%SZ)" --kernel "$kver" \
	"$out/two_hosts.ktap" || rc=1
echo
echo "KTAP lines:  $out/two_hosts.ktap ($(grep -c ktap-metric "$out/two_hosts.ktap") metric lines)"
echo "plots:       $out/plots/ ($(find "$out/plots" -name '*.svg' | wc -l) SVG)"
echo "page:        $out/two_hosts.html (the tables and plots, one file)"
echo "OpenMetrics: $out/two_hosts.om (promtool tsdb create-blocks-from openmetrics)"
echo "console:     $out/console.log"
exit "$rc"
