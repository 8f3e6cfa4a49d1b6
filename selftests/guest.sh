#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The part of the suite that runs in the guest: loads the module, runs the
# netlink tests and the two-host test, unloads the module. Every result is
# a line "KPM-RESULT: pass|fail|skip NAME" for selftests/run.sh to count.

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# KTAP "ok N name" / "not ok N name [# SKIP]" lines into results
results() {
	local prefix=$1 line
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case "$line" in
		"ok "*"# SKIP"*) echo "KPM-RESULT: skip $prefix${line#ok * }" ;;
		"ok "*) echo "KPM-RESULT: pass $prefix$(echo "${line#ok }" | cut -d' ' -f2)" ;;
		"not ok "*) echo "KPM-RESULT: fail $prefix$(echo "${line#not ok }" | cut -d' ' -f2)" ;;
		esac
	done
}

step() {
	local name=$1
	shift
	if "$@"; then
		echo "KPM-RESULT: pass $name"
	else
		echo "KPM-RESULT: fail $name"
	fi
}

# a program's exit status counts too: one that cannot start reports nothing
run() {
	local name=$1
	shift
	"$@" 2>&1 | results "$name."
	if [ "${PIPESTATUS[0]}" -eq 0 ]; then
		echo "KPM-RESULT: pass $name.exit_status"
	else
		echo "KPM-RESULT: fail $name.exit_status"
	fi
}

step module.insmod insmod ./ksft_perfmon.ko
run nl selftests/ksft_perfmon_nl_test
run e2e selftests/e2e_two_hosts.sh
step module.rmmod rmmod ksft_perfmon
# a load-time session, and rmmod while it samples
step module.param_session bash -c '
	insmod ./ksft_perfmon.ko ifindex=1 interval_ms=10 &&
	sleep 0.2 &&
	grep -q "^1 10000000 128 .* 1$" /sys/kernel/debug/ksft_perfmon/sessions &&
	rmmod ksft_perfmon'
step tool.dump_is_sorted_json bash -c '
	insmod ./ksft_perfmon.ko ifindex=1 interval_ms=20 && sleep 0.2 &&
	tools/ksft-perfmon-nl dump --id 1 | python3 selftests/check_dump.py &&
	rmmod ksft_perfmon'
