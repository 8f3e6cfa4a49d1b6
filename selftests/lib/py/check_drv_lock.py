#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The raw samples of selftests/drivers/lock_test.sh, checked against what the
kernel and iperf3 say on their own: KTAP, a result a check.

--dir holds a.json and b.json (record --raw of host A: e1000e and bond0,
and of host B: e1000e and bond1), end.a and end.b (CLOCK_MONOTONIC once
each host's session had left debugfs), sysfs (the e1000e counters read twice
once the link was quiet, with CLOCK_MONOTONIC before each read) and
iperf3.json (the client's report).
"""

import argparse
import json
import os
import re

from ktap import Ktap

ktap = Ktap('')
# lock_test.sh's intervals: host A at 1 ms, host B at 10 ms
INTERVAL_NS = {'a': 1000000, 'b': 10000000}


def check(name, ok, why=''):
    ktap.check(bool(ok), name, why)


class Dev(dict):
    """A netdev of a sample, its counters in one tuple: tens of thousands
    of samples as dicts would take the guest's memory (and, under KASAN,
    minutes of page faults)."""

    keys = None

    def __init__(self, d):
        super().__init__()
        if Dev.keys is None:
            Dev.keys = {k: i for i, k in enumerate(sorted(d))}
        self.v = tuple(d[k] if k in d else None for k in Dev.keys)

    def __getitem__(self, k):
        return self.v[Dev.keys[k]]

    def __iter__(self):
        return iter(Dev.keys)


def samples(path):
    """The JSON lines of a record --raw (without their CPUs, which this
    test does not check), and its diagnostic lines."""
    objs, notes = [], []
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('#'):
                notes.append(line)
            elif line:
                o = json.loads(line)
                del o['cpus']
                o['devs'] = [Dev(d) for d in o['devs']]
                objs.append(o)
    return objs, notes


def sysfs(path):
    """{'a': [(clock, {stat: value})] * 2, 'b': ...} from the sysfs file."""
    reads = {'a': [], 'b': []}
    for line in open(path):
        f = line.split()
        if f[0] == 'clock':
            clock = int(f[1])
            for h in reads:
                reads[h].append((clock, {}))
        else:
            reads[f[0]][-1][1][f[1]] = int(f[2])
    return reads


def series_in_order(host, objs, notes):
    """Samples in order; a gap in seq is samples the kernel overwrote
    before record read them, which the kernel counts on its own: the gaps
    record saw are at most that count (the rest were overwritten after its
    last read), and record says the kernel's count."""
    seqs = [o['seq'] for o in objs]
    times = [o['time'] for o in objs]
    gaps = sum(b - a - 1 for a, b in zip(seqs, seqs[1:]))
    lost = [re.search(r'(\d+) samples lost \(kernel counted (\d+)\)', n)
            for n in notes]
    lost = [m for m in lost if m]
    seen, kernel = (int(lost[0][1]), int(lost[0][2])) if lost else (0, 0)
    check(f'{host}.every_sample_in_order',
          seqs[0] == 0 and all(b > a for a, b in zip(seqs, seqs[1:])) and
          all(b > a for a, b in zip(times, times[1:])),
          f'{len(objs)} samples, seq {seqs[:1]}..{seqs[-1:]}')
    check(f'{host}.gaps_are_the_kernels_lost_samples',
          gaps <= kernel and seen == kernel,
          f'{gaps} in seq; record {seen}, the kernel {kernel}')
    if gaps:
        print(f'# {host}: {gaps} samples lost to a slow reader')


def timer_grid(host, objs, notes, ms, end):
    """Each sample's timer expiry (time - delay) is on the grid of the
    first one, at the interval (@ms ns). The periods between consecutive
    samples read that had no sample at all (not one the kernel overwrote
    before record read it: a gap in seq) are what the kernel reports as
    missed, but for those after the last sample read: record drains, then
    asks for the session. Those expired before the session left debugfs
    (@end, the clock read after), so there are at most as many as periods
    between the last sample's expiry and @end."""
    exp = [o['time'] - o['delay'] for o in objs]
    off = [(e - exp[0]) for e in exp]
    check(f'{host}.expiries_on_the_timer_grid',
          all(x % ms == 0 for x in off) and
          all(b > a for a, b in zip(off, off[1:])),
          str([x for x in off if x % ms][:3]))
    gaps = sum((b['time'] - b['delay'] - a['time'] + a['delay']) // ms -
               (b['seq'] - a['seq']) for a, b in zip(objs, objs[1:]))
    missed = [int(n.split()[2]) for n in notes if 'timer periods missed' in n]
    reported = missed[0] if missed else 0
    tail = (end - exp[-1]) // ms
    check(f'{host}.missed_periods_counted',
          gaps <= reported <= gaps + tail,
          f'{gaps} in the samples, {reported} reported, '
          f'{tail} periods from the last sample to the session\'s end')
    d = sorted(o['delay'] for o in objs)
    print(f'# {host}: wake-up delay p50 {d[len(d) // 2] / 1e3:.0f} us, '
          f'p99 {d[len(d) * 99 // 100] / 1e3:.0f} us, max {d[-1] / 1e3:.0f} us; '
          f'{gaps} periods missed between them, {reported - gaps} of {tail} after')


def counters_never_go_back(host, objs):
    """Every counter of every netdev, raw, as the kernel gave it."""
    back = []
    for i in range(len(objs[0]['devs'])):
        for k in objs[0]['devs'][i]:
            if k in ('gone', 'ifindex'):
                continue
            vals = [o['devs'][i][k] for o in objs]
            back += [(i, k, a, b) for a, b in zip(vals, vals[1:]) if b < a]
    check(f'{host}.netdev_counters_never_go_back', not back, str(back[:3]))
    check(f'{host}.no_netdev_gone',
          not any(d['gone'] for o in objs for d in o['devs']))


def equal_to_sysfs(host, objs, reads):
    """The e1000e (the first netdev) of every sample taken after the first
    sysfs read equals sysfs: the link is quiet, so both reads agree."""
    (c0, r0), (_, r1) = reads
    check(f'{host}.sysfs_quiet_between_reads', r0 == r1, f'{r0} {r1}')
    after = [o for o in objs if o['time'] >= c0]
    bad = [(o['seq'], k, o['devs'][0][k], v) for o in after
           for k, v in r0.items() if o['devs'][0][k] != v]
    check(f'{host}.e1000e_counters_equal_sysfs', after and not bad,
          f'{len(after)} samples after the read; {bad[:3]}')
    return r0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--dir', required=True)
    ap.add_argument('--secs', type=float, required=True)
    ap.add_argument('--rc-a', type=int, required=True)
    ap.add_argument('--rc-b', type=int, required=True)
    args = ap.parse_args()

    # 3: samples lost, checked against the kernel's count below
    check('a.record_exit_status', args.rc_a in (0, 3), f'exit {args.rc_a}')
    check('b.record_exit_status', args.rc_b in (0, 3), f'exit {args.rc_b}')
    try:
        reads = sysfs(os.path.join(args.dir, 'sysfs'))
        iperf = json.load(open(os.path.join(args.dir, 'iperf3.json')))
    except (OSError, ValueError) as e:
        check('workload_finished', False, str(e))
        return ktap.finish()
    received = iperf.get('end', {}).get('sum_received', {}).get('bytes', 0)
    check('iperf3.transferred', received > 0,
          f'{received} bytes; {iperf.get("error", "")}')

    for host in ('a', 'b'):
        objs, notes = samples(os.path.join(args.dir, f'{host}.json'))
        for n in notes:
            print(f'# {host}: {n}')
        if len(objs) < 2:
            check(f'{host}.samples', False, f'{len(objs)} samples')
            continue
        span = (objs[-1]['time'] - objs[0]['time']) / 1e9
        print(f'# {host}: {len(objs)} samples over {span:.1f} s at '
              f'{INTERVAL_NS[host] // 1000000} ms')
        check(f'{host}.sampled_through_the_traffic', span >= args.secs,
              f'{span:.1f} s')
        series_in_order(host, objs, notes)
        try:
            with open(os.path.join(args.dir, f'end.{host}')) as f:
                end = int(f.read())
        except (OSError, ValueError) as e:
            check(f'{host}.session_end_clock', False, str(e))
        else:
            timer_grid(host, objs, notes, INTERVAL_NS[host], end)
        counters_never_go_back(host, objs)
        last = equal_to_sysfs(host, objs, reads[host])
        # the frames carried at least iperf3's payload, both ways counted
        first = objs[0]['devs'][0]
        key = 'tx_bytes' if host == 'a' else 'rx_bytes'
        check(f'{host}.e1000e_{key}_cover_iperf3',
              last[key] - first[key] >= received,
              f'{last[key] - first[key]} >= {received}')

    return ktap.finish()


if __name__ == '__main__':
    raise SystemExit(main())
