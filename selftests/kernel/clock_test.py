#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Each block of a sample on its own clock: a CPU kept 100% busy reads
100% in every interval, however long the sample's netdevs take to read.

The test module selftests/modules/slowdev registers 16 netdevs whose
ndo_get_stats64 busy-waits 0, 1, 2, 3 times DELAY_US, in turn, read
after read: the netdevs of one sample take 0 to 48 ms, a different time
from one sample to the next. `ksft-perfmon-nl record` samples them, with
their queue statistics, every 500 ms, while a shell loop keeps one CPU
busy and another CPU is left idle. The sampler's work runs on CPU 0,
where this test runs too: the unbound workqueues, the module's among
them, are confined to it (their sysfs cpumask), and the session is
created there. The suite runs it in a guest of three vCPUs of its own.

Per interval, from the raw samples (replay --raw) and from the tool's
lines (cpu.time.usr + sys + sirq, over the lines' times):

- the idle CPU's time, all of it (busy, idle and iowait), adds up to the
  interval, 100% +- 2%, where the kernel accounts all of it exactly, a
  nohz_full CPU: this is the sample's clock against the CPUs' own. A
  kernel without nohz_full counts the moments an idle CPU is awake by
  ticks, which TCG delivers late (the debug kernel's first interval read
  86.6% beside a busy guest): there the numbers are printed and the
  check skipped;
- the idle CPU reads at most 2% busy;
- the busy CPU reads 100% +- 2% busy, where the kernel accounts its time
  exactly: a CPU of nohz_full= (VIRT_CPU_ACCOUNTING_GEN; the suite's
  guest boots with nohz_full=1-2 isolcpus=1-2), as Debian's kernels have
  it. A kernel that counts a busy CPU's time a tick at a time (the debug
  kernel's NO_HZ_IDLE) loses the ticks that TCG delivers late: its busy
  CPU's numbers are printed, and that check skipped;
- the tool's lines of the CPUs are at the samples' times: the CPUs'.

A sampler that stamped a sample before its netdevs and read its CPUs
after them would be off by up to 48 ms in 500: 10%. The work reads the
netdevs, then the CPUs: each netdev's own time must come before the
sample's, in turn, the first netdev's offset must follow the delays of
the module, and each sample must hold a read of its own (dev_read one
more than the sample's before).

usage: clock_test.py SLOWDEV_KO
"""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
import kpm_genl   # noqa: E402
from ktap import Ktap, skip_all   # noqa: E402

TOOL = os.path.join(kpm_genl.TOP, 'tools', 'ksft-perfmon-nl')
WQ_CPUMASKS = ('/sys/devices/virtual/workqueue/cpumask',
               '/sys/devices/virtual/workqueue/ksft_perfmon/cpumask')
NDEVS = 16
DELAY_US = 1000
INTERVAL_MS = 500
SAMPLES = 12
BUSY = ('user', 'nice', 'system', 'irq', 'softirq', 'steal')


def cpus_of(path):
    """the CPUs of a list file such as /sys/devices/system/cpu/online"""
    try:
        text = open(path).read().strip()
    except OSError:
        return []
    out = []
    for part in filter(None, text.split(',')):
        lo, _, hi = part.partition('-')
        out += range(int(lo), int(hi or lo) + 1)
    return out


def rates(points):
    """per interval between consecutive (time ns, busy ns): busy %"""
    return [100.0 * (b1 - b0) / (t1 - t0)
            for (t0, b0), (t1, b1) in zip(points, points[1:])]


def tool_points(lines, cpu):
    """(time, usr + sys + sirq) of @cpu from record's lines, in ns"""
    got = {}
    for line in lines:
        if not line.startswith('# ktap-metric-json: '):
            continue
        obs = json.loads(line.split(': ', 1)[1])
        if obs['name'] not in ('cpu.time.usr', 'cpu.time.sys',
                               'cpu.time.sirq'):
            continue
        v = obs['value'][cpu]
        if v is not None:
            key = round(obs['time'] * 1e6)
            got[key] = got.get(key, 0) + round(v * 1e9)
    return sorted((k * 1000, v) for k, v in got.items())


def raw_points(raw, cpu):
    return [(s['time'], sum(s['cpus'][cpu][k] for k in BUSY)) for s in raw]


def main():
    ko = sys.argv[1]
    c = Ktap('clock')
    online = cpus_of('/sys/devices/system/cpu/online')
    nohz = cpus_of('/sys/devices/system/cpu/nohz_full')
    if len(online) < 3:
        return skip_all(f'{len(online)} CPUs: needs 3')
    busy = nohz[-1] if nohz else online[-1]
    idle = next(x for x in online[1:] if x != busy)
    print(f'# busy CPU {busy} ({"nohz_full" if nohz else "by ticks"}), '
          f'idle CPU {idle}; the sampler and this test on CPU 0')

    os.sched_setaffinity(0, {0})
    subprocess.run(['insmod', ko, f'count={NDEVS}', 'queues=4',
                    f'delay_us={DELAY_US}'], check=True)
    devs = [f'kpmslow{i}' for i in range(NDEVS)]
    loop, saved = None, {}
    try:
        for d in devs:
            subprocess.run(['ip', 'link', 'set', d, 'up'], check=True)
        for path in WQ_CPUMASKS:
            if os.path.exists(path):
                saved[path] = open(path).read()
                with open(path, 'w') as f:
                    f.write('1\n')
        loop = subprocess.Popen(['taskset', '-c', str(busy), 'sh', '-c',
                                 'while :; do :; done'])
        time.sleep(1)
        with tempfile.TemporaryDirectory() as tmp:
            spool = os.path.join(tmp, 'spool')
            rec = subprocess.run(
                [TOOL, 'record', '--interval', str(INTERVAL_MS),
                 '--metrics', 'nic.queue.rx.packets', '--queues', '4',
                 '--spool', spool,
                 '--duration', str(SAMPLES * INTERVAL_MS / 1000)] +
                [a for d in devs for a in ('--ifname', d)],
                capture_output=True, text=True)
            raw = subprocess.run([TOOL, 'replay', '--raw', spool],
                                 capture_output=True, text=True)
        raw = [json.loads(x) for x in raw.stdout.splitlines()
               if x.startswith('{')]
    finally:
        if loop:
            loop.kill()
            loop.wait()
        for path, mask in reversed(saved.items()):
            with open(path, 'w') as f:
                f.write(mask)
        subprocess.run(['rmmod', 'kpm_slowdev'])
    c.check(rec.returncode == 0 and len(raw) >= SAMPLES - 1,
            'record_sampled_the_netdevs',
            f'record exited {rec.returncode}, {len(raw)} samples: '
            f'{rec.stderr.strip()}')
    if len(raw) < 3:
        return 1

    # where the netdevs were read, before the CPUs
    offs = [[s['time'] - d.get('time', s['time']) for d in s['devs']]
            for s in raw]
    print('# the netdevs of each sample, from the first one read to its '
          'time (ms): ' +
          ' '.join(f'{o[0] / 1e6:.1f}' for o in offs))
    # the first of 16 netdevs reads before 15 of their delays at least,
    # which turn over 0 to 3 times DELAY_US: they add up to 15 * 1.5 ms
    # on average, and differ from one sample to the next
    firsts = [o[0] for o in offs]
    reads = [s.get('dev_read', 0) for s in raw]
    c.check(all(x >= 0 for o in offs for x in o) and
            all(b <= a for o in offs for a, b in zip(o, o[1:])) and
            max(firsts) - min(firsts) >= 2 * (NDEVS - 1) * DELAY_US * 1000 and
            sum(firsts) / len(firsts) >=
            1.2 * (NDEVS - 1) * DELAY_US * 1000 and
            all(b == a + 1 for a, b in zip(reads, reads[1:])),
            'netdevs_on_their_own_clock',
            'the netdevs were not read before the CPUs, each in turn, '
            'with the delays of the module, a read a sample: '
            f'dev_read {reads}')

    # the tool's lines of the CPUs at the CPUs' times, to the microsecond
    tool_t = [t for t, _ in tool_points(rec.stdout.splitlines(), idle)]
    raw_t = [smp['time'] for smp in raw]
    c.check(len(tool_t) == len(raw_t) and
            all(abs((a - tool_t[0]) - (b - raw_t[0])) <= 1000
                for a, b in zip(tool_t, raw_t)),
            'tool.cpu_lines_at_the_cpus_time',
            f'{len(tool_t)} lines, {len(raw_t)} samples')

    total = rates([(smp['time'], sum(smp['cpus'][idle][k]
                                     for k in BUSY + ('idle', 'iowait')))
                   for smp in raw])
    print(f'# raw: idle CPU {idle}, all its time each interval (%): ' +
          ' '.join(f'{x:.1f}' for x in total))
    if idle in nohz:
        c.check(len(total) >= SAMPLES - 2 and
                all(98 <= x <= 102 for x in total),
                'raw.idle_cpu_time_adds_up_to_the_interval',
                f'{len(total)} intervals, from {min(total, default=0):.1f}% '
                f'to {max(total, default=0):.1f}%')
    else:
        c.skip('raw.idle_cpu_time_adds_up_to_the_interval',
               'its moments awake counted by ticks, which TCG delivers '
               'late (not a nohz_full CPU)')

    for name, points in (('tool', lambda cpu: tool_points(
                              rec.stdout.splitlines(), cpu)),
                         ('raw', lambda cpu: raw_points(raw, cpu))):
        b, i = rates(points(busy)), rates(points(idle))
        print(f'# {name}: busy CPU {busy} each interval (%): ' +
              ' '.join(f'{x:.1f}' for x in b))
        print(f'# {name}: idle CPU {idle} each interval (%): ' +
              ' '.join(f'{x:.1f}' for x in i))
        if nohz:
            c.check(len(b) >= SAMPLES - 2 and
                    all(98 <= x <= 102 for x in b),
                    f'{name}.busy_cpu_reads_100_percent',
                    f'{len(b)} intervals, from {min(b, default=0):.1f}% '
                    f'to {max(b, default=0):.1f}%')
        else:
            c.skip(f'{name}.busy_cpu_reads_100_percent',
                   'its time counted by ticks, which TCG delivers late '
                   '(no nohz_full CPU)')
        c.check(len(i) >= SAMPLES - 2 and all(x <= 2 for x in i),
                f'{name}.idle_cpu_reads_at_most_2_percent',
                f'{len(i)} intervals, up to {max(i, default=0):.1f}%')
    return c.finish()


if __name__ == '__main__':
    sys.exit(main())
