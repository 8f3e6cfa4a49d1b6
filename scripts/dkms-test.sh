#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms add and build of this tree's dkms.conf against a kernel's headers
# (default: Debian's 6.12), in a DKMS tree of its own: the machine's
# modules and /usr/src are not touched (DKMS does make its signing key in
# /var/lib/dkms when there is none, as any dkms build would). The module
# must come out built for that kernel.
#
# usage: dkms-test.sh [KVER]

set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:-$("$top/scripts/kernel.sh" version)}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
tmp=$(mktemp -d)
mkdir -p "$tmp/tree" "$tmp/inst"
trap 'rm -rf "$tmp"' EXIT

# the module's sources as a release would ship them, not build output
src=$tmp/src/ksft_perfmon-$ver
mkdir -p "$src"
git -C "$top" ls-files -z -co --exclude-standard dkms.conf Kbuild kmod uapi |
	(cd "$top" && xargs -0 cp --parents -t "$src")
dkms=(dkms --dkmstree "$tmp/tree" --sourcetree "$tmp/src"
      --installtree "$tmp/inst")
"${dkms[@]}" add -m ksft_perfmon -v "$ver"
"${dkms[@]}" build -m ksft_perfmon -v "$ver" -k "$kver"
ko=$(find "$tmp/tree/ksft_perfmon/$ver/$kver" -name 'ksft_perfmon.ko*' | head -n1)
[ -n "$ko" ] || { echo "dkms-test.sh: no module built" >&2; exit 1; }
case "$ko" in
*.xz) xz -dc "$ko" > "$tmp/m.ko" ;;
*.zst) zstd -qdc "$ko" > "$tmp/m.ko" ;;
*) cp "$ko" "$tmp/m.ko" ;;
esac
magic=$(modinfo -F vermagic "$tmp/m.ko")
echo "dkms-test.sh: ${ko#"$tmp/tree/"}: vermagic $magic"
[ "${magic%% *}" = "$kver" ]
