#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""`ksft-perfmon-nl record` under CPU hotplug, at 1 kHz for a minute, and
with a tiny ring and a reader that stalls. Needs the module loaded and
root; KTAP output, non-zero exit when a test failed.

usage: record_robustness.py [TEST...]   (default: all)
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

import raw_samples

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, '..', 'tools', 'ksft-perfmon-nl')
CLOCK_STEP = os.path.join(HERE, 'clock_step.so')
LINE = re.compile(r'^# (ktap-metric-policy-json|ktap-metric-json): (.*)$')
LOST = re.compile(r'^# ksft-perfmon: (\d+) samples lost '
                  r'\(kernel counted (\d+)\)')
CPU_SYS = '/sys/devices/system/cpu'


def dumps(obj):
    return json.dumps(obj, allow_nan=False, separators=(',', ':'),
                      sort_keys=True)


def parse(text):
    """(observations, diagnostic lines, lines that are neither)"""
    obs, diag, bad = [], [], []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            try:
                obj = json.loads(m.group(2))
            except ValueError:
                bad.append(line)
                continue
            if dumps(obj) != m.group(2):
                bad.append(line)
            elif m.group(1) == 'ktap-metric-json':
                obs.append(obj)
        elif line.startswith('# ksft-perfmon: '):
            diag.append(line)
        else:
            bad.append(line)
    return obs, diag, bad


def check_raw_times(t, objs, excused=None):
    """the kernel's raw times never go back, but as raw_samples allows"""
    ok, why = raw_samples.times_ok(objs, lambda m: print(f'# {m}'), excused)
    t.check(ok, why)


class Test:
    def __init__(self, name):
        self.name, self.failed = name, False

    def check(self, ok, what):
        if not ok:
            self.failed = True
            print(f'# {self.name}: {what}')
        return ok


def possible_cpus():
    with open(f'{CPU_SYS}/possible') as f:
        return int(f.read().strip().split('-')[-1]) + 1


def record(*args, env=None):
    return subprocess.Popen([TOOL, 'record', *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def finish(t, rec, seconds):
    """record's output; a record still running after @seconds is a
    failure, with where it is stuck, rather than a guest that hangs"""
    try:
        return rec.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        where = ''
        for f in ('wchan', 'stack'):
            try:
                with open(f'/proc/{rec.pid}/{f}') as fd:
                    where += f' {f}: {fd.read().strip()!r}'
            except OSError:
                pass
        t.check(False, f'record still running after {seconds} s;{where}')
        rec.kill()
        return rec.communicate()


def idle_from_nohz():
    """Whether this kernel's idle time is get_cpu_idle_time_us()'s, as
    the module reads it before 7.2 (kmod/compat.h)"""
    major, minor = (int(x) for x in
                    re.match(r'(\d+)\.(\d+)', os.uname().release).groups())
    return (major, minor) < (7, 2)


def coming_online(events, step, ns):
    """Whether idle going back by @step after a sample read at @ns is
    the CPU that was coming online then. In 6.12, do_idle() checks for a
    dead CPU only after tick_nohz_idle_enter(), so a CPU dies with its
    NOHZ idle period open; from set_cpu_online() until its first idle
    entry, get_cpu_idle_time_us() counts the time since it died as idle,
    then drops it. /proc/stat shows the same. So the sample before was
    read while the CPU came online, and the step back is at most the
    time from its going offline to that read. @events: (offline, start,
    end) of its changes."""
    margin = 2000000
    for (off, t0, _), (on, u0, u1) in zip(events, events[1:]):
        if off and not on and u0 - margin <= ns <= u1 + margin:
            return step <= ns - t0 + margin
    return False


def cpu_hotplug(t):
    """CPUs go offline and online while record samples every 5 ms:
    null while offline, values while online, utilization within 0..100;
    the times of each change bracket it. A raw record beside it: the
    kernel's online flags change, and its times never go back (which
    record's clamped lines could not show)."""
    cpus = possible_cpus()
    toggled = [c for c in range(1, cpus)
               if os.path.exists(f'{CPU_SYS}/cpu{c}/online')]
    if not toggled:
        return 'skip: no CPU can go offline'
    base = time.monotonic_ns()
    rec = record('--interval', '5', '--ring', '4096', '--time-base',
                 str(base), '--duration', '12')
    # the same, raw: the kernel's own values, which record's lines clamp
    raw = record('--raw', '--interval', '5', '--ring', '4096',
                 '--duration', '12')
    # events[c]: (offline, start ns, end ns) of each change, relative
    events = {c: [] for c in toggled}
    time.sleep(1)
    cycles = 0
    while time.monotonic_ns() - base < 10e9:
        for c in toggled:
            for state in ('0', '1'):
                t0 = time.monotonic_ns() - base
                with open(f'{CPU_SYS}/cpu{c}/online', 'w') as f:
                    f.write(state)
                events[c].append((state == '0', t0,
                                  time.monotonic_ns() - base))
                time.sleep(0.1)
        cycles += 1
    out, err = finish(t, rec, 300)
    t.check(rec.returncode == 0, f'record exited {rec.returncode}: {err}')
    obs, diag, bad = parse(out)
    t.check(not bad, f'not metric lines: {bad[:3]}')
    print(f'# {cycles} offline/online cycles of CPUs {toggled}, '
          f'{len(obs)} observations; {diag}')
    rout, rerr = finish(t, raw, 300)
    t.check(raw.returncode == 0, f'record --raw exited {raw.returncode}: {rerr}')
    objs, rdiag, rbad = raw_samples.parse(rout)
    t.check(not rbad and len(objs) > 100,
            f'{len(objs)} raw samples; not samples: {rbad[:3]}')
    check_raw_times(t, objs, (lambda c, step, ns:
                              coming_online(events.get(c, []), step,
                                            ns - base))
                    if idle_from_nohz() else None)
    flipped = {c: sum(1 for a, b in zip(objs, objs[1:])
                      if a['cpus'][c]['online'] != b['cpus'][c]['online'])
               for c in toggled}
    t.check(all(n > 0 for n in flipped.values()),
            f'the kernel\'s online flag of each CPU changes: {flipped}')

    margin = 1000000    # 1 ms: a sample's online flag is read after its time

    def state(c, ns):
        """True online, False offline, None while changing"""
        online = True
        for offline, t0, t1 in events[c]:
            if ns + margin < t0:
                return online
            if ns < t1 + margin:
                return None
            online = not offline
        return online

    seen = {(c, s): 0 for c in toggled for s in (True, False)}
    for o in obs:
        ns = round(o['time'] * 1e9)
        v = o['value']
        if not t.check(len(v) == cpus, f'{len(v)} CPUs in {o}'):
            continue
        for c, x in enumerate(v):
            s = state(c, ns) if c in toggled else True
            if s is False:
                t.check(x is None, f'CPU {c} offline but {x} in {o}')
            if s is not None and o['name'] != 'cpu.utilization':
                seen.setdefault((c, s), 0)
                seen[(c, s)] += 1
                t.check(x is not None or not s,
                        f'CPU {c} online but null in {o}')
            if x is None:
                continue
            if o['name'] == 'cpu.utilization':
                t.check(0.0 <= x <= 100.0, f'utilization {x} in {o}')
    for (c, s), n in seen.items():
        t.check(n > 0, f'no sample while CPU {c} was '
                f'{"online" if s else "offline"}')


def zero_loss_1khz(t):
    """1 kHz for 60 s while record drains, raw: the sequence numbers have
    no gap (record exits 3 and says so otherwise), nor does the kernel
    count an overwritten sample; the kernel's times never go back (but
    as raw_samples allows), and each decrease is printed by field."""
    rec = record('--raw', '--interval', '1', '--ring', '4096',
                 '--duration', '60')
    out, err = finish(t, rec, 600)
    objs, diag, bad = raw_samples.parse(out)
    t.check(rec.returncode == 0, f'record exited {rec.returncode}: {err}')
    t.check(not bad, f'not samples: {bad[:3]}')
    t.check(not any(LOST.match(d) for d in diag), f'{diag}')
    seqs = [o['seq'] for o in objs]
    t.check(seqs == list(range(len(seqs))), 'a gap in the sequence numbers')
    n = len(objs)
    print(f'# {n} samples in 60 s ({n / 60:.0f}/s) on {possible_cpus()} '
          f'CPUs; {diag}')
    t.check(n > 0, 'no samples')
    check_raw_times(t, objs)


def tiny_ring_stalled_reader(t):
    """A ring of 4 at 1 ms, and record stopped for half a second, twice:
    samples are lost, record counts exactly the gaps the kernel counted,
    says so in one line, still writes valid lines and exits 3."""
    rec = record('--interval', '1', '--ring', '4', '--duration', '3')
    for _ in range(2):
        time.sleep(0.7)
        rec.send_signal(signal.SIGSTOP)
        time.sleep(0.5)
        rec.send_signal(signal.SIGCONT)
    out, err = finish(t, rec, 300)
    obs, diag, bad = parse(out)
    t.check(rec.returncode == 3, f'record exited {rec.returncode}: {err}')
    t.check(not bad, f'not metric lines: {bad[:3]}')
    t.check(len(obs) > 0, 'no observations')
    lost = [d for d in diag if LOST.match(d)]
    m = LOST.match(lost[0]) if lost else None
    if t.check(m is not None, f'no "samples lost" line: {diag}'):
        print(f'# {lost[0]}')
        t.check(m.group(1) == m.group(2) and int(m.group(1)) >= 400,
                f'gaps {m.group(1)}, kernel {m.group(2)}')


def duration_when_time_passes_between_reads(t):
    """--duration 1 with a clock that moves 150 ms at each read (and
    stands still between them): record ends, and exits 0. Reading the
    clock twice, once to compare with the end and once to compute the
    sleep, it slept for 2^64 - 50 ms when the end came between the two
    reads; a SIGSTOP there did it too, as tiny_ring_stalled_reader
    found. (With 150 ms a read, from start + 150 on, the loop's second
    read in its third round came 100 ms before the end, and the one that
    computed the sleep 50 ms after it.)"""
    if not t.check(os.path.exists(CLOCK_STEP), f'no {CLOCK_STEP}'):
        return None
    env = dict(os.environ, LD_PRELOAD=CLOCK_STEP, KPM_CLOCK_STEP_MS='150')
    rec = record('--interval', '10', '--duration', '1', env=env)
    out, err = finish(t, rec, 60)
    # a preload that failed is only a warning of ld.so's
    t.check('preload' not in err, f'clock_step.so not preloaded: {err}')
    t.check(rec.returncode == 0, f'record exited {rec.returncode}: {err}')
    obs, _, bad = parse(out)
    t.check(not bad and obs, f'{len(obs)} observations, not metric lines: {bad[:3]}')


TESTS = [cpu_hotplug, zero_loss_1khz, tiny_ring_stalled_reader,
         duration_when_time_passes_between_reads]


def main():
    sys.stdout.reconfigure(line_buffering=True)
    tests = [f for f in TESTS if not sys.argv[1:] or
             f.__name__ in sys.argv[1:]]
    print('TAP version 13')
    print(f'1..{len(tests)}')
    failed = 0
    for i, f in enumerate(tests, 1):
        t = Test(f.__name__)
        print(f'# {f.__name__}: start')
        skip = f(t)
        if skip:
            print(f'ok {i} record.{f.__name__} # SKIP {skip[6:]}')
        else:
            failed += t.failed
            print(f'{"not ok" if t.failed else "ok"} {i} record.{f.__name__}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
