#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernels of the test matrix and where their parts are on this machine.
#   kernel.sh list        the default matrix: 6.12 6.12-rt 7.3-debug
#   kernel.sh env NAME    shell assignments for one of them: kver, image,
#                         modules (the guest's module tree), kdir (to build
#                         the module against), mem and timeout for QEMU;
#                         builds the debug kernel if it is not cached
#   kernel.sh version     the newest Debian 6.12 image that has its headers
#   kernel.sh source      the unpacked parts of linux-source-6.12 (cached)
#   kernel.sh selftests   the kselftest directory in there

set -euo pipefail

cache=${KPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ksft_perfmon}

matrix="6.12 6.12-rt 7.3-debug"

version() {	# [FLAVOUR]: "" for the generic kernel, "rt" for PREEMPT_RT
	local flavour=${1:+$1-} v
	for v in $(ls /boot/vmlinuz-6.12.*-amd64 2>/dev/null |
		   sed -n "s|^/boot/vmlinuz-\(6\.12\.[0-9]*+deb[0-9]*-${flavour}amd64\)$|\1|p" |
		   sort -Vr); do
		if [ -d "/usr/src/linux-headers-$v" ] && [ -d "/lib/modules/$v/kernel" ]; then
			echo "$v"
			return
		fi
	done
	echo "kernel.sh: no Debian 6.12 ${flavour}kernel with headers; run scripts/deps.sh" >&2
	exit 1
}

# a Debian kernel: its image, modules and headers
debian_env() {	# FLAVOUR MEM TIMEOUT
	local v
	v=$(version "$1")
	echo "kver=$v image=/boot/vmlinuz-$v modules=/lib/modules/$v"
	echo "kdir=/usr/src/linux-headers-$v mem=$2 timeout=$3"
}

# KASAN and lockdep slow the guest down several times, and KASAN's shadow
# takes an eighth of the memory: the debug kernel's guests get 4 GiB and an
# hour. (Its boot no longer spends a minute in the ACPI interpreter's loop
# timeout on i440fx's _PRT: vm.sh boots q35, whose _PRT is a package.)
kernel_env() {	# NAME
	local dir rel
	case "$1" in
	6.12) debian_env "" 2048 900 ;;
	6.12-rt) debian_env rt 2048 900 ;;
	7.3-debug)
		dir=$("$(dirname "$0")/debug-kernel.sh" build)
		rel=$(cat "$dir/include/config/kernel.release")
		echo "kver=$rel image=$dir/arch/x86/boot/bzImage"
		echo "modules=$dir/mods/lib/modules/$rel"
		echo "kdir=$dir mem=4096 timeout=3600" ;;
	*) echo "kernel.sh: unknown kernel '$1' (known: $matrix)" >&2; exit 2 ;;
	esac
}

# The parts of the kernel source the build and tests use, unpacked once
# per source version.
source_dir() {
	local tarball=/usr/src/linux-source-6.12.tar.xz
	local ver dir
	[ -f "$tarball" ] || { echo "kernel.sh: $tarball missing; run scripts/deps.sh" >&2; exit 1; }
	local parts=('tools/net/ynl/*' 'Documentation/netlink/*'
		     'Documentation/sphinx/*' 'scripts/kernel-doc'
		     'scripts/checkpatch.pl' 'scripts/spelling.txt'
		     'scripts/const_structs.checkpatch'
		     'tools/testing/selftests/kselftest*')
	ver=$(dpkg-query -W -f '${Version}' linux-source-6.12)
	# keyed by the parts too: a part added here is unpacked, not missed
	dir="$cache/src-$ver-$(echo "${parts[*]}" | sha256sum | cut -c1-8)"
	if [ ! -f "$dir/.done" ]; then
		rm -rf "$dir"
		mkdir -p "$dir"
		tar -xJf "$tarball" -C "$dir" --strip-components=1 --wildcards \
			"${parts[@]/#/linux-source-6.12/}"
		touch "$dir/.done"
	fi
	echo "$dir"
}

case "${1:-}" in
list) echo "$matrix" ;;
env) kernel_env "${2:-}" ;;
version) version ;;
source) source_dir ;;
selftests) echo "$(source_dir)/tools/testing/selftests" ;;
*) echo "usage: kernel.sh list|env NAME|version|source|selftests" >&2; exit 2 ;;
esac
