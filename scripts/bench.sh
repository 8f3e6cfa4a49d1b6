#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: the benchmarks of bench/, each in a guest of Debian's 6.12
# kernel under QEMU (cyclictest's in one of its PREEMPT_RT kernel), then
# one table per measurement with the ratios (bench/report.py), the raw
# results as CSV and plots as SVG in OUTDIR.
#
# usage: bench.sh [--smoke] [--cpus "1 2 4 8 16 32 64"] [--only "busy rt"] [OUTDIR]
#   --smoke   one 2-vCPU guest and short runs: that the benchmarks work
#             (make test runs this), not numbers to quote
#   --only    these measurements of bench/guest_bench.py alone, at every
#             size (rt: the PREEMPT_RT guest)

set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
smoke= cpus="1 2 4 8 16 32 64" failed= only=
while [ $# -gt 0 ]; do
	case "$1" in
	--smoke) smoke=--smoke; cpus=2; shift ;;
	--cpus) cpus=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	-*) sed -n 's/^# usage: //p' "$0" >&2; exit 2 ;;
	*) break ;;
	esac
done
out=${1:-build/bench}
mkdir -p "$out"
eval "$(scripts/kernel.sh env 6.12-rt)"
rt_image=$image rt_modules=$modules
scripts/kbuild.sh "$kdir" bench-6.12-rt > /dev/null
eval "$(scripts/kernel.sh env 6.12)"
make -s tools bench/fmt_bench bench/u2_sampler bench/spin
# a build of its own, apart from make test's
scripts/kbuild.sh "$kdir" bench-6.12 > /dev/null
# and the perturbation's floor (bench/floor), out of the source tree
mkdir -p build/bench-floor
cp bench/floor/Kbuild bench/floor/kpm_floor.c build/bench-floor/
make -s -C "$kdir" M="$top/build/bench-floor" W=1 modules > /dev/null

raw=$out/raw.txt
: > "$raw"
{
	echo "machine: $(nproc) CPUs, $(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -n1)"
	echo "host kernel: $(uname -r); guest kernel: $kver under QEMU TCG"
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit: $(git rev-parse --short HEAD 2>/dev/null || echo -)"
} > "$out/machine.txt"
cat "$out/machine.txt"
for n in $cpus; do
	# cost and formatting at every size; the rest where it says most:
	# perturbation with one CPU to share, timers and scale with four
	what="cost busy format"
	[ "$n" = 1 ] && what="$what perturb"
	[ "$n" = 4 ] && what="$what timer scale"
	[ -n "$smoke" ] && what="cost busy format timer perturb scale"
	[ -n "$only" ] && what=$(echo " $only " | sed 's/ rt / /g')
	[ -n "${what// /}" ] || continue
	echo "bench.sh: guest with $n vCPUs: $what" >&2
	# the guest's memory grows with its CPUs (per-CPU areas)
	# one guest that fails (a 64-vCPU TCG guest once took an int3 oops
	# in early boot, twice) leaves its rows out, not the others
	if ! scripts/vm.sh --kernel "$image" --modules "$modules" --smp "$n" \
		--mem $((2048 + 64 * n)) --timeout 1800 \
		-- bench/guest.sh "build/bench-6.12/ksft_perfmon.ko" $smoke $what |
		tee -a "$raw" | sed -n 's/^KPM-BENCH: /bench.sh: /p' >&2; then
		echo "bench.sh: the guest with $n vCPUs failed; its rows are missing" >&2
		failed="$failed $n"
	fi
done
# the latency of a PREEMPT_RT kernel's real-time threads, beside the
# sampler: two vCPUs, the soft timer's thread on one of them
if [ -z "$only" ] || [[ " $only " == *" rt "* ]]; then
	echo "bench.sh: PREEMPT_RT guest with 2 vCPUs: rt" >&2
	if ! scripts/vm.sh --kernel "$rt_image" --modules "$rt_modules" \
		--smp 2 --mem 2048 --timeout 1800 \
		-- bench/guest.sh "build/bench-6.12-rt/ksft_perfmon.ko" $smoke rt |
		tee -a "$raw" | sed -n 's/^KPM-BENCH: /bench.sh: /p' >&2; then
		echo "bench.sh: the PREEMPT_RT guest failed; its rows are missing" >&2
		failed="$failed rt"
	fi
fi
python3 bench/report.py "$raw" "$out"
[ -z "$failed" ] || { echo "bench.sh: failed guests:$failed" >&2; exit 1; }
