#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ksft-perfmon-nl dump of a session of lo, against the kernel's own
files. The output is one JSON object a line, as json.dumps writes it with
sort_keys, with rising seqs whose gaps the session counts as lost (the
sampler overwrote them while the dump read the ring's oldest end), and
every netdev counter; and the values of the samples taken while the test
watched agree with /proc/stat and lo's statistics in sysfs, read before
and after.

usage: check_dump.py TOOL ID   (session ID samples lo, every 50 ms or so)
"""

import json
import os
import socket
import subprocess
import sys
import time

PAYLOAD = 100       # bytes of UDP payload
SENT = 37           # datagrams: lo counts each as rx and tx, 28 B more
# /proc/stat's order
PROC_STAT = ('user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq',
             'steal', 'guest', 'guest_nice')
BUSY = tuple(f for f in PROC_STAT if f not in ('idle', 'iowait'))
NET = '/sys/class/net/lo/statistics'
TICK_NS = 1000000000 // os.sysconf('SC_CLK_TCK')


def proc_stat():
    """{cpu: {field: ticks}}"""
    cpus = {}
    with open('/proc/stat') as f:
        for line in f:
            w = line.split()
            if w[0].startswith('cpu') and w[0] != 'cpu':
                cpus[int(w[0][3:])] = dict(zip(PROC_STAT, map(int, w[1:])))
    return cpus


def lo_stats():
    return {n: int(open(f'{NET}/{n}').read()) for n in os.listdir(NET)}


def within(name, v, lo, hi, bad):
    if not lo <= v <= hi:
        bad.append(f'{name} {v} not in [{lo}, {hi}]')


def lost(tool, sid):
    """the session's count of samples overwritten before a reader read
    them, as show -j prints it"""
    out = subprocess.run([tool, 'show', '-j'], capture_output=True,
                         text=True, check=True).stdout
    return next(x['lost'] for x in json.loads(out) if x['id'] == int(sid))


def main():
    tool, sid = sys.argv[1:]
    subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(('127.0.0.1', 0))
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(SENT):
        tx.sendto(b'x' * PAYLOAD, rx.getsockname())
    # every sample stamped after m1 read its counters after before's, and
    # every sample stamped before m2 read them about when after was read
    net0, before = lo_stats(), proc_stat()
    m1 = time.monotonic_ns()
    time.sleep(0.5)
    m2 = time.monotonic_ns()
    after, net1 = proc_stat(), lo_stats()
    lost0 = lost(tool, sid)
    out = subprocess.run([tool, 'dump', '--id', sid], capture_output=True,
                         text=True, check=True).stdout
    lost1 = lost(tool, sid)

    lines = out.splitlines()
    assert len(lines) >= 3, f'only {len(lines)} samples'
    prev, bad, watched, gaps = None, [], 0, 0
    for line in lines:
        obj = json.loads(line)
        assert json.dumps(obj, separators=(',', ':'), sort_keys=True) == line, line
        assert prev is None or obj['seq'] > prev, (prev, obj['seq'])
        gaps += 0 if prev is None else obj['seq'] - prev - 1
        prev = obj['seq']
        assert len(obj['devs']) == 1 and len(obj['devs'][0]) == 28, obj['devs']
        assert all(c is None or c['online'] in (True, False) for c in obj['cpus'])
        if not m1 <= obj['time'] <= m2:
            continue
        watched += 1
        dev = obj['devs'][0]
        assert dev['ifindex'] == 1 and not dev['gone'], dev
        for n, v in net0.items():
            if n in dev:
                within(f'seq {prev} lo {n}', dev[n], v, net1[n], bad)
        for c, cs in enumerate(obj['cpus']):
            if c not in before:
                continue
            # /proc/stat truncates each time to ticks: a tick above. A
            # CPU's idle time moves between idle and iowait as its
            # iowait count changes, so those two are checked as their
            # sum: a tick more above for the two truncations, and a tick
            # below, by which get_cpu_sleep_time_us() may go back.
            for f in BUSY + ('idle+iowait',):
                v, lo, hi = (sum(x[g] for g in ('idle', 'iowait'))
                             if f == 'idle+iowait' else x[f]
                             for x in (cs, before[c], after[c]))
                below, above = (1, 2) if f == 'idle+iowait' else (0, 1)
                within(f'seq {prev} cpu{c} {f}', v // TICK_NS,
                       lo - below, hi + above, bad)
    assert gaps <= lost1 - lost0, \
        f'{gaps} samples missing from the dump, {lost1 - lost0} counted lost'
    for b in bad[:10]:
        print(f'# {b}')
    assert watched >= 5, f'{watched} samples in the 0.5 s watched'
    assert net0 == net1 and net0['rx_packets'] >= SENT and \
        net0['tx_bytes'] >= SENT * (PAYLOAD + 28), ('lo moved', net0, net1)
    assert not bad, f'{len(bad)} values disagree with /proc/stat or sysfs'
    print(f'{len(lines)} samples checked ({gaps} overwritten during the '
          f'dump, of {lost1 - lost0} lost), {watched} against /proc/stat '
          f'and sysfs: lo rx_packets {net0["rx_packets"]}')


if __name__ == '__main__':
    main()
