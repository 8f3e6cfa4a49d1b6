#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two endpoints in two network namespaces joined by veth. ksft-perfmon-nl
# records on both (--host local / remote) while iperf3 runs between them
# and a known number of frames is sent into the downed remote end. Both
# outputs must follow the metric format and show the traffic. With
# KPM_E2E_OUT, the run stays there, and two_hosts.ktap in it is the run as
# a test would print it: one case, both hosts' lines and iperf3's
# throughput, its result this test's.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tool=$top/tools/ksft-perfmon-nl
out=${KPM_E2E_OUT:-$(mktemp -d)}
mkdir -p "$out" || exit 1
L=kpm-local R=kpm-remote
DROPS=50
fail=0
raws=()

cleanup() {
	ip netns del $L 2>/dev/null
	ip netns del $R 2>/dev/null
	[ -n "${srv:-}" ] && kill "$srv" 2>/dev/null
}
trap cleanup EXIT

ip netns add $L && ip netns add $R || exit 1
ip -n $L link add va type veth peer name vb netns $R
for ns in $L $R; do
	ip netns exec $ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n $ns link set lo up
done
ip -n $L addr add 192.0.2.1/24 dev va && ip -n $L link set va up
ip -n $R addr add 192.0.2.2/24 dev vb && ip -n $R link set vb up

ip netns exec $R iperf3 -s -1 >/dev/null 2>&1 &
srv=$!
sleep 0.5

# one time base for both hosts, as a test's case start would be
base=$(python3 -c 'import time; print(time.monotonic_ns())')

ip netns exec $R "$tool" record --ifname vb --interval 100 --host remote \
	--time-base "$base" --duration 6 > "$out/remote.ktap" &
remote=$!
# beside each, the kernel's raw values, which record's lines clamp
for h in $L $R; do
	ip netns exec $h "$tool" record --raw --interval 100 --duration 6 \
		> "$out/$h.raw" &
	raws+=($!)
done

# the workload of the local endpoint: traffic, then frames into a downed peer
workload() {
	python3 -c 'import time; print(time.monotonic_ns())' > "$out/iperf3.t0"
	iperf3 -c 192.0.2.2 -t 3 -i 0.5 -J > "$out/iperf3.json" || return 1
	ip -n $R link set vb down
	python3 - "$DROPS" <<'PY' || return 1
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("va", 0))
frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + bytes(46)
for _ in range(int(sys.argv[1])):
    s.send(frame)
PY
	sleep 0.3
	ip -n $R link set vb up
}
export -f workload
export R DROPS out
ip netns exec $L "$tool" record --ifname va --interval 100 --host local \
	--time-base "$base" -- bash -c workload > "$out/local.ktap"
rc=$?
echo "# local record exited $rc"
# 0: the workload succeeded and no sample was lost, on either host
[ "$rc" -eq 0 ] || fail=1
wait $remote
rc=$?
echo "# remote record exited $rc"
[ "$rc" -eq 0 ] || fail=1
for p in "${raws[@]}"; do
	wait "$p" || { echo "# a raw record exited $?"; fail=1; }
done

cpus=$(python3 -c 'import os; print(int(open("/sys/devices/system/cpu/possible").read().split("-")[-1]) + 1)')
echo "# local: $(wc -l < "$out/local.ktap") lines, remote: $(wc -l < "$out/remote.ktap") lines"
metrics=$top/selftests/lib/py/ktap_metrics.py
python3 "$metrics" "$out/local.ktap" --host local \
	--cpus "$cpus" --last nic.tx.dropped=$DROPS --busy 0.2 --max-time 30 \
	--raw "$out/$L.raw" || fail=1
python3 "$metrics" "$out/remote.ktap" --host remote \
	--cpus "$cpus" --last nic.tx.dropped=0 --busy 0.2 --max-time 30 \
	--raw "$out/$R.raw" || fail=1

# The case as a test prints it: the policies once each, then the lines of
# both hosts and the test's own measurement, iperf3's throughput each half
# second (from the time iperf3 was started: its connection's setup is in it)
python3 - "$out/iperf3.json" "$(cat "$out/iperf3.t0")" "$base" \
	> "$out/throughput.ktap" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
t0 = (int(sys.argv[2]) - int(sys.argv[3])) / 1e9
print('# ktap-metric-policy-json: ' + json.dumps(
    {'display_label': 'Gbit/s', 'name': 'throughput',
     'summarize': 'distribution'}, separators=(',', ':'), sort_keys=True))
for i in d['intervals']:
    s = i['sum']
    print('# ktap-metric-json: ' + json.dumps(
        {'host': 'local', 'name': 'throughput', 'shape': 'scalar',
         'time': round(t0 + s['end'], 6),
         'value': s['bits_per_second'] / 1e9},
        separators=(',', ':'), sort_keys=True))
PY
parts=("$out/throughput.ktap" "$out/local.ktap" "$out/remote.ktap")
{
	echo "TAP version 13"
	echo "1..1"
	grep -h '^# ktap-metric-policy-json: ' "${parts[@]}" | awk '!seen[$0]++'
	grep -hv '^# ktap-metric-policy-json: ' "${parts[@]}"
	[ "$fail" -eq 0 ] && echo "ok 1 two_hosts" || echo "not ok 1 two_hosts"
} > "$out/two_hosts.ktap"
exit $fail
