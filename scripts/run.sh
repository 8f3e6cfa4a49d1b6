#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: boot Debian's 6.12 kernel under QEMU, load the module, and
# record on two endpoints (network namespaces joined by veth) while iperf3
# runs between them and frames are dropped; print both hosts' KTAP metric
# lines.

set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
kver=$(scripts/kernel.sh version)
echo "# booting $kver under QEMU (${KPM_KVM:+kvm}${KPM_KVM:-tcg})" >&2

# shellcheck disable=SC2016
scripts/vm.sh --kernel "/boot/vmlinuz-$kver" --modules "/lib/modules/$kver" \
	${KPM_KVM:+--kvm} -- bash -c '
	insmod ./ksft_perfmon.ko || exit 1
	mkdir -p /tmp/kpm-run
	KPM_E2E_OUT=/tmp/kpm-run selftests/e2e_two_hosts.sh > /tmp/kpm-run/checks
	rc=$?
	cat /tmp/kpm-run/local.ktap /tmp/kpm-run/remote.ktap
	echo "# $(grep -c "^ok" /tmp/kpm-run/checks) format and traffic checks passed, $(grep -c "^not ok" /tmp/kpm-run/checks) failed"
	rmmod ksft_perfmon
	exit $rc' | sed -n '/^# /p'
