# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# KTAP's result lines, read in one place for the host (run.sh) and the
# guests (guest.sh). Sourced.

# ktap_results CALLBACK [PREFIX]: copies KTAP from stdin to stdout, and
# for each "ok N NAME", "not ok N NAME" and "ok N NAME # SKIP ..." calls
# CALLBACK pass|fail|skip PREFIXNAME, NAME being the word after N. A
# nested test's lines ("# ok ...") are not its results. Builtins only:
# on the debug kernel a fork and exec takes 0.2 s, and a guest has
# hundreds of results.
ktap_results() {	# CALLBACK [PREFIX]
	local callback=$1 prefix=${2:-} line status rest
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line"
		case "$line" in
		"ok "*"# SKIP"*) status=skip rest=${line#ok } ;;
		"ok "*) status=pass rest=${line#ok } ;;
		"not ok "*) status=fail rest=${line#not ok } ;;
		*) continue ;;
		esac
		case "$rest" in
		*" "*) rest=${rest#* } ;;
		*) continue ;;	# no name
		esac
		"$callback" "$status" "$prefix${rest%% *}"
	done
}
