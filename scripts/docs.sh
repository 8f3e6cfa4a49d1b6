#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make docs: Documentation/ as HTML and the two manual pages, with
# Debian's Sphinx, warnings being errors. The netlink reference is
# generated from the spec by the kernel's ynl-gen-rst.py, and the entry
# points' kernel-doc is read with the kernel's kernel-doc, both from
# linux-source-6.12 (scripts/kernel.sh source).
#
# usage: docs.sh [OUTDIR]   (default build/docs: html/, man/)

set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$top/build/docs}")
ksrc=$("$top/scripts/kernel.sh" source)

rm -rf "$out"
mkdir -p "$out/src"
cp -r "$top/Documentation/." "$out/src/"
/usr/bin/python3 "$ksrc/tools/net/ynl/ynl-gen-rst.py" \
	-i "$top/Documentation/netlink/specs/ksft_perfmon.yaml" \
	-o "$out/src/netlink/specs/ksft_perfmon.rst"

export KPM_KSRC=$ksrc KPM_TREE=$top
for b in html man; do
	/usr/bin/sphinx-build -W --keep-going -q -b "$b" -d "$out/doctrees" \
		"$out/src" "$out/$b"
done
echo "docs.sh: $out/html/index.html, $out/man/ksft-perfmon-nl.8, $out/man/ksft-perfmon-report.1"
