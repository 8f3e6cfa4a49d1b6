#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The benchmarks that run in a guest with the module loaded; one CSV row
a measurement, each printed as "KPM-BENCH: TABLE,FIELD=VALUE,...".

  cost     CPU time per sample of K (the module's sampler by its own
           counter and by ftrace's function_graph, in a run of its own,
           and record's CPU time reading, in its steady state), U2
           (bench/u2_sampler) and U1
           (bench/u1_loop.sh); and the sampler's read of the CPUs
           against a bare copy of their counters (debugfs copy_cost)
  busy     CPU time per sample at 1 ms, counted by the kernel's NOHZ
           idle accounting on every CPU (all that is not idle: interrupts,
           softirqs, tasks) and by the scheduler (schedstat of the
           kworkers, ksoftirqd and ktimers threads and of the monitor's
           process), each against an idle window's, for K of the CPUs, K
           with lo every 10 ms (KD), U2 and U2 with lo every 10 intervals
           (U2D); and the module's own cost_ns beside them
  format   KTAP lines a second of the tool's formatter and of Python's
           json.dumps path for the same real samples, and whether their
           output is byte-identical
  timer    how late samples come, against their schedule, at 1 ms, 10 ms
           and 1 s, for K and for U2's sleep loop, idle and under iperf3
  perturb  the slowdown of a CPU-bound loop and of iperf3 between two
           netns under K of the CPUs at 1 ms, 10 ms and 1 s, K at 1 ms
           with lo every 10 ms (KD), the sampler alone (a session nobody
           reads) at 1 ms, U1 at 1 s, and the floor under any
           timer-driven sampler (bench/floor) at 1 and 10 ms
  scale    the sampler's cost against sessions (1 to 64) and netdevs a
           session (0 to 16)
  rt       on PREEMPT_RT: cyclictest's latency (a SCHED_FIFO 90 thread
           on every CPU, 1 ms) with no monitor, with K of the CPUs at
           1 ms and with K with lo every 10 ms (KD), interleaved

usage: guest_bench.py [--smoke] [cost] [busy] [format] [timer] [perturb]
                      [scale] [rt]
"""

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
sys.path.insert(0, os.path.join(TOP, 'selftests', 'kernel'))
from record_test import genl  # noqa: E402
TOOL = os.path.join(TOP, 'tools', 'ksft-perfmon-nl')
BENCH = os.path.join(TOP, 'bench')
TRACING = '/sys/kernel/tracing'
SESSIONS = '/sys/kernel/debug/ksft_perfmon/sessions'
SMOKE = '--smoke' in sys.argv


def emit(table, **row):
    print('KPM-BENCH: ' + table + ',' +
          ','.join(f'{k}={v}' for k, v in row.items()), flush=True)


def run_rusage(args, **kw):
    """(returncode, stdout, CPU ns of the process and all it waited for)"""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, **kw)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, out, int((ru.ru_utime + ru.ru_stime) * 1e9)


def tracing(setting, value):
    with open(os.path.join(TRACING, setting), 'w') as f:
        f.write(value)


def traced_sampler_ns():
    """durations of kpm_sample_work in the function_graph trace, in ns:
    " 1) + 35.672 us   |  kpm_sample_work [ksft_perfmon]();" """
    out = []
    with open(os.path.join(TRACING, 'trace')) as f:
        for line in f:
            if 'kpm_sample_work' in line and '|' in line:
                field = line.split('|')[0].split()
                if len(field) >= 2 and field[-1] in ('us', 'ms'):
                    out.append(float(field[-2]) *
                               (1000 if field[-1] == 'us' else 1e6))
    return out


def k_run(interval_ms, secs, trace=False):
    """record for @secs: (samples, the sampler's own ns for them,
    record's CPU ns, function_graph's durations of the sampler)"""
    if not os.path.exists(os.path.join(TRACING, 'trace')):
        subprocess.run(['mount', '-t', 'tracefs', 'nodev', TRACING])
    trace = trace and os.path.exists(os.path.join(TRACING,
                                                  'set_ftrace_filter'))
    if trace:
        # only the sampler, a leaf: its own entry and exit
        tracing('current_tracer', 'nop')
        tracing('set_ftrace_filter', 'kpm_sample_work')
        tracing('trace', '')
        tracing('current_tracer', 'function_graph')
        tracing('tracing_on', '1')
    # stopped by a signal once its session's row is read: a --duration
    # that ended first (a guest beside another, on a busy host) left no row
    p = subprocess.Popen([TOOL, 'record', '--interval', str(interval_ms),
                          '--duration', str(secs + 600), '--ifname', 'lo'],
                         stdout=subprocess.DEVNULL)
    time.sleep(secs)
    row = last_session()
    p.send_signal(signal.SIGINT)
    _, status, ru = os.wait4(p.pid, 0)
    durations = []
    if trace:
        # switching the tracer clears its buffer: read it first
        tracing('tracing_on', '0')
        durations = traced_sampler_ns()
        tracing('current_tracer', 'nop')
        tracing('set_ftrace_filter', '')
        tracing('tracing_on', '1')
    return (int(row['samples']), int(row['cost_ns']),
            int((ru.ru_utime + ru.ru_stime) * 1e9), durations,
            row['sample_size'])


def k_steady(interval_ms, warm, secs):
    """record in its steady state: after @warm s, for @secs s, the
    samples taken, the sampler's own ns for them and record's CPU ns
    (its schedstat), so that neither its start nor its formatting at the
    end is counted; and the sample's size"""
    p = subprocess.Popen([TOOL, 'record', '--interval', str(interval_ms),
                          '--duration', str(warm + secs + 600),
                          '--ifname', 'lo'], stdout=subprocess.DEVNULL)

    def now():
        with open(f'/proc/{p.pid}/schedstat') as f:
            ran = int(f.read().split()[0])
        return ran, last_session()

    time.sleep(warm)
    ran1, row1 = now()
    time.sleep(secs)
    ran2, row2 = now()
    p.send_signal(signal.SIGINT)
    p.wait()
    n = int(row2['samples']) - int(row1['samples'])
    return (n, int(row2['cost_ns']) - int(row1['cost_ns']), ran2 - ran1,
            row2['sample_size'])


def cost(cpus):
    """Per sample in the steady state: K's read as record's CPU time over
    a window of its steady state, the userspace ways' CPU time as the
    difference of a short and a long run, so that starting a process
    (Python's above all) is not counted; the sampler by its own counter"""
    short, long = (0.5, 1.5) if SMOKE else (1, 5)
    n, own, ran, size = k_steady(10, 1.5, 1.5 if SMOKE else 5)
    # traced apart: the tracer's own cost is not the sampler's
    durations = sorted(k_run(10, short, trace=True)[3])
    emit('cost', cpus=cpus, method='K', samples=n,
         sampler_ns=round(own / n),
         traced_ns=round(sum(durations) / len(durations)) if durations else '',
         traced_p50_ns=round(durations[len(durations) // 2])
         if durations else '',
         traced_n=len(durations),
         read_ns=round(ran / n),
         sample_bytes=size)

    # the sampler's read of the CPUs, without and with their network
    # counts (cpu-net), against a bare copy of their counters, in the
    # module (debugfs copy_cost): the fastest of three medians
    reads = []
    for _ in range(3):
        with open(os.path.join(os.path.dirname(SESSIONS), 'copy_cost')) as f:
            kv = f.read().split()
        reads.append(dict(zip(kv[::2], kv[1::2])))
    emit('copy', cpus=cpus,
         cpu_read_ns=min(int(r['sampler_ns']) for r in reads),
         bare_ns=min(int(r['bare_ns']) for r in reads),
         bare_clock_ns=min(int(r['bare_clock_ns']) for r in reads),
         cpu_net_read_ns=min(int(r['sampler_net_ns']) for r in reads))

    n1, n2 = int(short * 100), int(long * 100)
    cpu = []
    for n in (n1, n2):
        rc, out, ns = run_rusage([os.path.join(BENCH, 'u2_sampler'), '10',
                                  str(n), 'lo'])
        cpu.append(ns)
    emit('cost', cpus=cpus, method='U2', samples=n2,
         per_sample_ns=round((cpu[1] - cpu[0]) / (n2 - n1)))

    n1, n2 = (2, 5) if SMOKE else (3, 13)
    cpu = []
    for n in (n1, n2):
        rc, out, ns = run_rusage(['bash', os.path.join(BENCH, 'u1_loop.sh'),
                                  '0.1', str(n), 'lo'])
        cpu.append(ns)
    emit('cost', cpus=cpus, method='U1', samples=n2,
         per_sample_ns=round((cpu[1] - cpu[0]) / (n2 - n1)))


FLOOR_IDLE = '/sys/kernel/debug/kpm_floor/idle_ns'


def idle_ns():
    """the idle and iowait time of every CPU, added up, from the floor
    module's file: the kernel's NOHZ accounting"""
    with open(FLOOR_IDLE) as f:
        return sum(int(x) + int(y) for _, x, y in
                   (line.split() for line in f))


SYSTEM_THREADS = ('kworker', 'ksoftirqd', 'ktimers')


def sched_ns(pids=()):
    """the run time (schedstat) of every thread of the kernel's that
    can run a sampler's work, and of the processes @pids, added up"""
    total = 0
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            comm = open(f'/proc/{pid}/comm').read()
            if int(pid) in pids or comm.startswith(SYSTEM_THREADS):
                total += int(open(f'/proc/{pid}/schedstat').read().split()[0])
        except (OSError, ValueError):
            continue        # gone meanwhile
    return total


def busy_window(secs, pids=()):
    """(wall ns, busy ns of all CPUs, scheduler ns) over @secs"""
    n = os.cpu_count()
    t0, i0, s0 = time.monotonic_ns(), idle_ns(), sched_ns(pids)
    time.sleep(secs)
    t1, i1, s1 = time.monotonic_ns(), idle_ns(), sched_ns(pids)
    return t1 - t0, n * (t1 - t0) - (i1 - i0), s1 - s0


def floor(mode):
    """the floor module in @mode at 1 ms (3: no timer, its idle file
    alone)"""
    subprocess.run(['rmmod', 'kpm_floor'], stderr=subprocess.DEVNULL)
    subprocess.run(['insmod', FLOOR, f'mode={mode}', 'interval_us=1000'],
                   check=True)


def busy(cpus):
    """Per sample at 1 ms, in rounds of an idle window and each monitor
    in its steady state (after 1.5 s), its busy and scheduler time less
    the idle window's, for as long, of the same round; and per tick of
    the bare hrtimers under any sampler, hard (H) and soft (HS)"""
    rounds, warm, secs = (1, 0.5, 1) if SMOKE else (3, 1.5, 3)
    floor(3)
    kinds = {'K': [], 'KD': ['--ifname', 'lo', '--dev-interval', '10'],
             'U2': [], 'U2D': ['lo', '10'], 'H': 0, 'HS': 4}
    got = {k: [] for k in kinds}
    try:
        for _ in range(rounds):
            wall0, busy0, sched0 = busy_window(secs)
            for kind, args in kinds.items():
                if kind.startswith('H'):
                    floor(args)
                    time.sleep(warm)
                    wall, b, sc = busy_window(secs)
                    floor(3)
                    n, scale = round(wall / 1e6), wall / wall0
                    got[kind].append(((b - busy0 * scale) / n,
                                      (sc - sched0 * scale) / n, 0, n))
                    continue
                if kind.startswith('K'):
                    p = subprocess.Popen([TOOL, 'record', '--interval', '1',
                                          '--duration', '3600'] + args,
                                         stdout=subprocess.DEVNULL)
                else:
                    n = int((warm + secs + 60) * 1000)
                    p = subprocess.Popen([os.path.join(BENCH, 'u2_sampler'),
                                          '1', str(n)] + args,
                                         stdout=subprocess.DEVNULL)
                time.sleep(warm)
                row0 = last_session() if kind.startswith('K') else None
                wall, b, sc = busy_window(secs, (p.pid,))
                row1 = last_session() if kind.startswith('K') else None
                p.terminate()
                p.wait()
                if row0:
                    n = int(row1['samples']) - int(row0['samples'])
                    own = int(row1['cost_ns']) - int(row0['cost_ns'])
                else:
                    n, own = round(wall / 1e6), 0
                scale = wall / wall0
                got[kind].append(((b - busy0 * scale) / n,
                                  (sc - sched0 * scale) / n, own / n, n))
    finally:
        subprocess.run(['rmmod', 'kpm_floor'])
    for kind, rows in got.items():
        rows.sort()
        mid = rows[len(rows) // 2]
        emit('busy', cpus=cpus, method=kind, rounds=len(rows),
             samples=mid[3], busy_ns=round(mid[0]),
             busy_all=':'.join(str(round(r[0])) for r in rows),
             sched_ns=round(sorted(r[1] for r in rows)[len(rows) // 2]),
             own_ns=round(sorted(r[2] for r in rows)[len(rows) // 2]))


def fmt(cpus):
    """the same real samples through both formatters"""
    secs = 1 if SMOKE else 4
    with tempfile.TemporaryDirectory() as d:
        dump = os.path.join(d, 'dump.jsonl')
        # a session at 10 ms for @secs, dumped whole by record's own
        # COMMAND, so that the session outlives the dump on a slow guest
        subprocess.run([TOOL, 'record', '--interval', '10', '--ring', '1024',
                        '--ifname', 'lo', '--', 'sh', '-c',
                        f'sleep {secs}; {TOOL} dump --id '
                        f'$(tail -n1 {SESSIONS} | cut -d" " -f1) > {dump}'],
                       stdout=subprocess.DEVNULL, check=True)
        reps_c, reps_py = (5, 1) if SMOKE else (200, 10)
        c = subprocess.run([os.path.join(BENCH, 'fmt_bench'), dump,
                            str(reps_c)], capture_output=True, text=True)
        py = subprocess.run([sys.executable,
                             os.path.join(BENCH, 'kpm_format.py'), 'dump',
                             dump, str(reps_py)],
                            capture_output=True, text=True)
        kc = dict(x.split('=') for x in c.stderr.split())
        kp = dict(x.split('=') for x in py.stderr.split())
        emit('format', cpus=cpus, samples=sum(1 for _ in open(dump)),
             tool_lines_per_s=kc['lines_per_s'],
             python_lines_per_s=kp['lines_per_s'],
             identical=int(c.stdout == py.stdout and c.returncode == 0 and
                           py.returncode == 0 and c.stdout != ''))


def last_session():
    """the newest session's row of debugfs, by column name"""
    with open(SESSIONS) as f:
        lines = f.readlines()
    return dict(zip(lines[0].split(), lines[-1].split()))


def k_times(interval_ms, secs):
    """the sample times of a K session at @interval_ms for @secs"""
    with tempfile.TemporaryDirectory() as d:
        dump = os.path.join(d, 'dump')
        subprocess.run([TOOL, 'record', '--interval', str(interval_ms),
                        '--ring', '4096', '--', 'sh', '-c',
                        f'sleep {secs}; {TOOL} dump --id '
                        f'$(tail -n1 {SESSIONS} | cut -d" " -f1) > {dump}'],
                       stdout=subprocess.DEVNULL, check=True)
        with open(dump) as f:
            return [json.loads(line)['time'] for line in f]


def lateness(times, interval_ns):
    """how late each sample came after the earliest phase of the grid
    (the first sample, taken at the session's start, left out)"""
    phases = sorted(t % interval_ns for t in times[1:])
    if not phases:
        return []
    # the grid's phase: where the largest (circular) gap between phases ends
    gaps = [(phases[i] - phases[i - 1]) % interval_ns
            for i in range(len(phases))]
    start = phases[max(range(len(phases)), key=lambda i: gaps[i])
                   if len(phases) > 1 else 0]
    return sorted((t - start) % interval_ns for t in times[1:])


def pct(v, p):
    return v[min(len(v) - 1, int(len(v) * p / 100))] if v else ''


class Load:
    """iperf3 over lo in the background, or nothing"""

    def __init__(self, on):
        self.on, self.procs = on, []

    def __enter__(self):
        if self.on:
            self.procs.append(subprocess.Popen(
                ['iperf3', '-s', '-B', '127.0.0.1', '-p', '5299'],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(0.5)
            self.procs.append(subprocess.Popen(
                ['iperf3', '-c', '127.0.0.1', '-p', '5299', '-t', '3600'],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        for p in reversed(self.procs):
            p.kill()
            p.wait()


def timer(cpus):
    cases = [(1, 0.5), (10, 1)] if SMOKE else [(1, 3), (10, 6), (1000, 11)]
    for load in (False, True):
        with Load(load):
            for interval_ms, secs in cases:
                ns = interval_ms * 1_000_000
                k = lateness(k_times(interval_ms, secs), ns)
                rc, out, _ = run_rusage([os.path.join(BENCH, 'u2_sampler'),
                                         str(interval_ms),
                                         str(int(secs * 1000 / interval_ms))])
                kv = dict(x.split('=') for x in out.split())
                u2 = sorted(int(x) for x in kv['late'].split(':'))
                base = u2[0] if u2 else 0
                for method, v in (('K', k), ('U2', [x - base for x in u2]),
                                  ('U2 absolute', u2)):
                    emit('timer', cpus=cpus, load='iperf3' if load else 'idle',
                         interval_ms=interval_ms, method=method, n=len(v),
                         p50_ns=pct(v, 50), p99_ns=pct(v, 99),
                         max_ns=v[-1] if v else '')


def spin_once(iters):
    out = subprocess.run([os.path.join(BENCH, 'spin'), str(iters)],
                         capture_output=True, text=True, check=True).stdout
    return int(out.split('=')[1])


def netns_iperf3(secs):
    """Gbit/s of iperf3 from netns kpmb-r to kpmb-l over veth"""
    out = subprocess.run(['ip', 'netns', 'exec', 'kpmb-r', 'iperf3', '-c',
                          '192.0.2.1', '-t', str(secs), '-J'],
                         capture_output=True, text=True).stdout
    return json.loads(out)['end']['sum_received']['bits_per_second'] / 1e9


def unread_session(ms):
    """a socket that owns a session of the CPUs at @ms and never reads
    it: the sampler's cost alone, its timer included"""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
    sock.bind((0, 0))
    # CTRL_CMD_GETFAMILY by CTRL_ATTR_FAMILY_NAME, then session-new with
    # interval and ring-size
    fam = genl(sock, 0x10, 3, [(2, 'ksft_perfmon')], False)
    fid = struct.unpack('=H', fam[1][:2])[0]
    new = genl(sock, fid, 1, [(3, ms * 1000000), (4, 2)], False)
    if not isinstance(new, dict):
        raise OSError(new, 'session-new')
    return sock


FLOOR = os.path.join(TOP, 'build', 'bench-floor', 'kpm_floor.ko')
FLOOR_MODES = {'H': 0, 'HW': 1, 'HR': 2}


class Monitor:
    """none, K of the CPUs at @ms (record), K with lo read every 10 ms
    (KD), the sampler alone at @ms (S: a session of the CPUs nobody
    reads), U1 at @ms, or the floor under them (bench/floor): a
    bare hrtimer at @ms (H), one that queues an empty work item (HW), and
    one that reads the CPUs itself, in hardirq (HR); in the background"""

    def __init__(self, kind, ms):
        self.kind, self.ms, self.p = kind, ms, None

    def __enter__(self):
        if self.kind == 'S':
            self.sock = unread_session(self.ms)
        elif self.kind in FLOOR_MODES:
            subprocess.run(['insmod', FLOOR,
                            f'mode={FLOOR_MODES[self.kind]}',
                            f'interval_us={self.ms * 1000}'], check=True)
        elif self.kind in ('K', 'KD'):
            devs = ['--ifname', 'lo', '--dev-interval', '10'] \
                if self.kind == 'KD' else []
            self.p = subprocess.Popen([TOOL, 'record', '--interval',
                                       str(self.ms), '--duration', '3600'] +
                                      devs, stdout=subprocess.DEVNULL)
        elif self.kind == 'U1':
            self.p = subprocess.Popen(['bash', os.path.join(BENCH, 'u1_loop.sh'),
                                       str(self.ms / 1000), '1000000', 'lo'],
                                      stdout=subprocess.DEVNULL,
                                      start_new_session=True)
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        if self.kind == 'S':
            self.sock.close()
        elif self.kind in FLOOR_MODES:
            subprocess.run(['rmmod', 'kpm_floor'], check=not exc[0])
        if self.p:
            os.killpg(self.p.pid, 15) if self.kind == 'U1' else \
                self.p.terminate()
            self.p.wait()


def perturb(cpus):
    iters = 3_000_000 if SMOKE else 240_000_000
    reps = 1 if SMOKE else 11
    monitors = [('none', 0), ('K', 1), ('KD', 1), ('S', 1), ('H', 1),
                ('HW', 1), ('HR', 1), ('K', 10), ('H', 10), ('HW', 10),
                ('K', 1000), ('U1', 1000)]
    subprocess.run('ip netns add kpmb-r; ip link add kpmb-l type veth peer '
                   'name kpmb-p netns kpmb-r; ip addr add 192.0.2.1/24 dev '
                   'kpmb-l; ip link set kpmb-l up; ip -n kpmb-r addr add '
                   '192.0.2.2/24 dev kpmb-p; ip -n kpmb-r link set kpmb-p up',
                   shell=True, check=True)
    srv = subprocess.Popen(['iperf3', '-s', '-B', '192.0.2.1'],
                           stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    spin, tput, pair = ({m: [] for m in monitors} for _ in range(3))
    # interleaved, so that a slow phase of the host hits all alike; and
    # each monitored loop paired with one under no monitor right before
    # or after it (in turns), whose ratio a drift of the host's speed over
    # the round does not move
    for r in range(reps):
        for m in monitors:
            alone = None
            if m[0] != 'none' and r % 2:
                alone = spin_once(iters)
            with Monitor(*m):
                spin[m].append(spin_once(iters))
            if m[0] != 'none' and not r % 2:
                alone = spin_once(iters)
            if alone:
                pair[m].append(spin[m][-1] / alone)
            with Monitor(*m):
                tput[m].append(netns_iperf3(1 if SMOKE else 3))
    srv.kill()
    subprocess.run(['ip', 'netns', 'del', 'kpmb-r'])
    for m in monitors:
        s, t, p = sorted(spin[m]), sorted(tput[m]), sorted(pair[m])
        emit('perturb', cpus=cpus, monitor=m[0],
             interval_ms=m[1] or '', reps=reps,
             spin_ns=s[len(s) // 2], spin_min_ns=s[0],
             spin_all=':'.join(map(str, s)),
             paired=f'{p[len(p) // 2]:.4f}' if p else '',
             paired_all=':'.join(f'{x:.4f}' for x in p),
             iperf3_gbps=f'{t[len(t) // 2]:.4f}',
             iperf3_all=':'.join(f'{x:.4f}' for x in t))


def cyclictest(loops):
    """cyclictest's wake-up latencies of a thread on every CPU at 1 ms,
    all threads' together, in us, sorted (its histogram)"""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, 'ct.json')
        subprocess.run(['cyclictest', '-m', '-q', '-S', '-p', '90', '-i',
                        '1000', '-l', str(loops), '-h', '100000',
                        f'--json={out}'], stdout=subprocess.DEVNULL,
                       check=True)
        with open(out) as f:
            threads = json.load(f)['thread'].values()
    lat = []
    for t in threads:
        for us, n in t['histogram'].items():
            lat += [int(us)] * int(n)
        # beyond the histogram: its max stands for them
        lat += [t['max']] * (t['cycles'] - sum(map(int,
                                                   t['histogram'].values())))
    return sorted(lat)


def rt(cpus):
    """cyclictest beside no monitor, K and KD, in turns"""
    rounds, loops = (1, 500) if SMOKE else (5, 5000)
    monitors = {'none': None, 'K': [],
                'KD': ['--ifname', 'lo', '--dev-interval', '10']}
    lat = {m: [] for m in monitors}
    for _ in range(rounds):
        for m, args in monitors.items():
            p = None
            if args is not None:
                p = subprocess.Popen([TOOL, 'record', '--interval', '1',
                                      '--duration', '3600'] + args,
                                     stdout=subprocess.DEVNULL)
                time.sleep(0.5)
            lat[m] += cyclictest(loops)
            if p:
                p.terminate()
                p.wait()
    for m, v in lat.items():
        v.sort()
        emit('rt', cpus=cpus, kernel=os.uname().release, monitor=m,
             samples=len(v), min_us=v[0], p50_us=pct(v, 50),
             p99_us=pct(v, 99), p999_us=pct(v, 99.9), max_us=v[-1],
             mean_us=f'{sum(v) / len(v):.1f}')


def sessions_now():
    """{id: (samples, cost_ns, sample_size)} from debugfs"""
    with open(SESSIONS) as f:
        head, *rows = [line.split() for line in f.readlines()]
    c = {k: i for i, k in enumerate(head)}
    return {r[c['id']]: (int(r[c['samples']]), int(r[c['cost_ns']]),
                         r[c['sample_size']]) for r in rows}


def steady_cost(n, window):
    """the sampler's ns a sample over @window s, once @n sessions sample"""
    for _ in range(600):
        if len(sessions_now()) >= n:
            break
        time.sleep(0.1)
    a = sessions_now()
    time.sleep(window)
    b = sessions_now()
    both = [k for k in a if k in b]
    samples = sum(b[k][0] - a[k][0] for k in both)
    cost = sum(b[k][1] - a[k][1] for k in both)
    return len(both), round(cost / samples) if samples else '', \
        b[both[0]][2] if both else ''


def scale(cpus):
    counts = [1, 4] if SMOKE else [1, 4, 16, 64]
    window = 1 if SMOKE else 3
    for n in counts:
        ps = [subprocess.Popen([TOOL, 'record', '--interval', '10',
                                '--duration', '3600'],
                               stdout=subprocess.DEVNULL) for _ in range(n)]
        seen, ns, _ = steady_cost(n, window)
        for p in ps:
            p.terminate()
        for p in ps:
            p.wait()
        emit('scale', cpus=cpus, sessions=seen, netdevs=0, sampler_ns=ns)
    devs = [0, 1, 4] if SMOKE else [0, 1, 4, 16]
    subprocess.run('for i in $(seq 16); do ip link add kpmb$i type veth '
                   'peer name kpmc$i; ip link set kpmb$i up; '
                   'ip link set kpmc$i up; done', shell=True, check=True)
    for d in devs:
        args = [TOOL, 'record', '--interval', '10', '--duration', '3600']
        for i in range(1, d + 1):
            args += ['--ifname', f'kpmb{i}']
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        seen, ns, size = steady_cost(1, window)
        p.terminate()
        p.wait()
        emit('scale', cpus=cpus, sessions=seen, netdevs=d, sampler_ns=ns,
             sample_bytes=size)
    subprocess.run('for i in $(seq 16); do ip link del kpmb$i; done',
                   shell=True)


def main():
    cpus = os.cpu_count()
    # a guest's lo starts down; the benchmarks sample it and load it
    subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)
    todo = [a for a in sys.argv[1:] if not a.startswith('--')] or \
        ['cost', 'format']
    for t in todo:
        {'cost': cost, 'busy': busy, 'format': fmt, 'timer': timer,
         'perturb': perturb, 'scale': scale, 'rt': rt}[t](cpus)
    return 0


if __name__ == '__main__':
    sys.exit(main())
