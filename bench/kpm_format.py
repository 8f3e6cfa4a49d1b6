#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The Python way of the benchmarks: the metric set of ksft-perfmon-nl
record, computed the same way and written with json.dumps(...,
separators=(",", ":"), sort_keys=True), as the first proposal's
SystemMonitor does.

  kpm_format.py proc IFNAME     U1's formatter: reads "cat /proc/stat" and
                                the three sysfs counters, a chunk per
                                sample ending in a line "--", from stdin
  kpm_format.py dump FILE [N]   the formatting benchmark: the samples of
                                "ksft-perfmon-nl dump" in FILE, formatted
                                N times (default 1); prints lines/s on
                                stderr, the lines of one pass on stdout
"""

import json
import sys
import time

USER_HZ_NS = 10_000_000
METRICS = ('cpu.time.usr', 'cpu.time.sys', 'cpu.time.sirq')
NICS = (('nic.rx.dropped', 'rx_dropped'),
        ('nic.rx.missed_errors', 'rx_missed_errors'),
        ('nic.tx.dropped', 'tx_dropped'))
FIELDS = ('user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq',
          'steal')


def dumps(obj):
    return json.dumps(obj, allow_nan=False, separators=(',', ':'),
                      sort_keys=True)


def policies(nics):
    cpu = {'aggregation': 'busy-core-equivalents',
           'display_label': 'Percent of one CPU',
           'display_range': {'max': 100.0, 'min': 0.0}, 'summarize': 'p90'}
    out = [dict(cpu, name=m, display_scale=100.0, transform='rate')
           for m in METRICS]
    out.append(dict(cpu, name='cpu.utilization'))
    if nics:
        out += [{'display_range': {'min': 0}, 'name': n,
                 'summarize': 'distribution', 'transform': 'rate'}
                for n, _ in NICS]
    return ['# ktap-metric-policy-json: ' + dumps(p) for p in out]


class Record:
    """ksft-perfmon-nl record's arithmetic (tools/lib/ktap.c)"""

    def __init__(self, host, time_base, nics):
        self.host, self.time_base, self.nics = host, time_base, nics
        self.base = self.prev = None
        self.cpu_last = {m: {} for m in METRICS}
        self.nic_last = {}
        self.decreases = 0

    def obs(self, name, shape, time_ns, value):
        t = round((time_ns - self.time_base) / 1e9, 6)
        return '# ktap-metric-json: ' + dumps(
            {'host': self.host, 'name': name, 'shape': shape, 'time': t,
             'value': value})

    def step(self, a, b):
        if b < a:
            self.decreases += 1
        return max(b - a, 0)

    def add(self, smp):
        """the lines of one sample: a dict of time, seq, cpus (a list of
        None or dicts of the kcpustat fields in ns and online) and devs"""
        out = []
        if self.base is None:
            self.base = smp
        base = self.base
        for m in METRICS:
            vals = []
            for c, now in enumerate(smp['cpus']):
                b = base['cpus'][c] if c < len(base['cpus']) else None
                if now is None or not now['online'] or b is None:
                    vals.append(None)
                    continue
                if m == 'cpu.time.usr':
                    ns = max(now['user'] + now['nice'] - b['user'] - b['nice'], 0)
                elif m == 'cpu.time.sys':
                    ns = max(now['system'] - b['system'], 0)
                else:
                    ns = max(now['softirq'] - b['softirq'], 0)
                last = self.cpu_last[m]
                last[c] = max(last.get(c, 0), ns)
                vals.append(last[c] / 1e9)
            out.append(self.obs(m, 'per-cpu', smp['time'], vals))
        if smp['seq'] != base['seq']:
            vals = []
            for c, now in enumerate(smp['cpus']):
                p = self.prev['cpus'][c]
                if now is None or p is None or not now['online'] or \
                        not p['online']:
                    vals.append(None)
                    continue
                busy = sum(self.step(p[f], now[f]) for f in
                           ('user', 'nice', 'system', 'irq', 'softirq',
                            'steal'))
                idle = self.step(p['idle'] + p['iowait'],
                                 now['idle'] + now['iowait'])
                vals.append(round(100.0 * busy / (busy + idle), 4)
                            if busy + idle else None)
            out.append(self.obs('cpu.utilization', 'per-cpu', smp['time'],
                                vals))
        # the netdevs' lines once a read of them, as record_add()
        new = self.prev is None or not smp.get('dev_read') or \
            smp['dev_read'] != self.prev.get('dev_read')
        if self.nics and new:
            # the netdevs' times: the mean of those read, as nic_time()
            times = [d.get('time', smp['time']) for d in smp['devs']
                     if not d['gone']]
            nic_t = times[0] + sum(t - times[0] for t in times[1:]) // \
                len(times) if times else smp['time']
            for name, key in NICS:
                total = 0
                for i, now in enumerate(smp['devs']):
                    if i >= len(base['devs']) or base['devs'][i]['gone']:
                        continue
                    if not now['gone']:
                        prev = self.prev['devs'] if self.prev else []
                        if i < len(prev) and not prev[i]['gone']:
                            self.step(prev[i][key], now[key])
                        k = (i, key)
                        self.nic_last[k] = max(self.nic_last.get(k, 0),
                                               max(now[key] - base['devs'][i][key], 0))
                    total += self.nic_last.get((i, key), 0)
                out.append(self.obs(name, 'scalar', nic_t, total))
        self.prev = smp
        return out


def parse_proc(chunk, seq):
    """a sample from "cat /proc/stat" and the three counters (U1)"""
    cpus, devs = {}, {}
    for line in chunk:
        f = line.split()
        if f and f[0].startswith('cpu') and f[0] != 'cpu':
            cpus[int(f[0][3:])] = dict(
                zip(FIELDS, (int(x) * USER_HZ_NS for x in f[1:9])),
                online=True)
        elif f and f[0] in ('rx_dropped', 'rx_missed_errors', 'tx_dropped'):
            devs[f[0]] = int(f[1])
    n = max(cpus) + 1 if cpus else 0
    return {'seq': seq, 'time': time.monotonic_ns(),
            'cpus': [cpus.get(c) for c in range(n)],
            'devs': [dict(devs, gone=False)]}


def main():
    if sys.argv[1] == 'proc':
        rec, chunk, seq, first = None, [], 0, True
        out = sys.stdout
        for line in sys.stdin:
            if line.rstrip('\n') != '--':
                chunk.append(line)
                continue
            smp = parse_proc(chunk, seq)
            chunk, seq = [], seq + 1
            if rec is None:
                rec = Record('local', smp['time'], True)
                out.write('\n'.join(policies(True)) + '\n')
            out.write('\n'.join(rec.add(smp)) + '\n')
            out.flush()
        return 0
    with open(sys.argv[2]) as f:
        samples = []
        for line in f:
            o = json.loads(line)
            samples.append({'seq': o['seq'], 'time': o['time'],
                            'cpus': o['cpus'], 'devs': o['devs']})
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    start, n = time.perf_counter(), 0
    for r in range(reps):
        rec = Record('local', samples[0]['time'], bool(samples[0]['devs']))
        lines = policies(rec.nics)
        for smp in samples:
            lines += rec.add(smp)
        n += len(lines)
        if r == 0:
            first = lines
    secs = time.perf_counter() - start
    sys.stdout.write('\n'.join(first) + '\n')
    print(f'lines={n} seconds={secs:.6f} lines_per_s={n / secs:.1f}',
          file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
