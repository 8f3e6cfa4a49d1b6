#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole suite: host-side checks, and the module's tests in each kernel
# of the matrix under QEMU, in two lanes at once (see the job list below).
# Ends with the timeline and "N passed, N failed, N skipped".
#
# Environment: KERNELS selects kernels of the matrix (default: all of
# "$(scripts/kernel.sh list)"); KPM_KVM=1 uses KVM instead of TCG; KPM_SMP
# sets the main and minute guests' CPUs (default 4); KPM_STEP_LIMIT the
# seconds a step of a guest may take (default: half the guest's time);
# KPM_FUZZ_SEED nl_fuzz's seed (default 1).

set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. selftests/lib/sh/ktap.sh

# the results so far: counts, names of failures, the timeline printed at
# the end, the first lines of the kernel reports that failed a guest, and
# the name of every result, checked against selftests/expected-results
no_results() {
	pass=0 fail=0 skip=0 failed=() times=() reports=() seen=()
}
no_results
result() {	# pass|fail|skip NAME
	case "$1" in
	pass) pass=$((pass + 1)) ;;
	skip) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)); failed+=("$2") ;;
	esac
	# a skip is known as one: a test that passed and now skips is not
	if [ "$1" = skip ]; then seen+=("$2 # SKIP"); else seen+=("$2"); fi
	echo "$1: $2"
}
step() {	# NAME COMMAND...
	local name=$1
	shift
	echo "== $name"
	if "$@"; then
		result pass "$name"
	else
		result fail "$name"
		return 1
	fi
}

known=$(scripts/kernel.sh list)
kernels=${KERNELS:-$known}
for k in $kernels; do
	case " $known " in
	*" $k "*) ;;
	*) echo "run.sh: unknown kernel '$k' in KERNELS (known: $known)" >&2
	   exit 2 ;;
	esac
done
case "${KPM_STEP_LIMIT:-1}" in
*[!0-9]* | 0*) echo "run.sh: KPM_STEP_LIMIT '$KPM_STEP_LIMIT' is not a number of seconds" >&2
   exit 2 ;;
esac
echo "kernels: $kernels"

step build.tools make -s tools selftests
# the kernel's driver selftest library that PerfMonitor is tested in:
# 7.3's, from the source package the debug kernel is built from
ksft_lib() {
	ksft_src=$(scripts/debug-kernel.sh source) || return 1
	ksft=$ksft_src/tools/testing/selftests
	[ -f "$ksft/drivers/net/lib/py/env.py" ]
}
ksft= ksft_src=
step setup.driver_selftest_library ksft_lib

# a host-side KTAP program: each "ok"/"not ok" line is a result, and so is
# its exit status (one that cannot start reports nothing)
run_ktap() {	# NAME COMMAND...
	local name=$1 out rc
	shift
	echo "== $name"
	out=$(mktemp)
	"$@" > "$out"
	rc=$?
	ktap_results result < "$out"
	[ "$rc" -eq 0 ] && result pass "$name.exit_status" ||
		result fail "$name.exit_status"
	rm -f "$out"
}
# libFuzzer on the tool's parsing and JSON writing, a bounded minute
fuzz_samples() {
	mkdir -p build
	make -s fuzz FUZZ_TIME=60 > build/fuzz.log 2>&1
	local rc=$?
	grep -E '^(Done|stat::number|stat::new|==[0-9]+==ERROR|SUMMARY)' build/fuzz.log
	return $rc
}

# Kbuild refuses a 32-bit kernel, whose kcpustat times can tear, saying
# why: a kernel build tree with CONFIG_64BIT unset on make's command line;
# and make clean, which reads no config, goes through
kbuild_refuses_32_bit() {
	local dir=build/32bit kdir out
	kdir=/usr/src/linux-headers-$(scripts/kernel.sh version)
	rm -rf "$dir" && mkdir -p "$dir" && cp Kbuild "$dir/" || return
	out=$(make -C "$kdir" M="$top/$dir" CONFIG_64BIT= modules 2>&1)
	echo "$out" | grep -F "ksft_perfmon needs a 64-bit kernel" &&
		make -s -C "$kdir" M="$top/$dir" clean
}

# the host-side checks
host_side() {
	local t0=$SECONDS

	step check.generated_files_match_spec make -s check-generated
	step check.kbuild_refuses_32_bit kbuild_refuses_32_bit
	step check.checkpatch make -s checkpatch
	run_ktap json /usr/bin/python3 selftests/host/json_repr_test.py
	run_ktap kmemleak /usr/bin/python3 selftests/host/kmemleak_attribution_test.py
	run_ktap samples selftests/host/samples_test
	run_ktap extend selftests/host/extend_test
	run_ktap report /usr/bin/python3 selftests/host/report_test.py
	step fuzz.samples_libfuzzer_60s fuzz_samples
	# Documentation/ with Sphinx, warnings being errors; make install into a
	# DESTDIR, its man pages and completion checked against --help; DKMS
	step docs.sphinx_html_and_man make -s docs
	run_ktap packaging /usr/bin/python3 selftests/host/packaging_test.py
	step dkms.build_against_debian_6.12 scripts/dkms-test.sh
	times+=("host-side steps: $((SECONDS - t0)) s")
}

# the benchmarks still run (one 2-vCPU guest, short): numbers not checked
bench_smoke() {
	local t0=$SECONDS

	step bench.smoke scripts/bench.sh --smoke build/bench-smoke
	times+=("bench.smoke: $((SECONDS - t0)) s")
}

# One guest of the kernel that kernel_setup set up: its tests' results
# under PREFIX/, its own (the kernel's log, lockdep, kmemleak) under OWN/,
# which names it in the timeline. A step of COMMAND (guest.sh) may take
# half the guest's time, KPM_STEP_LIMIT seconds if set; KPM_FUZZ_SEED,
# if set, goes to it too.
guest() {	# PREFIX OWN VM.SH-ARGS... -- COMMAND...
	local prefix=$1 own=$2 log vm_rc status name t0=$SECONDS up cpu busy line
	local vm_args=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		vm_args+=("$1")
		shift
	done
	shift
	echo "== $own: guest"
	log=$(mktemp)
	scripts/vm.sh --kernel "$image" --modules "$modules" --mem "$mem" \
		--timeout "$timeout" ${KPM_KVM:+--kvm} "${vm_args[@]}" -- \
		env KPM_STEP_LIMIT="${KPM_STEP_LIMIT:-$((timeout / 2))}" \
		${KPM_FUZZ_SEED:+"KPM_FUZZ_SEED=$KPM_FUZZ_SEED"} "$@" | tee "$log"
	vm_rc=${PIPESTATUS[0]}
	while read -r status name; do
		case "$name" in
		stress/* | fuzz/* | minute/*) result "$status" "$own/${name#*/}" ;;
		*) result "$status" "$prefix/$name" ;;
		esac
	done < <(sed -n 's/^KPM-RESULT: \([a-z]*\) \(.*\)$/\1 \2/p' "$log")
	# guest.sh always exits 0: anything else is a kernel report in dmesg
	# (vm-guest.sh) or a guest that did not finish (vm.sh)
	if [ "$vm_rc" -eq 0 ]; then
		result pass "$own/guest.kernel_log_clean"
	else
		result fail "$own/guest.kernel_log_clean"
		# what the kernel said, where the end of a CI log shows it
		while IFS= read -r line; do
			reports+=("$own: $line")
		done < <(tr -d '\r' < "$log" |
			 grep -E -A3 '^vm(-guest|\.sh): ' | head -n 8)
	fi
	up=$(sed -n 's/^.*KPM-VM: guest up at \([0-9.]*\) s.*$/\1/p' "$log" | tail -n1)
	cpu=$(sed -n 's/^KPM-VM: host CPU \([0-9]*\) s$/\1/p' "$log" | tail -n1)
	times+=("$own: guest $((SECONDS - t0)) s, host CPU ${cpu:-?} s (/init at ${up:-?} s of its uptime)")
	# its steps of 20 s or more, slowest first, with the time its vCPUs
	# were busy
	while read -r name secs busy; do
		times+=("$own:   $name $secs s, vCPUs busy ${busy:-?} s")
	done < <(sed -n 's/^KPM-TIME: \(.*\)$/\1/p' "$log" |
		 awk '$2 >= 20' | sort -k2,2nr)
	rm -f "$log"
}

# the module, and the test modules of selftests/kernel/qstats_test.py,
# selftests/kernel/softnet_test.py, selftests/kernel/clock_test.py and
# selftests/kernel/qstats_cost_test.py beside it
build_modules() {	# KDIR NAME
	scripts/kbuild.sh "$1" "$2" &&
		scripts/kbuild.sh "$1" "$2-lockhold" selftests/modules/lockhold &&
		scripts/kbuild.sh "$1" "$2-nearwrap" selftests/modules/nearwrap &&
		scripts/kbuild.sh "$1" "$2-slowdev" selftests/modules/slowdev
}

# one kernel: build the module against it, and sparse; sets kver, image,
# modules, kdir, mem and timeout for guest(), and env to all of them
kernel_setup() {	# NAME
	local k=$1 t0=$SECONDS t1
	echo "== $k: setting up"
	if ! env=$(scripts/kernel.sh env "$k"); then
		result fail "$k/setup"
		return 1
	fi
	eval "$env"
	echo "kernel: $kver"
	t1=$SECONDS
	step "$k/build.module_w1_clean" build_modules "$kdir" "$k" ||
		{ result fail "$k/guest"; return 1; }
	step "$k/check.sparse" scripts/kbuild.sh --sparse "$kdir" "$k"
	times+=("$k: kernel $((t1 - t0)) s, module and sparse $((SECONDS - t1)) s")
}

# the main suite, on the default number of vCPUs, with the 7.3 source
# shared, wherever KPM_CACHE put it (the guest's /tmp is its own), and an
# e1000e whose IRQ the queue map test moves between CPUs
guest_main() {	# NAME
	guest "$1" "$1" --smp "${KPM_SMP:-4}" --virtio-net --e1000e 1 \
		${ksft:+--share "$ksft_src"} -- \
		selftests/guest.sh "build/$1/ksft_perfmon.ko" ${ksft:+"$ksft"}
}

# its second part, a guest of its own (its tests' results are named as
# the main guest's) on two vCPUs: more would cost more host CPU
# (Documentation/testing.rst)
guest_stress() {	# NAME
	guest "$1" "$1/stress" --smp 2 -- \
		selftests/guest.sh --suite stress "build/$1/ksft_perfmon.ko"
}

# its third, the same way, on one vCPU
guest_fuzz() {	# NAME
	guest "$1" "$1/fuzz" --smp 1 ${ksft:+--share "$ksft_src"} -- \
		selftests/guest.sh --suite fuzz "build/$1/ksft_perfmon.ko" ${ksft:+"$ksft"}
}

# its fourth, the same way, on the main guest's vCPUs: the minute at
# 1 kHz. Its vCPUs are busy less than half the time, so it runs beside a
# wide guest, not after it; and it is timed, so it runs at lane a's nice
# even in lane b: at 19, beside a busy wide guest, its record could
# starve and lose samples
guest_minute() {	# NAME
	renice -n "$nice_a" -p "$BASHPID" > /dev/null ||
		echo "run.sh: the minute runs at nice $lane_nice"
	guest "$1" "$1/minute" --smp "${KPM_SMP:-4}" -- \
		selftests/guest.sh --suite minute "build/$1/ksft_perfmon.ko"
	renice -n "$lane_nice" -p "$BASHPID" > /dev/null
}

# its fifth, the same way, on three vCPUs: a sample's clocks, the last
# vCPU kept busy, where the kernel accounts its time exactly (NO_HZ_FULL,
# which Debian's kernels have); at lane a's nice, as it is timed too
guest_clock() {	# NAME
	renice -n "$nice_a" -p "$BASHPID" > /dev/null ||
		echo "run.sh: the clock guest runs at nice $lane_nice"
	guest "$1" "$1/clock" --smp 3 --append "nohz_full=1-2 isolcpus=1-2" -- \
		selftests/guest.sh --suite clock "build/$1/ksft_perfmon.ko"
	renice -n "$lane_nice" -p "$BASHPID" > /dev/null
}

# drivers that lock in their stats: one vCPU, two e1000e on a hub
guest_drivers() {	# NAME
	guest "$1/drivers" "$1/drivers" --smp 1 --e1000e 2 -- \
		selftests/guest.sh --suite drivers "build/$1/ksft_perfmon.ko"
}

# 64 vCPUs: samples of many parts. (possible_cpus= only lowers the count
# since x86's topology rework in 6.9, and QEMU 7.2 lists no hotpluggable CPU
# to a TCG guest.) On Debian's 6.12 only: the parts are the same code on
# every kernel, and the debug kernel checks them in its main guest, where a
# reader of NLMSG_GOODSIZE sees 16 netdevs split every sample.
# 64 vCPU threads share the host's two cores: one may not run for tens of
# seconds, which the lockup detectors' defaults (20 s soft lockup, 21 s RCU
# stall, 120 s hung task) report. A real lockup is still reported, after
# 120 s, 300 s and 600 s, or the guest times out and vm-where.py shows where
# it is stuck.
guest_cpus() {	# NAME
	local starved='watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=300'
	starved+=' sysctl.kernel.hung_task_timeout_secs=600'
	guest "$1/cpus" "$1/cpus" --smp 64 --mem 4096 --append "$starved" -- \
		selftests/guest.sh --suite cpus "build/$1/ksft_perfmon.ko"
}

# The rest is a list of jobs that two lanes take: the host-side checks,
# each kernel's setup (kernel_setup, and the build of a kernel that is
# built here) and its guests. A guest waits for its kernel's setup,
# whichever lane did it. Lane a is this shell; lane b's output is printed
# when it ends, and its results and times are added to lane a's.
#
# Under TCG QEMU runs a thread per vCPU, and with more of them than the
# host has cores, a vCPU that waits on another (a spinlock, an IPI, an RCU
# grace period) burns CPU while the other is not running: two guests side
# by side cost up to twice the host CPU they cost one after the other
# (Documentation/benchmarks.rst has the measurements). So the wide jobs, the
# busy guests of more than one vCPU, run one at a time, in lane a. Lane b
# first sets up the kernels that are built here (the debug kernel's build
# when it is not cached, at nice 0, beside lane a's first guests), then
# goes to nice 19 and takes the rest of the jobs of about one thread: the
# host-side checks, the other setups, the one-vCPU guests. At nice 19 they
# use what CPU the wide guest leaves idle and delay it little. The minute
# at 1 kHz is not a wide job, though its guest has 4 vCPUs: they are
# busy less than half the time, and either lane takes it, at lane a's
# nice (guest_minute). Lane a takes any job, the first of the list that
# is ready, so the list starts with the debug kernel's guests, the
# longest.
wide() {	# JOB
	case "$1" in
	main:* | stress:* | cpus:* | bench) return 0 ;;
	*) return 1 ;;
	esac
}
built() {	# NAME: a kernel that is built here, not a package
	case "$1" in *-debug) return 0 ;; *) return 1 ;; esac
}
jobs=()
for k in $kernels; do
	built "$k" && jobs+=("setup:$k" "main:$k" "stress:$k")
done
jobs+=(host)
for k in $kernels; do
	built "$k" || jobs+=("setup:$k" "main:$k" "stress:$k")
done
# the wide jobs before the narrow ones that lane b would take anyway
case " $kernels " in *" 6.12 "*) jobs+=(cpus:6.12) ;; esac
jobs+=(bench)
for j in minute clock fuzz drivers; do
	for k in $kernels; do
		built "$k" && jobs+=("$j:$k")
	done
	for k in $kernels; do
		built "$k" || jobs+=("$j:$k")
	done
done

run_job() {	# JOB (SYNC-DIR in $sync)
	local what=${1%%:*} k=${1#*:} status
	case "$what" in
	host) host_side ;;
	bench) bench_smoke ;;
	setup)
		if kernel_setup "$k"; then
			printf 'ok\n%s\n' "$env" > "$sync/setup.$k.new"
		else
			echo failed > "$sync/setup.$k.new"
		fi
		mv "$sync/setup.$k.new" "$sync/setup.$k"
		;;
	*)
		read -r status < "$sync/setup.$k"
		if [ "$status" != ok ]; then
			echo "== $1: not run, $k was not set up"
			return
		fi
		eval "$(sed 1d "$sync/setup.$k")"
		"guest_$what" "$k"
		;;
	esac
}

# Take the first job not taken (mkdir is the claim) whose kernel is set
# up, until every job is taken, or the other lane (OTHER-PID) is gone with
# a setup this one waits for: those guests' results are then missing.
# With "narrow", leave the wide jobs to the other lane (and the minutes,
# without the right to go back to lane a's nice for them).
lane() {	# OTHER-PID [narrow]
	local j waiting
	while :; do
		waiting=0
		for j in "${jobs[@]}"; do
			[ -e "$sync/claim.$j" ] && continue
			if [ "${2:-}" = narrow ]; then
				wide "$j" && continue
				[ -z "$renice_back" ] &&
					case "${j%%:*}" in minute | clock) ;; *) false ;; esac &&
					continue
			fi
			case "$j" in
			host | bench | setup:*) ;;
			*) [ -e "$sync/setup.${j#*:}" ] || { waiting=1; continue; } ;;
			esac
			mkdir "$sync/claim.$j" 2> /dev/null || continue
			run_job "$j"
			continue 2
		done
		[ "$waiting" = 1 ] && kill -0 "$1" 2> /dev/null || break
		sleep 2
	done
}

# Lane b: the setups of kernels built here, then at nice 19 the host-side
# checks (those setups and the host-side checks are claimed for it
# below), and the jobs that are not wide, the minutes at lane a's nice
# where it may go back to it (root may). Nice works between the lanes
# because they share a session: with autogroup, a lane b in a session of
# its own would not be behind.
lane_b() {
	local k
	# its own results: those before the fork are lane a's
	no_results
	for k in $kernels; do
		built "$k" && run_job "setup:$k"
	done
	renice -n 19 -p "$BASHPID" > /dev/null && lane_nice=19 ||
		echo "run.sh: lane b runs at the nice of lane a"
	if [ "$lane_nice" != "$nice_a" ] &&
	   ! { renice -n "$nice_a" -p "$BASHPID" &&
	       renice -n "$lane_nice" -p "$BASHPID"; } > /dev/null 2>&1; then
		renice_back=
		echo "run.sh: lane b cannot go back to nice $nice_a; the minutes are lane a's"
	fi
	host_side
	lane "$lane_a" narrow
	times+=("lane b: $SECONDS s")
	declare -p pass fail skip failed times reports seen > "$sync/b.state"
}
# both lanes run sparse (kbuild.sh --sparse): fetch and build it once
sparse_once() {
	KPM_SPARSE=$(scripts/sparse.sh) && export KPM_SPARSE
}
step setup.sparse sparse_once

mkdir -p build
sync=$(mktemp -d "$top/build/lanes.XXXXXX")
mkdir "$sync/claim.host"
for k in $kernels; do
	built "$k" && mkdir "$sync/claim.setup:$k"
done
lane_a=$$
nice_a=$(nice)
lane_nice=$nice_a	# this lane's: lane b goes to 19
renice_back=1		# lane b may go back to nice_a for a minute
# in a process group of its own, which a stopped run stops whole
set -m
lane_b < /dev/null > "$sync/b.log" 2>&1 &
lane_b_pid=$!
set +m
stop_lane_b() {
	kill -TERM -- -"$lane_b_pid" 2>/dev/null
}
trap 'trap - INT TERM HUP; stop_lane_b; exit 130' INT TERM HUP
trap stop_lane_b EXIT

lane "$lane_b_pid"
times+=("lane a: $SECONDS s")

echo "== waiting for lane b"
wait "$lane_b_pid"
echo "== lane b's output"
cat "$sync/b.log"
echo "== end of lane b's output"
# its results and times after lane a's
a_pass=$pass a_fail=$fail a_skip=$skip
a_failed=("${failed[@]}") a_times=("${times[@]}") a_reports=("${reports[@]}")
a_seen=("${seen[@]}")
no_results
if [ -f "$sync/b.state" ]; then
	source "$sync/b.state"
else
	result fail lane_b.finished
fi
pass=$((a_pass + pass)) fail=$((a_fail + fail)) skip=$((a_skip + skip))
failed=("${a_failed[@]}" "${failed[@]}")
times=("${a_times[@]}" "${times[@]}")
reports=("${a_reports[@]}" "${reports[@]}")
seen=("${a_seen[@]}" "${seen[@]}")
mv "$sync/b.log" build/lane-b.log
rm -rf "$sync"
times+=("total: $SECONDS s")

# A result that never came is a failure, and so is one that the list does
# not know: a step that did not run, or a test renamed, changes the count
# only through selftests/expected-results. A line KERNEL,KERNEL.../NAME
# stands for KERNEL/NAME of each of those kernels that ran, */NAME for
# every kernel's; "NAME # SKIP" is a result that must skip.
expected() {
	awk -v ran=" $(echo $kernels) " -v known=" $(echo $known) " '
		/^(#|$)/ { next }
		{
			i = index($0, "/")
			ks = substr($0, 1, i - 1)
			if (ks == "*")
				ks = known
			n = split(ks, k, /[ ,]+/)
			named = 0
			for (j = 1; j <= n; j++) {
				if (k[j] == "" || !index(known, " " k[j] " "))
					continue
				named = 1
				if (index(ran, " " k[j] " "))
					print k[j] "/" substr($0, i + 1)
			}
			if (!named)
				print
		}
	' selftests/expected-results | LC_ALL=C sort
}
while IFS= read -r line; do
	case "$line" in
	$'\t'*) result fail "not in selftests/expected-results: ${line#?}" ;;
	*) result fail "missing: $line" ;;
	esac
done < <(LC_ALL=C comm -3 <(expected) <(printf '%s\n' "${seen[@]}" | LC_ALL=C sort))

echo
printf 'time: %s\n' "${times[@]}"
echo
[ ${#reports[@]} -eq 0 ] || printf 'kernel: %s\n' "${reports[@]}"
[ ${#failed[@]} -eq 0 ] || printf 'failed: %s\n' "${failed[@]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
