#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: load the module, run bench/guest_bench.py, unload.
# usage: guest.sh MODULE [--smoke] [MEASUREMENT...]
cd "$(dirname "$0")/.." || exit 1
insmod "$1" || exit 1
shift
python3 bench/guest_bench.py "$@"
rc=$?
rmmod ksft_perfmon
exit $rc
