#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole suite: host-side checks, then the module's tests in Debian's
# 6.12 kernel under QEMU. Ends with "N passed, N failed".
#
# Environment: KPM_KVM=1 uses KVM instead of TCG; KPM_SMP sets the guest's
# CPUs (default 2).

set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

pass=0 fail=0 skip=0
failed=()
result() {	# pass|fail|skip NAME
	case "$1" in
	pass) pass=$((pass + 1)) ;;
	skip) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)); failed+=("$2") ;;
	esac
	echo "$1: $2"
}
step() {	# NAME COMMAND...
	local name=$1
	shift
	echo "== $name"
	if "$@"; then result pass "$name"; else result fail "$name"; fi
}

kver=$(scripts/kernel.sh version) || exit 1
echo "kernel: $kver"

# W=1: any compiler warning fails
build_module() {
	local out
	out=$(make -s module 2>&1)
	local rc=$?
	echo "$out"
	[ "$rc" -eq 0 ] && ! grep -q "warning:" <<< "$out"
}
step build.module_w1_clean build_module
step build.tools make -s tools selftests
step check.generated_files_match_spec make -s check-generated
step check.checkpatch make -s checkpatch
step check.sparse make -s sparse

echo "== json"
out=$(mktemp)
/usr/bin/python3 selftests/json_repr_test.py > "$out"
json_rc=$?
cat "$out"
while read -r status name; do
	result "$status" "$name"
done < <(sed -n 's/^ok [0-9]* /pass /p; s/^not ok [0-9]* /fail /p' "$out")
# one that cannot start reports nothing
[ "$json_rc" -eq 0 ] && result pass json.exit_status || result fail json.exit_status
rm -f "$out"

echo "== guest: $kver"
log=$(mktemp)
scripts/vm.sh --kernel "/boot/vmlinuz-$kver" --modules "/lib/modules/$kver" \
	--smp "${KPM_SMP:-2}" ${KPM_KVM:+--kvm} -- selftests/guest.sh | tee "$log"
vm_rc=${PIPESTATUS[0]}
while read -r status name; do
	result "$status" "$name"
done < <(sed -n 's/^KPM-RESULT: \([a-z]*\) \(.*\)$/\1 \2/p' "$log")
# guest.sh always exits 0: anything else is a kernel report in dmesg
# (vm-guest.sh) or a guest that did not finish (vm.sh)
if [ "$vm_rc" -eq 0 ]; then
	result pass guest.kernel_log_clean
else
	result fail guest.kernel_log_clean
fi
rm -f "$log"

echo
[ ${#failed[@]} -eq 0 ] || printf 'failed: %s\n' "${failed[@]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
