#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The part of the suite that runs in the guest: loads the module, runs the
# tests of one suite, unloads the module. Every result is a line
# "KPM-RESULT: pass|fail|skip NAME" for selftests/run.sh to count. On a
# kernel with kmemleak, a last result says whether a scan after the final
# rmmod found a leak the module allocated.
#
# usage: guest.sh [--suite SUITE] [MODULE [KSFT_DIR]]
#   SUITE      the tests to run, main by default:
#     main     the netlink tests, the two-host tests, the helpers, and
#              record under hotplug and with a stalled reader
#     stress   rmmod under load
#     fuzz     fuzzing, load-time sessions, the YNL CLI
#     minute   record at 1 kHz for a minute
#     clock    each block of a sample on its own clock (vm.sh --smp 3)
#     drivers  drivers that lock in their stats: one vCPU, two e1000e
#              on a QEMU hub and a bond (vm.sh --smp 1 --e1000e 2)
#     cpus     the netlink tests with many CPUs (vm.sh --smp 64)
#   MODULE     the module to test (default: ./ksft_perfmon.ko)
#   KSFT_DIR   tools/testing/selftests of a kernel tree whose driver
#              selftest library runs PerfMonitor (default: none, not run)

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
suite=main
if [ "${1:-}" = --suite ]; then
	suite=$2
	shift 2
fi
export KPM_MODULE=${1:-./ksft_perfmon.ko}
KPM_KSFT=${2:-}
kmemleak=/sys/kernel/debug/kmemleak
# every place the module was loaded at, for kmemleak_attribution.py
export KPM_MODULE_RANGES=/var/tmp/kpm-module-ranges
: > "$KPM_MODULE_RANGES"

# a KTAP program's results, as lines that run.sh reads from the console
. selftests/lib/sh/ktap.sh
kpm_result() {	# pass|fail|skip NAME
	echo "KPM-RESULT: $1 $2"
}
results() {	# PREFIX
	ktap_results kpm_result "$1"
}

# busy_ticks: the time all CPUs spent busy (user to softirq, not idle,
# not in iowait) so far; under TCG a busy vCPU is a host thread running.
# Read without a fork: on the debug kernel, starting a program takes a
# fifth of a second.
busy() {
	local cpu user nice system idle iowait irq softirq
	read -r cpu user nice system idle iowait irq softirq _ < /proc/stat
	busy_ticks=$((user + nice + system + irq + softirq))
}
hz=$(getconf CLK_TCK 2> /dev/null)
: "${hz:=100}"

# how long each step took, and its vCPU time, for run.sh's timeline
took() {	# NAME START BUSY-TICKS-AT-START
	busy
	echo "KPM-TIME: $1 $((SECONDS - $2)) $(((busy_ticks - $3 + hz / 2) / hz))"
}

step() {
	local name=$1 t0=$SECONDS b0
	busy
	b0=$busy_ticks
	shift
	if "$@"; then
		echo "KPM-RESULT: pass $name"
	else
		echo "KPM-RESULT: fail $name"
	fi
	took "$name" "$t0" "$b0"
}

# What every process but init and the kernel's threads waits
# in, with its kernel stack: printed when a step has run for
# $step_limit s, so that the log of a CI run tells where it hung. Read
# without a fork: the step is killed 10 s later, and on the debug kernel
# a fork for each of its threads took longer than that.
hung() {	# NAME
	local p argv stat ppid wchan line
	exec 2> /dev/null	# a process gone before its files are read
	echo "# $1: still running after $step_limit s; its processes:"
	for p in /proc/[0-9]*; do
		argv=() stat='' wchan=''
		mapfile -t -d '' argv < "$p/cmdline"
		if [ "${#argv[@]}" = 0 ] || [ "${p#/proc/}" = 1 ]; then
			continue
		fi
		read -r stat < "$p/stat"
		stat=${stat##*) }		# after the name: state, ppid, ...
		ppid=${stat#* }
		read -r wchan < "$p/wchan"
		echo "# ${p#/proc/} ${stat%% *} ${ppid%% *} $wchan ${argv[*]}"
		while read -r line; do
			echo "#     $line"
		done < "$p/stack"
	done
}
# run.sh sets half the guest's time limit
step_limit=${KPM_STEP_LIMIT:-600}

# a program's exit status counts too: one that cannot start reports nothing
# (named $exit_as.exit_status, when set, rather than NAME.exit_status);
# one that runs for longer than $step_limit s is killed, and fails, so
# that the steps after it run in the time the guest has left
run() {
	local name=$1 t0=$SECONDS b0 dog
	busy
	b0=$busy_ticks
	shift
	# a function of this script, exported
	[ "$(type -t "$1")" = function ] && set -- bash -c '"$@"' bash "$@"
	(sleep "$step_limit" && hung "$name") &
	dog=$!
	timeout -k 10 $((step_limit + 10)) "$@" 2>&1 | results "$name."
	if [ "${PIPESTATUS[0]}" -eq 0 ]; then
		echo "KPM-RESULT: pass ${exit_as:-$name}.exit_status"
	else
		echo "KPM-RESULT: fail ${exit_as:-$name}.exit_status"
	fi
	pkill -P "$dog" sleep
	wait "$dog" 2> /dev/null
	took "$name" "$t0" "$b0"
}

# insmod that notes where the module's memory is: after rmmod, kmemleak
# can only print the return addresses of its frames
kpm_insmod() {
	insmod "$KPM_MODULE" "$@" || return
	grep '^ksft_perfmon ' /proc/modules >> "$KPM_MODULE_RANGES"
}
export -f kpm_insmod

# COMMAND with the module loaded with ARGS, unloaded after it whatever
# COMMAND's status, so that a failure does not fail the steps after it
kpm_with() {	# ARGS... -- COMMAND...
	local args=() rc
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	kpm_insmod "${args[@]}" || return
	"$@"
	rc=$?
	rmmod ksft_perfmon || return
	return "$rc"
}

# the names of this guest's own results (its kernel's state at the end):
# the stress, fuzz, minute and clock guests' tests go with the main
# guest's, their own apart
own=
case "$suite" in stress | fuzz | minute | clock) own=$suite/ ;; esac

# objects allocated before the tests are not ours
[ -w "$kmemleak" ] && echo clear > "$kmemleak"

# The kernel, by the name of the module's directory (build/NAME/). The
# remote over ssh on Debian's 6.12 and the debug kernel, and its failures
# on 6.12 alone: an ssh under TCG costs a second, and what the ssh tests
# check beyond the netns ones is userspace's (the module's conversion to
# the reader's time namespace is in both)
kernel_name=${KPM_MODULE%/*}
kernel_name=${kernel_name##*/}
ssh_variants= ssh_failures=
case "$kernel_name" in
6.12) ssh_variants=1 ssh_failures=1 ;;
7.3-debug) ssh_variants=1 ;;
esac

suite_main() {
	# a load that fails never shows the family (nlctrl's notify group)
	run insmod_failure /usr/bin/python3 \
		selftests/kernel/insmod_failure_test.py "$KPM_MODULE"
	step module.insmod kpm_insmod
	run nl selftests/kernel/nl_test
	# samples in parts, a reader's buffer, a slow reader, a deleted session
	run dump selftests/kernel/dump_test
	# cpu-net's counts against the kernel's files, under forced drops
	run softnet /usr/bin/python3 selftests/kernel/softnet_test.py \
		"${KPM_MODULE%/*}-nearwrap/kpm_nearwrap.ko"
	# queue statistics against qstats-get, and their lock held for 2 s
	run qstats /usr/bin/python3 selftests/kernel/qstats_test.py \
		"${KPM_MODULE%/*}-lockhold/kpm_lockhold.ko" \
		${KPM_KSFT:+"$KPM_KSFT/../../.."}
	# the cost to the host: the read budget charges every queue, RTNL
	# held 50 us at a time (the test module's netdevs; netdevsim)
	run qstats_cost /usr/bin/python3 selftests/kernel/qstats_cost_test.py \
		"${KPM_MODULE%/*}-slowdev/kpm_slowdev.ko"
	# the sampler's work off the CPU its timer fires on, under a softirq
	# load there
	run worker /usr/bin/python3 selftests/kernel/worker_test.py
	# the CPUs read where the timer fires, the netdevs in a work item at
	# their own interval, against the scheduler's count of kworker runs
	run sampler /usr/bin/python3 selftests/kernel/sampler_test.py
	run e2e env KPM_E2E_OUT=/tmp/kpm-e2e selftests/kernel/e2e_two_hosts_test.sh
	# that run in a real Prometheus: userspace only, so on one kernel
	if [ "$kernel_name" = 6.12 ]; then
		run prometheus /usr/bin/python3 selftests/kernel/prometheus_test.py \
			/tmp/kpm-e2e
	fi
	# the helpers in selftests: the kernel's driver selftest library with
	# PerfMonitor (veth and netns; netdevsim where the kernel has it), and a
	# bash test with the shell helper
	if [ -n "$KPM_KSFT" ]; then
		run drv_veth selftests/lib/sh/drv_env.sh veth "$KPM_KSFT"
		# the remote over ssh, an sshd in the netns on a clock 1000 s
		# ahead; its failures on one kernel: they are the helpers'
		if [ "$ssh_variants" ]; then
			run drv_ssh selftests/lib/sh/drv_env.sh ssh "$KPM_KSFT"
		fi
		if [ "$ssh_failures" ]; then
			run drv_ssh_failures selftests/lib/sh/drv_env.sh ssh \
				"$KPM_KSFT" failures
		fi
		run drv_nsim selftests/lib/sh/drv_env.sh nsim "$KPM_KSFT"
		# record --ktap: every case's metrics, no test changed, over
		# the kernel's runner and its programs, the remote over a netns
		# and over ssh. Userspace but for the module's sessions, and
		# the runner's programs take minutes under a debug kernel's
		# emulation: on one kernel
		if [ "$kernel_name" = 6.12 ]; then
			run record_ktap selftests/lib/sh/drv_env.sh veth \
				"$KPM_KSFT" ktap
			run record_ktap_ssh selftests/lib/sh/drv_env.sh ssh \
				"$KPM_KSFT" ktap
		fi
		# the RFC's library and SystemMonitor, with the RFC's patches
		# (KPM_RFC_PATCHES): its iperf.py on PerfMonitor, and both
		# monitors around one iperf3. Userspace but for the module, and
		# iperf.py asks for 10 iperf3 intervals, which a debug kernel
		# under emulation does not give: on one kernel
		if [ "$kernel_name" = 6.12 ]; then
			run drv_rfc selftests/lib/sh/drv_env.sh veth \
				"$KPM_KSFT" rfc
		fi
	else
		echo "KPM-RESULT: skip drv.no_selftest_library_given"
	fi
	sh_perfmon() {	# [ssh]
		local out rc
		out=$(mktemp)
		selftests/kernel/perfmon_sh_test.sh "$@" > "$out" 2>&1
		rc=$?
		grep -v 'ktap-metric' "$out" | sed 's/^/# /'
		python3 selftests/lib/py/check_perfmon_output.py "$out" perfmon_sh || rc=1
		rm -f "$out"
		return "$rc"
	}
	export -f sh_perfmon
	run sh sh_perfmon
	[ "$ssh_variants" ] && run sh_ssh sh_perfmon ssh
	[ "$ssh_failures" ] && run sh_ssh_failures \
		selftests/kernel/perfmon_sh_ssh_failures_test.sh
	# its remote's record that never starts: stopped, not waited for
	run sh_slow selftests/kernel/perfmon_sh_slow_remote_test.sh
	# the live view in tmux, its screen checked against a pinned busy loop
	# and paced UDP on lo
	run top /usr/bin/python3 selftests/kernel/top_tmux_test.py
	step module.rmmod rmmod ksft_perfmon
	# record under CPU hotplug and with a stalled reader (at 1 kHz for a
	# minute in a guest of its own, suite_minute); record as the
	# supervisor of its COMMAND, which the kernel has no part in, on 6.12
	# alone (Documentation/test-coverage.rst)
	step module.insmod_for_record kpm_insmod
	if [ "$(basename "$(dirname "$KPM_MODULE")")" = 6.12 ]; then
		run record /usr/bin/python3 selftests/kernel/record_test.py \
			--except zero_loss_1khz
	else
		run record /usr/bin/python3 selftests/kernel/record_test.py \
			--kernel --except zero_loss_1khz
	fi
	step module.rmmod_after_record rmmod ksft_perfmon
}

# the main suite's second part, a guest of its own with fewer vCPUs than
# the first: 200 rounds of rmmod while sessions sample, a dump is half
# read and a thread waits in recv()
suite_stress() {
	run rmmod_race selftests/kernel/rmmod_race_test "$KPM_MODULE" 200
}

# its third, on one vCPU: requests one at a time, from one thread
suite_fuzz() {
	# 100,000 mutated requests; the kernel's log is checked after the run
	step module.insmod_for_fuzz kpm_insmod
	run nl_fuzz selftests/kernel/nl_fuzz_test --seed "${KPM_FUZZ_SEED:-1}" \
		--count 100000
	step module.rmmod_after_fuzz rmmod ksft_perfmon
	# what a dump calls, by kprobes: on one vCPU, where TCG patches the
	# kernel's text safely
	step module.insmod_for_calls kpm_insmod
	run calls /usr/bin/python3 selftests/kernel/calls_test.py
	step module.rmmod_after_calls rmmod ksft_perfmon
	# a load-time session, and rmmod while it samples
	step module.param_session kpm_with ifindex=1 interval_ms=10 -- bash -c '
		sleep 0.2 &&
		grep -Eq "^1 10000000 128 ([0-9]+ ){5}0 1 [0-9]+" \
			/sys/kernel/debug/ksft_perfmon/sessions'
	# the benchmark's file, under KASAN and lockdep too
	step module.debugfs_copy_cost kpm_with -- grep -Eq \
		"^passes 32 cpus [0-9]+ sampler_ns [1-9][0-9]* bare_ns [1-9][0-9]* bare_clock_ns [1-9][0-9]* sampler_net_ns [1-9][0-9]*$" \
		/sys/kernel/debug/ksft_perfmon/copy_cost
	step tool.dump_is_sorted_json kpm_with ifindex=1 interval_ms=50 -- bash -c '
		sleep 0.2 &&
		python3 selftests/lib/py/check_dump.py tools/ksft-perfmon-nl 1'
	# the kernel's YNL CLI (7.3's, of the same source tree) on our spec alone,
	# and the tool's -j and -p, on a load-time session
	if [ -n "$KPM_KSFT" ]; then
		step module.insmod_for_ynl kpm_insmod ifindex=1 interval_ms=10
		run ynl /usr/bin/python3 selftests/kernel/ynl_cli_test.py "$KPM_KSFT/../../.."
		step module.rmmod_after_ynl rmmod ksft_perfmon
	fi
}

# its fourth: a minute at 1 kHz, a guest that is mostly waiting, beside
# the wide guests rather than in the main guest
suite_minute() {
	step "${own}module.insmod" kpm_insmod
	exit_as=${own}record run record \
		/usr/bin/python3 selftests/kernel/record_test.py zero_loss_1khz
	step "${own}module.rmmod" rmmod ksft_perfmon
}

# its fifth: each block of a sample on its own clock, in a guest of three
# CPUs that nothing else runs in, its last kept busy (nohz_full where the
# kernel has it: run.sh)
suite_clock() {
	# this shell and all it starts on CPU 0, the test's: the others idle
	# but for what the test puts there
	taskset -p -c 0 $$ > /dev/null
	step "${own}module.insmod" kpm_insmod
	exit_as=${own}clock run clock /usr/bin/python3 selftests/kernel/clock_test.py \
		"${KPM_MODULE%/*}-slowdev/kpm_slowdev.ko"
	step "${own}module.rmmod" rmmod ksft_perfmon
}

# drivers that take a lock in ndo_get_stats64, sampled at 1 ms on one vCPU
suite_drivers() {
	step module.insmod kpm_insmod
	run drv_lock selftests/drivers/lock_test.sh 20
	step module.rmmod rmmod ksft_perfmon
}

# a sample of 64 CPUs and 16 netdevs is larger than an order-0 skb
suite_cpus() {
	step module.insmod kpm_insmod
	run nl selftests/kernel/nl_test
	run dump selftests/kernel/dump_test
	run e2e selftests/kernel/e2e_two_hosts_test.sh
	step module.rmmod rmmod ksft_perfmon
}

case "$suite" in
main) suite_main ;;
stress) suite_stress ;;
fuzz) suite_fuzz ;;
minute) suite_minute ;;
clock) suite_clock ;;
drivers) suite_drivers ;;
cpus) suite_cpus ;;
*) echo "KPM-RESULT: fail guest.unknown_suite_$suite" ;;
esac

# lockdep turns itself off after its first report, or when it runs out of
# room: it must have watched the whole run
if [ -r /proc/lockdep_stats ]; then
	step "${own}lockdep.still_on" grep -Eq '^ *debug_locks: +1$' /proc/lockdep_stats
fi

# kmemleak reports an object once it has been unreferenced for a full scan
# after its minimum age (5 s); scan twice and read what the module left.
if [ -w "$kmemleak" ]; then
	sleep 6
	echo scan > "$kmemleak"
	echo scan > "$kmemleak"
	step "${own}kmemleak.no_module_leak" \
		/usr/bin/python3 selftests/lib/py/kmemleak_attribution.py \
		"$kmemleak" "$KPM_MODULE_RANGES"
fi
