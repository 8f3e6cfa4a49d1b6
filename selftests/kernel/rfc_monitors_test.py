#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The RFC's SystemMonitor and ksft_perfmon's PerfMonitor around the
same iperf3, in one test case of the kernel's library with the RFC's
metric API: both on the case's clock, each CPU's user, system and
softirq time as both saw them must agree.

SystemMonitor reads /proc/stat once a second and stamps its samples on
the case's clock when it reports them; PerfMonitor's samples come from
the module, every 100 ms, timed by the kernel. The comparison is of
what each saw between two of SystemMonitor's samples. This test notes
when SystemMonitor's open() and read() of /proc/stat began and ended
(its own open, replaced in its module), so the read is known to fall
between two times, and between two of PerfMonitor's samples around
them PerfMonitor's count must hold SystemMonitor's:

    PM(last sample <= start of read k) - PM(first sample >= end of read j)
      - F ticks  <=  SM(k) - SM(j)  <=
    PM(first sample >= end of read k) - PM(last sample <= start of read j)
      + F ticks

where a tick is 1/USER_HZ (what /proc/stat counts in: each of its
counts is a nanosecond count rounded down, so a difference of two is off
by less than one) and F is the number of /proc/stat fields summed
(cpu.time.usr is user + nice: 2). The deviation printed for each CPU is
SM's count less PM's, PM's interpolated at the middle of each read.

Only the local host: SystemMonitor reads the remote's /proc/stat in a
shell loop of its own, whose output waits in a pipe until it asks for
the next one, so the time of a remote read is not known.

Runs from tools/testing/selftests/drivers/net/hw of a kernel tree with
the RFC's patches 1-4, with ksft_perfmon.py on PYTHONPATH.
"""

import bisect
import io
import os
import sys
import time

from lib.py import ksft_run, ksft_exit, ksft_pr, ksft_true
from lib.py import NetDrvEpEnv, Iperf3Runner, SystemMonitor
from ksft_perfmon import PerfMonitor
from check_perfmon_output import at

FIELDS = {'cpu.time.usr': 2, 'cpu.time.sys': 1, 'cpu.time.sirq': 1}
TICK = 1 / os.sysconf('SC_CLK_TCK')


class Stamped:
    """SystemMonitor, its local /proc/stat reads timed and its samples
    kept here, not reported: PerfMonitor's go to the case"""

    def __init__(self, start):
        self.start = start
        self.reads = []     # (began, ended) on the case's clock
        self.samples = {}   # name: [per-CPU values], each after a read
        sm = sys.modules[SystemMonitor.__module__]
        sm.open = self._open
        sm.ksft_metric = self._metric

    def _open(self, path, *args, **kwargs):
        if path != '/proc/stat':
            return open(path, *args, **kwargs)
        began = time.monotonic() - self.start
        with open(path, *args, **kwargs) as f:
            text = f.read()
        self.reads.append((began, time.monotonic() - self.start))
        return io.StringIO(text)

    def _metric(self, name, value, *, shape, host):
        if host == 'local' and name in FIELDS:
            self.samples.setdefault(name, []).append(value)


def around(series, t):
    """(value at the last sample at or before @t, at the first at or
    after it), None where there is none; @series (time, value) sorted"""
    i = bisect.bisect_right(series, (t, float('inf')))
    j = bisect.bisect_left(series, (t, float('-inf')))
    return (series[i - 1][1] if i else None,
            series[j][1] if j < len(series) else None)


def monitors_agree(cfg):
    """iperf3 under both monitors, their CPU times compared"""
    ksft = sys.modules[ksft_run.__module__]
    start = ksft.KSFT_METRICS_START
    # Some of the case before the monitors, so that a PerfMonitor on a
    # clock of its own would be seconds off
    runner = Iperf3Runner(cfg)
    time.sleep(1)
    entered = time.monotonic() - start
    stamped = Stamped(start)
    with PerfMonitor(cfg, interval_ms=100):
        with SystemMonitor(cfg):
            runner.measure_bandwidth()
    with ksft.KSFT_METRICS_LOCK:
        ours = [m for m in ksft.KSFT_METRICS
                if m['host'] == 'local' and m['name'] in FIELDS]

    times = sorted({m['time'] for m in ours})
    ksft_pr(f'PerfMonitor: {len(times)} samples from {times[0]} to '
            f'{times[-1]} s; SystemMonitor: {len(stamped.reads)} reads '
            f'from {stamped.reads[0][0]:.6f} to '
            f'{stamped.reads[-1][1]:.6f} s; entered at {entered:.6f} s')
    # on the case's clock: sampled once the block was entered
    ksft_true(times[0] >= entered, 'PerfMonitor sampled before its block')
    # SystemMonitor's baseline is its first read; the first to compare
    # against is the first with one of ours before it
    first = next((j for j, (began, _) in enumerate(stamped.reads)
                  if began >= times[0]), None)
    ksft_true(first is not None and len(stamped.reads) - first >= 5,
              f'fewer than 5 reads of SystemMonitor after the first sample '
              f'of PerfMonitor, from {first}')
    worst, outside = {}, []
    for name, fields in FIELDS.items():
        sm = [None] + stamped.samples[name]     # the baseline: 0 each
        series = {}
        for m in ours:
            if m['name'] == name:
                for cpu, v in enumerate(m['value']):
                    if v is not None:
                        series.setdefault(cpu, []).append((m['time'], v))
        for cpu, pm in series.items():
            pm.sort()
            aj, bj = stamped.reads[first]
            for k in range(first + 1, len(stamped.reads)):
                ak, bk = stamped.reads[k]

                def sm_at(j):
                    return 0.0 if sm[j] is None else sm[j][cpu]
                got = sm_at(k) - sm_at(first)
                lo_k, lo_j = around(pm, ak)[0], around(pm, bj)[1]
                hi_k, hi_j = around(pm, bk)[1], around(pm, aj)[0]
                if None in (lo_k, lo_j, hi_k, hi_j):
                    continue    # past our last sample
                lo, hi = lo_k - lo_j, hi_k - hi_j
                tol = fields * TICK
                # the reads' middles are inside pm, as their ends are
                dev = got - (at(pm, (ak + bk) / 2) - at(pm, (aj + bj) / 2))
                key = (name, cpu)
                if abs(dev) > abs(worst.get(key, (0.0, 0))[0]):
                    worst[key] = (dev, k)
                if not lo - tol <= got <= hi + tol:
                    outside.append(f'{name} CPU {cpu} read {k}: '
                                   f'SystemMonitor {got:.3f} s, '
                                   f'PerfMonitor {lo:.3f} to {hi:.3f} s')
    for (name, cpu), (dev, k) in sorted(worst.items()):
        ksft_pr(f'{name} CPU {cpu}: deviation at most {dev * 1000:+.1f} ms'
                f' (read {k}; tolerance {FIELDS[name] * TICK * 1000:.0f} '
                f'ms beyond the bracket)')
    for line in outside:
        ksft_pr(line)
    ksft_true(worst and not outside, 'the monitors disagree')


def main() -> None:
    with NetDrvEpEnv(__file__, nsim_test=False) as cfg:
        ksft_run([monitors_agree], args=(cfg,))
    ksft_exit()


if __name__ == "__main__":
    main()
