#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Generate the UAPI header and the kernel's policies and op table from the
# YNL spec with the kernel's own generator (Debian's linux-source-6.12).
#   regen.sh           write the generated files
#   regen.sh --check   fail when the committed files differ from the spec

set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
src=$(scripts/kernel.sh source)
gen="$src/tools/net/ynl/ynl-gen-c.py"
spec=Documentation/netlink/specs/ksft_perfmon.yaml

# the generator validates the spec against the schema two levels up
cp "$src/Documentation/netlink/genetlink.yaml" Documentation/netlink/

outputs=("uapi --header uapi/linux/ksft_perfmon.h"
	 "kernel --header kmod/netlink-gen.h"
	 "kernel --source kmod/netlink-gen.c")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for o in "${outputs[@]}"; do
	read -r mode kind file <<< "$o"
	# run from the top: the generator looks for MAINTAINERS to find it
	/usr/bin/python3 "$gen" --mode "$mode" "$kind" --spec "$spec" \
		-o "$tmp/$(basename "$file")"
	if [ "${1:-}" = --check ]; then
		if ! diff -u "$file" "$tmp/$(basename "$file")"; then
			echo "regen.sh: $file differs from what $spec generates; run make regen" >&2
			status=1
		fi
	else
		cp "$tmp/$(basename "$file")" "$file"
	fi
done
exit $status
