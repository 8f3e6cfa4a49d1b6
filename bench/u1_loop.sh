#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# U1 of the benchmarks, the first proposal's way: each interval a shell
# loop forks "cat /proc/stat" and reads three sysfs counters, and a
# Python process parses that and writes the JSON lines with json.dumps.
#
# usage: u1_loop.sh INTERVAL_S COUNT IFNAME   (lines go to stdout)

interval=$1 count=$2 ifname=$3
stats=/sys/class/net/$ifname/statistics
for ((i = 0; i < count; i++)); do
	cat /proc/stat
	for c in rx_dropped rx_missed_errors tx_dropped; do
		echo "$c $(cat "$stats/$c")"
	done
	echo --
	sleep "$interval"
done | python3 "$(dirname "$0")/kpm_format.py" proc "$ifname"
