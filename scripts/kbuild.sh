#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the module against one kernel's build tree, in a directory of its
# own (build/NAME), so that the kernels of the matrix do not share objects:
# Kbuild puts them next to the sources and 6.12 has no MO=. W=1, and any
# warning fails the build; --sparse runs sparse (scripts/sparse.sh) over
# every file (C=2: whether or not it needs compiling) too, and fails if
# Kbuild finds it unfit and skips it. With SRCDIR, the module there (a
# Kbuild and its .c files, such as selftests/modules/lockhold) instead.
#
# usage: kbuild.sh [--sparse] KDIR NAME [SRCDIR]

set -euo pipefail

sparse=()
if [ "${1:-}" = --sparse ]; then
	sparse=(C=2 CHECK="$("$(dirname "$0")/sparse.sh")")
	shift
fi
[ $# -eq 2 ] || [ $# -eq 3 ] || { sed -n 's/^# usage: //p' "$0" >&2; exit 2; }
kdir=$1
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/$2
src=${3:-}

mkdir -p "$out"
# refresh the copy; unchanged files keep their time, so rebuilds are
# incremental
if [ -n "$src" ]; then
	(cd "$top/$src" && tar -cf - Kbuild ./*.c)
else
	(cd "$top" && tar -cf - Kbuild kmod/*.[ch] uapi/linux/*.h)
fi | (cd "$out" && tar -xf - --keep-newer-files 2>/dev/null || true)
rm -f "$out"/*.ko
log=$(make -C "$kdir" M="$out" W=1 "${sparse[@]}" modules 2>&1) || {
	echo "$log"
	exit 1
}
echo "$log" | grep -v -E '^make(\[[0-9]+\])?: (Entering|Leaving)' || true
# "C=2 specified, but sparse is not available or not up to date" is a
# warning too
! echo "$log" | grep -q -E 'warning|error|specified, but'
