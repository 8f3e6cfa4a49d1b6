#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug kernel of the test matrix: mainline 7.3 from Debian's
# linux-source-7.3 (trixie-backports), configured as allnoconfig +
# kvm_guest.config + kernel/guest.config + kernel/debug.config, and built
# once per source version and config hash, outside the tree:
#
#   $KPM_CACHE/linux-<version>/          the unpacked source
#   $KPM_CACHE/build-<version>-<hash>/   the build tree (KDIR for M=)
#
# scripts/fetch.sh downloads the package under a private apt state
# directory, leaving the machine's apt configuration untouched; once it is
# cached it is used as is (KPM_REFRESH=1 looks for a newer one).
#
#   debug-kernel.sh build    fetch, unpack, configure and build if needed;
#                            prints the build tree
#   debug-kernel.sh source   the unpacked source (fetches it if needed)

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${KPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ksft_perfmon}
log() { echo "debug-kernel: $*" >&2; }

# the unpacked source, keyed by the package version
source_dir() {
	local deb ver dir tmp
	deb=$("$top/scripts/fetch.sh" deb linux-source-7.3 trixie-backports)
	ver=$(dpkg-deb -f "$deb" Version)
	dir="$cache/linux-$ver"
	if [ ! -f "$dir/.done" ]; then
		log "unpacking $(basename "$deb")"
		rm -rf "$dir"
		tmp=$(mktemp -d "$cache/deb.XXXXXX")
		dpkg-deb -x "$deb" "$tmp"
		mkdir -p "$dir"
		tar -xJf "$tmp/usr/src/linux-source-7.3.tar.xz" -C "$dir" --strip-components=1
		rm -rf "$tmp"
		touch "$dir/.done"
	fi
	echo "$dir"
}

fragments=("$top/kernel/guest.config" "$top/kernel/debug.config")
# the config the fragments go on (guest.config makes it 64-bit)
base="allnoconfig"
# what a fragment sets, as merge_config.sh reads it: a comment sets nothing
option='^(CONFIG_[A-Za-z0-9_]+=|# CONFIG_[A-Za-z0-9_]+ is not set$)'

build_dir_of() {	# SOURCE
	local hash
	# of the options alone: a comment changes no kernel
	hash=$({ echo "base: $base"; cat "${fragments[@]}" \
		"$1/kernel/configs/kvm_guest.config" | grep -E "$option"; } |
		sha256sum | cut -c1-12)
	echo "$cache/build-$(basename "$1" | sed 's/^linux-//')-$hash"
}

build() {
	local src out jobs opt
	src=$(source_dir)
	out=$(build_dir_of "$src")
	if [ -f "$out/.done" ]; then
		log "cached: $out"
		echo "$out"
		return
	fi
	jobs=$(nproc)
	log "building $out with $jobs jobs (8 to 30 minutes on 2 cores)"
	rm -rf "$out"
	mkdir -p "$out"
	make -s -C "$src" O="$out" $base >&2
	# merge_config.sh lists every option a fragment overrides: keep it
	(cd "$src" && scripts/kconfig/merge_config.sh -m -O "$out" \
		"$out/.config" kernel/configs/kvm_guest.config \
		"${fragments[@]}") > "$out/merge_config.log"
	make -s -C "$src" O="$out" olddefconfig >&2
	# every option that the fragments set must have survived olddefconfig
	while IFS= read -r opt; do
		case "$opt" in
		"# CONFIG_"*" is not set") opt=${opt#"# "}
			! grep -q "^${opt%" is not set"}=" "$out/.config" ;;
		CONFIG_*=n) grep -qx "# ${opt%=n} is not set" "$out/.config" ||
			! grep -q "^${opt%=n}=" "$out/.config" ;;
		CONFIG_*) grep -qx "$opt" "$out/.config" ;;
		*) true ;;
		esac || { log "$opt did not survive olddefconfig"; exit 1; }
	done < <(cat "${fragments[@]}")
	# progress: a line a minute, and whatever is not a build step
	local start=$SECONDS
	make -C "$src" O="$out" -j"$jobs" bzImage modules 2>&1 |
		awk -v t0="$(date +%s)" '
			/^  [A-Z0-9_]+ +(\[M\] +)?[^ ]+$/ { n++ } !/^  [A-Z]/ { print }
			systime() - last >= 60 { last = systime(); printf \
			  "debug-kernel: %d min, %d files\n", (last - t0) / 60, n;
			  fflush() }' >&2
	[ "${PIPESTATUS[0]}" -eq 0 ] || { log "build failed"; exit 1; }
	make -s -C "$src" O="$out" INSTALL_MOD_PATH="$out/mods" \
		INSTALL_MOD_STRIP=1 modules_install >&2
	log "built in $((SECONDS - start)) s"
	touch "$out/.done"
	echo "$out"
}

case "${1:-}" in
build) build ;;
source) source_dir ;;
*) echo "usage: debug-kernel.sh build|source" >&2; exit 2 ;;
esac
