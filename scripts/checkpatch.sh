#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict (Debian's linux-source-6.12) over our kernel C,
# the benchmarks' module (bench/floor) and the tests' (selftests/modules/)
# too. The generated files keep the generator's style, as in the kernel
# tree. compat.h exists to test LINUX_VERSION_CODE, which checkpatch warns
# about (and mistakes for a constant on the left of a comparison), as does
# the tests' module, built against every kernel; only there.

set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
src=$(scripts/kernel.sh source) || exit 1
cp="perl $src/scripts/checkpatch.pl --strict --no-tree --terse --show-types"
files=$(ls kmod/*.[ch] bench/floor/*.c selftests/modules/*/*.c |
	grep -v -e 'netlink-gen\.[ch]$' -e 'compat\.h$' \
		-e '^selftests/modules/lockhold/')
status=0
# shellcheck disable=SC2086
$cp -f $files || status=1
$cp --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f kmod/compat.h \
	selftests/modules/lockhold/*.c || status=1
exit $status
