#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch a package, or a source package, from a newer Debian suite than the
# machine's, with apt-get under a private apt state directory
# ($KPM_CACHE/apt-SUITE): the machine's apt configuration is not touched,
# and its mirror (or proxy) is used: the URI its apt sources give its own
# release's main component from, by its codename or as stable.
# apt checks the suite's signature with Debian's archive keyring and the
# files' hashes. What was fetched once is used as is; KPM_REFRESH=1 looks
# for a newer version. Prints the .deb, or the unpacked source directory.
#
# usage: fetch.sh deb|source PACKAGE SUITE

set -euo pipefail

[ $# -eq 3 ] || { sed -n 's/^# usage: //p' "$0" >&2; exit 2; }
kind=$1 pkg=$2 suite=$3
cache=${KPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ksft_perfmon}
dir=$cache/apt-$suite
out=$dir/$kind

case "$kind" in
deb) found() { ls "$out/${pkg}_"*.deb 2>/dev/null | sort -V | tail -n1 || true; } ;;
source) found() { ls -d "$out/$pkg"-*/ 2>/dev/null | sort -V | tail -n1 | sed "s|/$||" || true; } ;;
*) sed -n 's/^# usage: //p' "$0" >&2; exit 2 ;;
esac

have=$(found)
if [ -n "$have" ] && [ -z "${KPM_REFRESH:-}" ]; then
	echo "$have"
	exit 0
fi

release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' \
	"Identifier: Packages" | awk -v r="$release" \
	'($2 == r || $2 == "stable") && $3 == "main" { print $1; exit }')
if [ -z "$uri" ]; then
	echo "fetch.sh: no apt source gives ${release:-this release} main: see apt-get indextargets" >&2
	exit 1
fi
mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/none" "$out"
mirror="[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main"
printf 'deb %s\ndeb-src %s\n' "$mirror" "$mirror" > "$dir/sources.list"
opts=(-q -o "Dir::Etc::sourcelist=$dir/sources.list"
      -o "Dir::Etc::sourceparts=$dir/none" -o "Dir::Etc::preferencesparts=$dir/none"
      -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
      -o "APT::Sandbox::User=root")
echo "fetch: $pkg from $suite" >&2
apt-get "${opts[@]}" update >&2
cd "$out"
case "$kind" in
deb) apt-get "${opts[@]}" download "$pkg" >&2 ;;
source)
	# unpacked by hand: dpkg-source would want dpkg-dev
	rm -rf "$out/tmp" && mkdir "$out/tmp" && cd "$out/tmp"
	apt-get "${opts[@]}" source --download-only "$pkg" >&2
	ver=$(sed -n 's/^Version: \(.*\)$/\1/p' ./*.dsc | head -n1)
	mkdir -p "$out/$pkg-$ver"
	tar -xf ./*.orig.tar.* -C "$out/$pkg-$ver" --strip-components=1
	cd "$out" && rm -rf "$out/tmp" ;;
esac
found
