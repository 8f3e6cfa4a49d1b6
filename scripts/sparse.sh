#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the path of a sparse that the kernels of the matrix accept. 7.3's
# checker-valid.sh wants __typeof_unqual__, which bookworm's sparse 0.6.4
# lacks (Kbuild then skips the check with only a warning); the package in
# sid is newer but built for a newer libc. So build sid's source once,
# without its optional libraries; it takes a few seconds.

set -euo pipefail
# already found by the caller (run.sh, whose jobs would fetch it at once)
if [ -n "${KPM_SPARSE:-}" ] && [ -x "$KPM_SPARSE" ]; then
	echo "$KPM_SPARSE"
	exit 0
fi

src=$("$(dirname "$0")/fetch.sh" source sparse sid)
if [ ! -x "$src/sparse" ]; then
	echo "sparse.sh: building $(basename "$src")" >&2
	make -C "$src" -j"$(nproc)" HAVE_LIBXML=no HAVE_SQLITE=no \
		HAVE_GTK=no HAVE_LLVM=no sparse > "$src/build.log" 2>&1 ||
		{ cat "$src/build.log" >&2; exit 1; }
fi
echo "$src/sparse"
