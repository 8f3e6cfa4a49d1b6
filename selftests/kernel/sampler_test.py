#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The sampler at the floor: the CPUs read where the timer fires, the
netdevs in a work item at their own interval.

- cpus_wake_no_worker: a session of CPUs alone at 1 ms wakes no kworker
  to sample. Counted by the scheduler: the context switches of every
  kworker thread (voluntary and not, /proc/PID/status, added up: a
  thread's runs, which schedstat counts only where sched_info is on) over
  the session's life, against as long a window before it with no
  session. The runs it adds must be fewer than a tenth of its samples; a
  sampler whose work item took each sample runs a kworker once a sample
  at least. On PREEMPT_RT the soft timer's callback runs in the ktimers
  thread, which is not a kworker.
- devs_at_their_interval: a session of lo at 1 ms that reads it every
  10 ms (dev-interval). By its samples, from the kernel: dev-read goes up
  by one at most from a sample to the next, and the reads it counts are
  no more than a tenth of the periods, plus one; the netdev's time is no
  later than its sample's, and each read of it is later than the first
  sample of the read before (the work reads it once the timer asks, and
  the timer asks once the read before has its sample).
  Against the scheduler: the kworker runs the session adds are at least
  half its reads (a read is a work item's run) and at most three times
  their number plus a tenth of its samples.
- tool_nic_lines_once_a_read: record at 2 ms with --dev-interval 20 of
  lo; its spool read back raw. The tool writes the nic lines once for
  each read of the netdev, at the netdev's time, and the cpu lines for
  every sample: as many nic.rx.dropped lines as distinct dev_read values,
  each at the time of the first sample that has it, and no more than one
  every 20 ms of the samples' times, plus the first and one.
- bad_dev_interval: record refuses a dev-interval that is not a multiple
  of the interval, and one without a netdev, with the kernel's extack
  naming dev-interval, and leaves no session behind.

Needs the module loaded and root.

usage: sampler_test.py
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
from kpm_genl import Genl, samples, session_del, session_get, \
    session_new  # noqa: E402
from ktap import Ktap   # noqa: E402

TOOL = os.path.join(kpm_genl.TOP, 'tools', 'ksft-perfmon-nl')
SESSIONS = '/sys/kernel/debug/ksft_perfmon/sessions'
MS = 1_000_000
WINDOW = 1.5


def kworker_runs():
    """the runs so far of every kworker thread, added up: each run ends
    in a context switch, voluntary or not"""
    total = 0
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            if not open(f'/proc/{pid}/comm').read().startswith('kworker'):
                continue
            for line in open(f'/proc/{pid}/status'):
                if line.startswith(('voluntary_ctxt_switches:',
                                    'nonvoluntary_ctxt_switches:')):
                    total += int(line.split()[1])
        except (OSError, IndexError, ValueError):
            continue        # gone meanwhile
    return total


def idle_runs():
    """kworker runs over WINDOW with no session: the guest's own"""
    a = kworker_runs()
    time.sleep(WINDOW)
    return kworker_runs() - a


def session_runs(g, **kw):
    """(kworker runs, session-get, samples) of a session at 1 ms over
    WINDOW"""
    a = kworker_runs()
    sid = session_new(g, MS, 4096, **kw)
    time.sleep(WINDOW)
    # the dump first: the session's counts cover it
    smp = samples(g, sid)
    info = session_get(g, sid)
    session_del(g, sid)
    return kworker_runs() - a, info, smp


def cpus_wake_no_worker(c, g):
    idle = idle_runs()
    runs, info, _ = session_runs(g)
    added = runs - idle
    print(f'# kworker runs: {idle} with no session, {runs} with a session '
          f'of CPUs at 1 ms ({info["samples"]} samples, {info["missed"]} '
          f'periods missed)')
    c.check(info['samples'] >= 100 and added < info['samples'] / 10,
            'cpus_wake_no_worker',
            f'{added} kworker runs more than idle for {info["samples"]} '
            f'samples')


def devs_at_their_interval(c, g):
    lo = int(open('/sys/class/net/lo/ifindex').read())
    idle = idle_runs()
    runs, info, smp = session_runs(g, ifindex=(lo,),
                                   dev_interval_ns=10 * MS)
    seqs = sorted(smp)
    got = [smp[s] for s in seqs]
    reads = [s.get('dev-read', 0) for s in got]
    nreads = reads[-1] - reads[0] + 1 if reads else 0
    periods = info['samples'] + info['missed']
    added = runs - idle
    print(f'# {info["samples"]} samples, {periods} periods, reads of lo '
          f'{reads[0] if reads else "-"} to {reads[-1] if reads else "-"} '
          f'in the ring, {info.get("dev-missed")} missed; kworker runs '
          f'{idle} idle, {runs} with the session')
    firsts = [s for s, r, before in zip(got, reads, [None] + reads)
              if r != before]
    fresh = all(b['dev'][0]['time'] > a['time']
                for a, b in zip(firsts, firsts[1:]))
    c.check(len(got) >= 100 and info.get('dev-interval') == 10 * MS and
            seqs == list(range(seqs[0], seqs[0] + len(seqs))) and
            all(b - a in (0, 1) for a, b in zip(reads, reads[1:])) and
            nreads <= periods / 10 + 1 and
            all(s['dev'][0]['time'] <= s['time'] for s in got) and fresh,
            'devs_at_their_interval',
            f'{len(got)} samples, reads {reads[:40]}..., fresh {fresh}')
    c.check(nreads / 2 <= added <= 3 * nreads + len(got) / 10,
            'devs_wake_a_worker_a_read',
            f'{added} kworker runs more than idle for {nreads} reads')


def metric_lines(out, name):
    return [json.loads(x.split(': ', 1)[1]) for x in out.splitlines()
            if x.startswith('# ktap-metric-json: ') and
            f'"name":"{name}"' in x.replace(' ', '')]


def tool_nic_lines_once_a_read(c):
    with tempfile.TemporaryDirectory() as tmp:
        spool = os.path.join(tmp, 'spool')
        rec = subprocess.run([TOOL, 'record', '--interval', '2',
                              '--dev-interval', '20', '--ifname', 'lo',
                              '--spool', spool, '--time-base', '0',
                              '--duration', '1'],
                             capture_output=True, text=True)
        raw = subprocess.run([TOOL, 'replay', '--raw', spool],
                             capture_output=True, text=True)
    raw = [json.loads(x) for x in raw.stdout.splitlines()
           if x.startswith('{')]
    nic = metric_lines(rec.stdout, 'nic.rx.dropped')
    cpu = metric_lines(rec.stdout, 'cpu.time.usr')
    firsts = [s for a, s in zip([None] + raw, raw)
              if a is None or a['dev_read'] != s['dev_read']]
    want = [s['devs'][0]['time'] / 1e9 for s in firsts]
    print(f'# {len(raw)} samples, {len(firsts)} reads of lo; '
          f'{len(cpu)} cpu.time.usr lines, {len(nic)} nic.rx.dropped')
    c.check(rec.returncode == 0 and len(raw) >= 50 and
            len(cpu) == len(raw) and
            [round(x['time'], 6) for x in nic] ==
            [round(x, 6) for x in want] and
            len(nic) <= (raw[-1]['time'] - raw[0]['time']) / (20 * MS) + 2,
            'tool_nic_lines_once_a_read',
            f'record exited {rec.returncode}: {rec.stderr.strip()}; nic '
            f'lines at {[x["time"] for x in nic[:5]]}, reads at '
            f'{want[:5]}')


def bad_dev_interval(c):
    before = open(SESSIONS).read().splitlines()[1:]
    runs = [(['--interval', '2', '--dev-interval', '3', '--ifname', 'lo'],
             'dev-interval is not a multiple of the interval'),
            (['--interval', '2', '--dev-interval', '1', '--ifname', 'lo'],
             'dev-interval is below the interval'),
            (['--interval', '2', '--dev-interval', '4'],
             'of no netdev')]
    ok, why = True, []
    for args, want in runs:
        p = subprocess.run([TOOL, 'record', *args, '--duration', '0.2'],
                           capture_output=True, text=True)
        good = p.returncode != 0 and want in p.stderr and \
            len(p.stderr.strip().splitlines()) == 1 and not p.stdout
        if not good:
            why.append(f'{args}: exit {p.returncode}, {p.stderr.strip()!r}')
        ok &= good
    # the kernel's own word, with the attribute it names
    g = Genl()
    try:
        session_new(g, 2 * MS, 16, dev_interval_ns=4 * MS)
        ok = False
        why.append('session-new took a dev-interval with no ifindex')
    except OSError as e:
        ok &= e.errno == 22
    after = open(SESSIONS).read().splitlines()[1:]
    c.check(ok and after == before, 'bad_dev_interval',
            '; '.join(why) + f'; sessions {before} -> {after}')


def main():
    c = Ktap('sampler')
    g = Genl()
    cpus_wake_no_worker(c, g)
    devs_at_their_interval(c, g)
    tool_nic_lines_once_a_read(c)
    bad_dev_interval(c)
    return c.finish()


if __name__ == '__main__':
    sys.exit(main())
