# SPDX-License-Identifier: GPL-2.0
"""The samples of `ksft-perfmon-nl record --raw` (and dump), and which of
the kernel's raw CPU times went back: what tests check instead of
record's metric lines, which never go back because record clamps them.
"""

import json

# The raw fields of a CPU that never go back while it is online. Idle and
# iowait may: a sleep moves between them when its iowait state changes,
# and the kernel's get_cpu_sleep_time_us() can give an idle CPU's idle
# time ahead of what it then records (see Documentation/metrics.rst), by
# as long as that CPU takes from reading the clock as it leaves idle to
# publishing its idle time: microseconds, unless the host deschedules the
# vCPU in between. With two guests on the two cores, 3.3 ms was seen on
# 6.12-rt; idle + iowait may go back by less than IDLE_SLACK_NS. A module
# that mixed up CPUs or samples would take seconds.
BUSY = ('user', 'nice', 'system', 'irq', 'softirq', 'steal', 'guest',
        'guest_nice')
IDLE_SLACK_NS = 20000000


def parse(text):
    """(samples, the tool's diagnostic lines, lines that are neither)"""
    objs, diag, bad = [], [], []
    for line in text.splitlines():
        if line.startswith('# ksft-perfmon: '):
            diag.append(line)
            continue
        try:
            objs.append(json.loads(line))
        except ValueError:
            bad.append(line)
    return objs, diag, bad


def decreases(objs):
    """{field: [(seq, cpu, step back, when the sample before was read)]}
    of the raw CPU times between consecutive samples in which the CPU is online"""
    back = {}
    for a, b in zip(objs, objs[1:]):
        for c, (x, y) in enumerate(zip(a['cpus'], b['cpus'])):
            if not x or not y or not x['online'] or not y['online']:
                continue
            for f in BUSY + ('idle', 'iowait', 'idle+iowait'):
                u = x['idle'] + x['iowait'] if f == 'idle+iowait' else x[f]
                v = y['idle'] + y['iowait'] if f == 'idle+iowait' else y[f]
                if v < u:
                    back.setdefault(f, []).append((b['seq'], c, u - v,
                                                   a['time']))
    return back


def times_ok(objs, say=print, excused=None):
    """(ok, why): no busy field went back, idle + iowait by less than
    IDLE_SLACK_NS or as @excused(cpu, step, when the sample before was read)
    allows; every decrease is said, by field"""
    back = decreases(objs)
    for f, v in sorted(back.items()):
        say(f'raw {f} went back {len(v)} times, at most '
            f'{max(x[2] for x in v)} ns, e.g. {[x[:3] for x in v[:2]]}')
    bad = {f: back[f][:3] for f in BUSY if f in back}
    big = [x for x in back.get('idle+iowait', []) if x[2] >= IDLE_SLACK_NS]
    if excused:
        n = len(big)
        big = [x for x in big if not excused(x[1], x[2], x[3])]
        say(f'{n - len(big)} of them excused as a CPU coming online')
    return not bad and not big, f'went back: {bad} {big[:3]}'
