#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest that vm.sh boots: runs the command, then fails the
# run when the kernel reported a problem: an oops, BUG, WARN, KASAN, UBSAN,
# lockdep, RCU or sleeping-in-atomic report, a kmemleak leak, or a taint
# other than the out-of-tree (O) and unsigned-module (E) ones.

"$@"
rc=$?

# O (4096) and E (8192) are expected for an out-of-tree module
taint=$(cat /proc/sys/kernel/tainted)
bad_taint=$((taint & ~(4096 | 8192)))
pattern='BUG:|WARNING:|Oops|general protection|KASAN|UBSAN|kernel BUG|'
pattern+='possible circular locking|possible recursive locking|'
pattern+='inconsistent lock state|suspicious RCU usage|'
pattern+='sleeping function called from invalid context|'
pattern+='unreferenced object|ODEBUG|Call Trace'
if dmesg | grep -Eq "$pattern" || [ "$bad_taint" -ne 0 ]; then
	echo "vm-guest: kernel problem (tainted=$taint):"
	dmesg | grep -E -A20 "$pattern" | head -n 80
	[ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
