#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where things of the Debian 6.12 kernel are on this machine.
#   kernel.sh version    the newest 6.12 image that has its headers
#   kernel.sh source     the unpacked parts of linux-source-6.12 (cached)
#   kernel.sh selftests  the kselftest directory in there

set -euo pipefail

cache=${KPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ksft_perfmon}

version() {
	local v
	for v in $(ls /boot/vmlinuz-6.12.*-amd64 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -Vr); do
		if [ -d "/usr/src/linux-headers-$v" ] && [ -d "/lib/modules/$v/kernel" ]; then
			echo "$v"
			return
		fi
	done
	echo "kernel.sh: no Debian 6.12 kernel with headers; run scripts/deps.sh" >&2
	exit 1
}

# The parts of the kernel source the build and tests use, unpacked once
# per source version.
source_dir() {
	local tarball=/usr/src/linux-source-6.12.tar.xz
	local ver dir
	[ -f "$tarball" ] || { echo "kernel.sh: $tarball missing; run scripts/deps.sh" >&2; exit 1; }
	ver=$(dpkg-query -W -f '${Version}' linux-source-6.12)
	dir="$cache/src-$ver"
	if [ ! -f "$dir/.done" ]; then
		rm -rf "$dir"
		mkdir -p "$dir"
		tar -xJf "$tarball" -C "$dir" --strip-components=1 --wildcards \
			'linux-source-6.12/tools/net/ynl/*' \
			'linux-source-6.12/Documentation/netlink/*' \
			'linux-source-6.12/scripts/checkpatch.pl' \
			'linux-source-6.12/scripts/spelling.txt' \
			'linux-source-6.12/scripts/const_structs.checkpatch' \
			'linux-source-6.12/tools/testing/selftests/kselftest*'
		touch "$dir/.done"
	fi
	echo "$dir"
}

case "${1:-}" in
version) version ;;
source) source_dir ;;
selftests) echo "$(source_dir)/tools/testing/selftests" ;;
*) echo "usage: kernel.sh version|source|selftests" >&2; exit 2 ;;
esac
