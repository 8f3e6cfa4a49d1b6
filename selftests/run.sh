#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole suite: host-side checks, and the module's tests in each kernel
# of the matrix under QEMU. Sets up what every job needs, runs the jobs
# of selftests/jobs.mk two at a time, then counts their results against
# selftests/expected-results. Ends with the timeline and "N passed, N
# failed, N skipped".
#
# usage: run.sh            the suite
#        run.sh job JOB    one job of selftests/jobs.mk (make runs these)
#
# Environment: KERNELS selects kernels of the matrix (default: all of
# "$(scripts/kernel.sh list)"); KPM_KVM=1 uses KVM instead of TCG; KPM_SMP
# sets the main and minute guests' CPUs (default 4); KPM_STEP_LIMIT the
# seconds a step of a guest may take (default: half the guest's time);
# KPM_FUZZ_SEED nl_fuzz's seed (default 1); KPM_RFC_PATCHES a directory
# holding the patches of the RFC "selftests: net: add performance metric
# reporting" (0001.patch to 0004.patch), to test PerfMonitor with its
# library: without it, those tests skip.

set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. selftests/lib/sh/ktap.sh

# Where a job's results go: build/test/JOB.results, a line "pass|fail|skip
# NAME" each; JOB.times, its lines of the timeline; JOB.reports, the
# first lines of the kernel reports that failed a guest. The jobs before
# make's are the job "setup".
T=build/test
job=setup
result() {	# pass|fail|skip NAME
	echo "$1 $2" >> "$T/$job.results"
	echo "$1: $2"
}
timeline() {	# LINE
	echo "$1" >> "$T/$job.times"
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

# a host test of report and replay on each build of make tools-sanitized
# (ASan with LeakSanitizer; UBSan): its results, and no sanitizer report,
# each of which goes to a file of its own. LeakSanitizer stops the world
# with ptrace: where that is refused (yama's ptrace_scope 2 or 3, some
# containers), leaks go unchecked, and the log says so. A run that does
# not end in half an hour is a failure.
sanitized() {	# TEST
	local san log opts rc=0

	for san in asan ubsan; do
		log=$top/build/$san/log
		rm -rf "$log" && mkdir -p "$log" || return
		opts=log_path=$log/report
		if [ "$san" = asan ] && ! ASAN_OPTIONS=$opts \
		   "$top/build/asan/ksft-perfmon-report" --help > /dev/null; then
			echo "# LeakSanitizer cannot run here: leaks not checked"
			cat "$log"/*
			rm -f "$log"/*
			opts=$opts:detect_leaks=0
		fi
		echo "# $san"
		KPM_TOOLS=$top/build/$san KPM_SANITIZED=1 ASAN_OPTIONS=$opts \
			UBSAN_OPTIONS=$opts:print_stacktrace=1 \
			timeout 1800 /usr/bin/python3 "$1" | grep -v '^ok '
		[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
		if [ -n "$(ls -A "$log")" ]; then
			cat "$log"/* | head -200
			rc=1
		fi
	done
	return $rc
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
	run_ktap replay /usr/bin/python3 selftests/host/replay_test.py
	run_ktap link /usr/bin/python3 selftests/host/link_test.py
	# no sanitized test on the tools of an earlier build
	if step sanitize.build make -s tools-sanitized; then
		step sanitize.report_test sanitized selftests/host/report_test.py
		step sanitize.replay_test sanitized selftests/host/replay_test.py
		step sanitize.link_test sanitized selftests/host/link_test.py
	fi
	step fuzz.samples_libfuzzer_60s fuzz_samples
	# Documentation/ with Sphinx, warnings being errors; make install into a
	# DESTDIR, its man pages and completion checked against --help; DKMS
	step docs.sphinx_html_and_man make -s docs
	run_ktap packaging /usr/bin/python3 selftests/host/packaging_test.py
	step dkms.build_against_debian_6.12 scripts/dkms-test.sh
	timeline "host-side steps: $((SECONDS - t0)) s"
}

# the benchmarks still run (one 2-vCPU guest, short): numbers not checked
bench_smoke() {
	local t0=$SECONDS

	step bench.smoke scripts/bench.sh --smoke build/bench-smoke
	timeline "bench.smoke: $((SECONDS - t0)) s"
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
		${KPM_FUZZ_SEED:+"KPM_FUZZ_SEED=$KPM_FUZZ_SEED"} \
		${KPM_RFC_PATCHES:+"KPM_RFC_PATCHES=$KPM_RFC_PATCHES"} \
		"$@" | tee "$log"
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
			echo "$own: $line" >> "$T/$job.reports"
		done < <(tr -d '\r' < "$log" |
			 grep -E -A3 '^vm(-guest|\.sh): ' | head -n 8)
	fi
	up=$(sed -n 's/^.*KPM-VM: guest up at \([0-9.]*\) s.*$/\1/p' "$log" | tail -n1)
	cpu=$(sed -n 's/^KPM-VM: host CPU \([0-9]*\) s$/\1/p' "$log" | tail -n1)
	timeline "$own: guest $((SECONDS - t0)) s, host CPU ${cpu:-?} s (/init at ${up:-?} s of its uptime)"
	# its steps of 20 s or more, slowest first, with the time its vCPUs
	# were busy
	while read -r name secs busy; do
		timeline "$own:   $name $secs s, vCPUs busy ${busy:-?} s"
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
	timeline "$k: kernel $((t1 - t0)) s, module and sparse $((SECONDS - t1)) s"
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
# 1 kHz, busy less than half the time
guest_minute() {	# NAME
	guest "$1" "$1/minute" --smp "${KPM_SMP:-4}" -- \
		selftests/guest.sh --suite minute "build/$1/ksft_perfmon.ko"
}

# its fifth, the same way, on three vCPUs: a sample's clocks, the last
# vCPU kept busy, where the kernel accounts its time exactly (NO_HZ_FULL,
# which Debian's kernels have)
guest_clock() {	# NAME
	guest "$1" "$1/clock" --smp 3 --append "nohz_full=1-2 isolcpus=1-2" -- \
		selftests/guest.sh --suite clock "build/$1/ksft_perfmon.ko"
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

# One job of selftests/jobs.mk. A guest's kernel was set up by its
# setup job, which left the environment of guest() in build/test/K.env;
# the setup's own environment (the kernel's selftest library, sparse)
# comes from make's.
run_job() {	# JOB
	local what=${1#*/} k=${1%%/*}

	job=$1
	: > "$T/$job.results"
	case "$job" in
	host) host_side ;;
	bench) bench_smoke ;;
	*/setup)
		kernel_setup "$k" && printf '%s\n' "$env" > "$T/$k.env"
		;;
	*)
		if ! [ -f "$T/$k.env" ]; then
			echo "== $job: not run, $k was not set up"
			return
		fi
		eval "$(cat "$T/$k.env")"
		ksft_src=${KPM_KSFT_SRC:-}
		ksft=${ksft_src:+$ksft_src/tools/testing/selftests}
		"guest_$what" "$k"
		;;
	esac
}

if [ "${1:-}" = job ] && [ $# -eq 2 ]; then
	run_job "$2"
	exit 0
elif [ $# -ne 0 ]; then
	echo "usage: run.sh [job JOB]" >&2
	exit 2
fi

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
if [ -n "${KPM_RFC_PATCHES:-}" ]; then
	for p in 0001 0002 0003 0004; do
		[ -f "$KPM_RFC_PATCHES/$p.patch" ] || {
			echo "run.sh: KPM_RFC_PATCHES: no $p.patch in '$KPM_RFC_PATCHES'" >&2
			exit 2
		}
	done
	KPM_RFC_PATCHES=$(cd "$KPM_RFC_PATCHES" && pwd)
	export KPM_RFC_PATCHES
fi
echo "kernels: $kernels"
rm -rf "$T"
mkdir -p "$T"
t0=$SECONDS

step build.tools make -s tools selftests
# the kernel's driver selftest library that PerfMonitor is tested in:
# 7.3's, from the source package the debug kernel is built from
ksft_lib() {
	local ksft

	KPM_KSFT_SRC=$(scripts/debug-kernel.sh source) || return 1
	export KPM_KSFT_SRC
	ksft=$KPM_KSFT_SRC/tools/testing/selftests
	[ -f "$ksft/drivers/net/lib/py/env.py" ] ||
		{ unset KPM_KSFT_SRC; return 1; }
}
step setup.driver_selftest_library ksft_lib
# every kernel's setup runs sparse (kbuild.sh --sparse): fetch and build
# it once
sparse_once() {
	KPM_SPARSE=$(scripts/sparse.sh) && export KPM_SPARSE
}
step setup.sparse sparse_once
timeline "setup: $((SECONDS - t0)) s"

# The jobs, two at a time, with make's environment their own (not that
# of a make test run with -j or -w), in a process group of their own
# that a stopped run stops whole. A job's output comes when it ends;
# the line that says it started comes at once, on fd 9.
jobs_make() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -f selftests/jobs.mk --no-print-directory \
		KERNELS="$kernels" "$@" < /dev/null
}
read -ra joblist <<< "setup $(jobs_make -s list)"
exec 9>&1
set -m
jobs_make -j2 -k --output-sync=target &
jobs_pid=$!
set +m
trap 'kill -TERM -- -"$jobs_pid" 2> /dev/null; exit 130' INT TERM HUP
wait "$jobs_pid"
jobs_rc=$?
trap - INT TERM HUP
exec 9>&-

# every job's results, times and reports, in the order of the list
cat_all() {	# SUFFIX
	local j

	for j in "${joblist[@]}"; do
		[ -f "$T/$j.$1" ] && cat "$T/$j.$1"
	done
}
pass=$(cat_all results | grep -c '^pass ')
fail=$(cat_all results | grep -c '^fail ')
skip=$(cat_all results | grep -c '^skip ')
mapfile -t failed < <(cat_all results | sed -n 's/^fail //p')
mapfile -t times < <(cat_all times)
mapfile -t reports < <(cat_all reports)
# a skip is known as one: a test that passed and now skips is not
mapfile -t seen < <(cat_all results | sed 's/^skip \(.*\)$/\1 # SKIP/; s/^[a-z]* //')
times+=("total: $SECONDS s")
# a recipe fails only when run.sh job could not record the job (a full
# disk): make goes on with the jobs that do not wait for it, and the
# results of those that do are missing
if [ "$jobs_rc" -ne 0 ]; then
	echo "fail: selftests/jobs.mk: make exited $jobs_rc"
	fail=$((fail + 1))
	failed+=("selftests/jobs.mk: make exited $jobs_rc")
fi

# A result that never came is a failure, and so is one that the list does
# not know: a step that did not run, or a test renamed, changes the count
# only through selftests/expected-results. A line KERNEL,KERNEL.../NAME
# stands for KERNEL/NAME of each of those kernels that ran, */NAME for
# every kernel's; "NAME # SKIP" is a result that must skip. "NAME # RFC"
# is a result only where the RFC's patches are given, "NAME # RFC, else
# SKIP" one that skips where they are not.
expected() {
	awk -v ran=" $(echo $kernels) " -v known=" $(echo $known) " \
		-v rfc="${KPM_RFC_PATCHES:+1}" '
		/^(#|$)/ { next }
		/ # RFC, else SKIP$/ { sub(/ # RFC, else SKIP$/, rfc ? "" : " # SKIP") }
		/ # RFC$/ { if (!rfc) next; sub(/ # RFC$/, "") }
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
	$'\t'*) line="not in selftests/expected-results: ${line#?}" ;;
	*) line="missing: $line" ;;
	esac
	echo "fail: $line"
	fail=$((fail + 1))
	failed+=("$line")
done < <(LC_ALL=C comm -3 <(expected) <(printf '%s\n' "${seen[@]}" | LC_ALL=C sort))

echo
printf 'time: %s\n' "${times[@]}"
echo
[ ${#reports[@]} -eq 0 ] || printf 'kernel: %s\n' "${reports[@]}"
[ ${#failed[@]} -eq 0 ] || printf 'failed: %s\n' "${failed[@]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
