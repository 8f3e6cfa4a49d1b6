#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""`ksft-perfmon-nl record` under CPU hotplug, at 1 kHz for a minute, and
with a tiny ring and a reader that stalls. Needs the module loaded and
root; KTAP output, non-zero exit when a test failed.

usage: record_test.py [--kernel] [--except TEST]... [TEST...]
  TEST      a test to run (default: all, or with --kernel those the kernel
            takes part in)
  --except  leave TEST out (repeatable)
"""

import fcntl
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
import raw_samples   # noqa: E402
from ktap import run_all   # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, '..', '..', 'tools', 'ksft-perfmon-nl')
CLOCK_STEP = os.path.join(HERE, '..', 'lib', 'clock_step.so')
LINE = re.compile(r'^# (ktap-metric-policy-json|ktap-metric-json): (.*)$')
LOST = re.compile(r'^# ksft-perfmon: (\d+) samples lost '
                  r'\(kernel counted (\d+)\)')
MISSED = re.compile(r'^# ksft-perfmon: (\d+) timer periods missed')
CPU_SYS = '/sys/devices/system/cpu'
SESSIONS = '/sys/kernel/debug/ksft_perfmon/sessions'
HEAD = ('id', 'interval_ns', 'ring_size', 'sample_size', 'samples', 'lost',
        'missed', 'cost_ns', 'portid', 'ifindex', 'mem_bytes')


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
        try:
            return rec.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            # a process record started, and left, holds its output open
            t.check(False, "record's output still open once it was killed")
            return '', ''



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
        return 'SKIP: no CPU can go offline'
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
    start = time.monotonic()
    rec = record('--raw', '--interval', '1', '--ring', '4096',
                 '--duration', '60')
    out, err = finish(t, rec, 600)
    wall = time.monotonic() - start
    objs, diag, bad = raw_samples.parse(out)
    t.check(rec.returncode == 0, f'record exited {rec.returncode}: {err}')
    t.check(not bad, f'not samples: {bad[:3]}')
    t.check(not any(LOST.match(d) for d in diag), f'{diag}')
    seqs = [o['seq'] for o in objs]
    t.check(seqs == list(range(len(seqs))), 'a gap in the sequence numbers')
    n = len(objs)
    missed = sum(int(m.group(1)) for m in map(MISSED.match, diag) if m)
    print(f'# {n} samples in 60 s ({n / 60:.0f}/s), {missed} periods '
          f'missed, record ran {wall:.1f} s, on {possible_cpus()} CPUs')
    # Each 1 ms of the session's life is a sample or a period the kernel
    # counted as missed: it lived 60 s at least, and no longer than record
    # ran. A sampler on the wrong period, or one that lost periods
    # uncounted, fails here whatever the machine's speed.
    t.check(59400 <= n + missed <= wall * 1000 + 1,
            f'{n} samples and {missed} missed periods in {wall:.3f} s')
    # and it kept up at a tenth of the rate at least: 565 a second was the
    # slowest seen, on the debug kernel with another guest beside it
    t.check(n >= 6000, f'{n / 60:.0f} samples a second, below 100')
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
    read = sum(o['name'] == 'cpu.time.usr' for o in obs)
    if t.check(m is not None, f'no "samples lost" line: {diag}'):
        gaps = int(m.group(1))
        print(f'# {lost[0]}; {read} samples read')
        # A second of the three stopped, with a ring of 4: about a third
        # of what the kernel sampled is lost, at whatever rate it
        # sampled, and a sixth if record was slow to start and missed
        # the first stop. A tenth is the floor.
        t.check(m.group(1) == m.group(2) and gaps * 10 >= gaps + read,
                f'gaps {gaps}, kernel {m.group(2)}, {read} samples read')


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


def start_ready(t, *args):
    """record -- ARGS started with a KSFT_READY_FD pipe; once it says it
    samples: (record, COMMAND's pid)"""
    r, w = os.pipe()
    env = dict(os.environ, KSFT_READY_FD=str(w))
    rec = subprocess.Popen([TOOL, 'record', '--interval', '10', *args],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=env, pass_fds=(w,))
    os.close(w)
    with os.fdopen(r) as f:
        ready = f.readline()
    t.check(ready == f'ready {rec.pid}\n', f'ready line {ready!r}')
    child = None
    for _ in range(500):
        kids = children(rec.pid)
        if kids:
            child = kids[0]
            break
        if rec.poll() is not None:
            break
        time.sleep(0.01)
    return rec, child


def children(pid):
    """the pids whose parent is @pid, from /proc/*/stat (the debug
    kernel has no /proc/PID/task/TID/children)"""
    out = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open(f'/proc/{d}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(d))
    return out


def alive(pid):
    """@pid exists and is not a zombie"""
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def wait_file(path, seconds=10):
    for _ in range(seconds * 100):
        if os.path.exists(path) and os.path.getsize(path):
            return True
        time.sleep(0.01)
    return False


def stop_reaches_the_command_group(t):
    """SIGTERM to record stops COMMAND's children too: bash -c with a
    sleep in the background. record exits as a shell would for a
    command that SIGTERM ended, 143, after printing its lines. With
    SIGINT, which bash's background job ignores, bash ends but the sleep
    does not: record waits for the group, and SIGKILL ends the sleep
    --kill-after later."""
    pidfile = f'/tmp/kpm-grandchild.{os.getpid()}'
    for sig in (signal.SIGTERM, signal.SIGINT):
        rec, _ = start_ready(t, '--kill-after', '2', '--', 'bash', '-c',
                             f'sleep 1000 & echo $! > {pidfile}; wait')
        if not t.check(wait_file(pidfile), 'no grandchild pid'):
            rec.kill()
            finish(t, rec, 10)
            continue
        with open(pidfile) as f:
            grandchild = int(f.read())
        os.unlink(pidfile)
        rec.send_signal(sig)
        out, err = finish(t, rec, 30)
        t.check(rec.returncode == 128 + sig,
                f'{sig.name}: record exited {rec.returncode}: {err}')
        obs, _, bad = parse(out)
        t.check(obs and not bad, f'{len(obs)} observations, {bad[:3]}')
        t.check(not alive(grandchild),
                f'{sig.name}: the grandchild {grandchild} survived')
        if alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)


def stop_as_soon_as_ready(t):
    """SIGTERM the moment record says it is ready, which is just before
    it starts COMMAND: the stop is never lost, whether COMMAND had
    started (exit 143) or not yet (exit 0), 20 times; --kill-after is
    long, so that a stop that was lost shows as a record still running"""
    codes = []
    for _ in range(20):
        r, w = os.pipe()
        rec = subprocess.Popen([TOOL, 'record', '--interval', '10',
                                '--kill-after', '600', '--', 'sleep', '1000'],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, pass_fds=(w,),
                               env=dict(os.environ, KSFT_READY_FD=str(w)))
        os.close(w)
        with os.fdopen(r) as f:
            f.readline()
        rec.send_signal(signal.SIGTERM)
        _, err = finish(t, rec, 30)
        codes.append(rec.returncode)
        if not t.check(rec.returncode in (0, 128 + signal.SIGTERM),
                       f'record exited {rec.returncode}: {err}'):
            break
    print(f'# exit statuses: {codes}')


def command_that_ignores_sigterm(t):
    """a COMMAND that ignores SIGTERM gets SIGKILL --kill-after later;
    and with a long --kill-after, a second signal to record sends it at
    once. Either way record says so and exits 137, with its lines."""
    flag = f'/tmp/kpm-ignoring.{os.getpid()}'
    for kill_after, second in (('1', None), ('300', signal.SIGINT)):
        rec, child = start_ready(t, '--kill-after', kill_after, '--', 'bash',
                                 '-c', f"trap '' TERM INT; echo > {flag}; "
                                 'exec sleep 1000')
        if not t.check(wait_file(flag), 'COMMAND never ignored SIGTERM'):
            rec.kill()
            finish(t, rec, 10)
            continue
        os.unlink(flag)
        rec.send_signal(signal.SIGTERM)
        if second:
            time.sleep(0.5)
            t.check(rec.poll() is None, 'record did not wait for COMMAND')
            rec.send_signal(second)
        out, err = finish(t, rec, 30)
        t.check(rec.returncode == 128 + signal.SIGKILL and
                'did not stop on' in err,
                f'--kill-after {kill_after}: record exited {rec.returncode}: {err}')
        t.check(child and not alive(child), f'COMMAND {child} still runs')
        obs, _, bad = parse(out)
        t.check(obs and not bad, f'{len(obs)} observations, {bad[:3]}')


NETLINK_GENERIC, GENL_ID_CTRL = 16, 16
CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 3, 1, 2
KPM_CMD_SESSION_DEL, KPM_A_SESSION_ID = 3, 1


def genl(sock, family, cmd, attrs, ack):
    """one request of @cmd with u32/str @attrs: the reply's attributes,
    or the errno of the error or, with @ack, of the ACK"""
    body = b''
    for typ, val in attrs:
        data = val.encode() + b'\0' if isinstance(val, str) else \
            struct.pack('=I', val)
        body += struct.pack('=HH', 4 + len(data), typ) + data
        body += b'\0' * (-len(body) % 4)
    msg = struct.pack('=BBH', cmd, 1, 0) + body
    flags = 1 | (4 if ack else 0)       # NLM_F_REQUEST, NLM_F_ACK
    sock.send(struct.pack('=IHHII', 16 + len(msg), family, flags, 1, 0) + msg)
    buf = sock.recv(65536)
    length, mtype = struct.unpack_from('=IH', buf)
    if mtype == 2:          # NLMSG_ERROR
        return -struct.unpack_from('=i', buf, 16)[0]
    out, off = {}, 20
    while off + 4 <= length:
        alen, atype = struct.unpack_from('=HH', buf, off)
        out[atype] = buf[off + 4:off + alen]
        off += (alen + 3) & ~3
    return out


def session_del(sid):
    """session-del by root, as another socket: 0 or the errno"""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                       NETLINK_GENERIC) as sock:
        sock.bind((0, 0))
        fam = genl(sock, GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                   [(CTRL_ATTR_FAMILY_NAME, 'ksft_perfmon')], False)
        if not isinstance(fam, dict):
            return fam
        fid = struct.unpack('=H', fam[CTRL_ATTR_FAMILY_ID][:2])[0]
        return genl(sock, fid, KPM_CMD_SESSION_DEL, [(KPM_A_SESSION_ID, sid)],
                    True)


def kernel_error_while_recording(t):
    """the session deleted under record (by root, from another socket):
    the next read fails with ENOENT. record stops and reaps COMMAND,
    prints what it had read with a diagnostic line, and exits 1."""
    before = set(session_ids())
    rec, child = start_ready(t, '--', 'sleep', '1000')
    new = [i for i in session_ids() if i not in before]
    if not t.check(len(new) == 1, f'sessions {before} then {new}'):
        rec.kill()
        return None
    time.sleep(0.3)
    t.check(session_del(new[0]) == 0, 'session-del failed')
    out, err = finish(t, rec, 30)
    t.check(rec.returncode == 1, f'record exited {rec.returncode}: {err}')
    t.check('No such file or directory' in err, f'no error on stderr: {err}')
    obs, diag, bad = parse(out)
    t.check(obs and not bad, f'{len(obs)} observations, {bad[:3]}')
    t.check(any(d.startswith('# ksft-perfmon: recording ended early')
                for d in diag), f'no diagnostic line: {diag}')
    t.check(child and not alive(child), f'COMMAND {child} still runs')


def session_ids():
    p = subprocess.run([TOOL, 'show'], capture_output=True, text=True)
    return [int(line.split()[1]) for line in p.stdout.splitlines()
            if line.startswith('session ')]


def output_and_ready_fd(t):
    """record > /dev/full exits 1 and says so; KSFT_READY_FD naming a
    descriptor the caller does not have is refused before record opens
    its own, and COMMAND does not inherit the variable"""
    with open('/dev/full', 'w') as full:
        p = subprocess.run([TOOL, 'record', '--interval', '10',
                            '--duration', '0.2'], stdout=full,
                           stderr=subprocess.PIPE, text=True)
    t.check(p.returncode == 1 and 'cannot write the output' in p.stderr,
            f'> /dev/full: exit {p.returncode}, {p.stderr!r}')

    # 3 is the first descriptor record would open, were 3 not open here
    p = subprocess.run([TOOL, 'record', '--interval', '10', '--duration',
                        '0.2'], capture_output=True, text=True,
                       env=dict(os.environ, KSFT_READY_FD='3'),
                       close_fds=True)
    t.check(p.returncode == 1 and
            'KSFT_READY_FD: 3 is not an open file descriptor' in p.stderr,
            f'KSFT_READY_FD=3, closed: exit {p.returncode}, {p.stderr!r}, '
            f'{len(p.stdout)} bytes out')

    rec, _ = start_ready(t, '--', 'sh', '-c',
                         'echo "[${KSFT_READY_FD-unset}]" >&2')
    out, err = finish(t, rec, 30)
    t.check(rec.returncode == 0 and '[unset]' in err,
            f'COMMAND saw KSFT_READY_FD: exit {rec.returncode}, {err!r}')


def write_blocked(proc, seconds=60):
    """where @proc sleeps once it waits in a write to a full pipe with no
    signal pending, or when it does not within @seconds. pipe_write's
    wait (anon_pipe_write's on 7.3) is the one sure sign that the pipe is
    full: a write that does not fit in what is left of the pipe's last
    page waits with that page part empty. A signal sent before the call
    has been taken when this returns: a read of the pipe right after a
    kill() would otherwise race with the signal's wake-up and let the
    write go on before it is hit."""
    where = ''
    for _ in range(seconds * 100):
        try:
            with open(f'/proc/{proc.pid}/status') as f:
                pending = [int(line.split()[1], 16) for line in f
                           if line.startswith(('SigPnd:', 'ShdPnd:'))]
            with open(f'/proc/{proc.pid}/wchan') as f:
                where = f.read().strip()
        except (OSError, ValueError):
            pending, where = [], ''
        if proc.poll() is not None:
            break
        if where.endswith('pipe_write') and pending == [0, 0]:
            break
        time.sleep(0.01)
    return where


def stopped_again_while_writing(t):
    """record stopped, its output a full pipe that its reader drains only
    later, and stopped again while it waits in write(): the write goes
    on, the output is whole and record exits 0. A handler without
    SA_RESTART failed that write with EINTR, which stdio took for an
    output error: lines lost, "cannot write the output", exit 1."""
    r, w = os.pipe()
    size = fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    ready_r, ready_w = os.pipe()
    rec = subprocess.Popen([TOOL, 'record', '--raw', '--interval', '10',
                            '--duration', '3600'],
                           stdout=w, stderr=subprocess.PIPE, text=True,
                           pass_fds=(ready_w,),
                           env=dict(os.environ, KSFT_READY_FD=str(ready_w)))
    os.close(w)
    os.close(ready_w)
    # its handlers are in once it is ready
    with os.fdopen(ready_r) as f:
        f.readline()
    time.sleep(1)
    rec.send_signal(signal.SIGTERM)
    # a second of samples is far more than the pipe holds
    where = write_blocked(rec)
    t.check(where.endswith('pipe_write'), f'record waits in {where!r}')
    rec.send_signal(signal.SIGTERM)
    write_blocked(rec)
    with os.fdopen(r) as f:
        out = f.read()
    err = rec.stderr.read()
    rec.wait()
    objs, _, bad = raw_samples.parse(out)
    seqs = [o['seq'] for o in objs]
    print(f'# {len(out)} bytes through a pipe of {size}: samples '
          f'{seqs[:1]}..{seqs[-1:]}, {len(seqs)} in all')
    t.check(rec.returncode == 0 and not err,
            f'record exited {rec.returncode}: {err!r}')
    # a stretch of output lost shows as a gap, or a cut line
    t.check(len(seqs) > 50 and seqs == list(range(len(seqs))) and not bad,
            f'a gap in the sequence numbers, or not samples: {bad[:3]}')


# what the kernel takes part in, run on every kernel
def killed_record_replays_from_its_spool(t):
    """record --spool, SIGKILLed mid-run as a harness's timeout would: it
    prints nothing, and replay prints valid lines up to the last drain
    before the kill. A spool cut inside a sample replays without it; a
    record that ends on its own replays to its own lines."""
    with tempfile.TemporaryDirectory() as d:
        replay_a_killed_record(t, d)


def replay_a_killed_record(t, d):
    spool, cut = os.path.join(d, 'spool'), os.path.join(d, 'cut')
    base = time.monotonic_ns()
    rec = record('--interval', '100', '--time-base', str(base), '--spool',
                 spool, '--', 'sleep', '60')
    time.sleep(3)
    killed = (time.monotonic_ns() - base) / 1e9
    rec.kill()
    out, _ = finish(t, rec, 60)
    t.check(out == '', f'a killed record printed {out[:200]!r}')

    p = subprocess.run([TOOL, 'replay', spool], capture_output=True,
                       text=True)
    obs, diag, bad = parse(p.stdout)
    times = [o['time'] for o in obs if o['name'] == 'cpu.time.usr']
    print(f'# killed at {killed:.3f} s; replayed {len(times)} samples, '
          f'the last at {times[-1] if times else None} s; {diag}')
    t.check(p.returncode == 0 and not bad and
            diag == ['# ksft-perfmon: replayed from a spool'],
            f'replay exited {p.returncode}: {p.stderr} {bad[:3]} {diag}')
    # drained every 200 ms at most, and written out at each drain
    t.check(times and times == sorted(times) and
            killed - 1.0 <= times[-1] <= killed,
            f'samples up to {times[-1] if times else None} s')

    with open(spool, 'rb') as f, open(cut, 'wb') as g:
        g.write(f.read()[:-10])
    p = subprocess.run([TOOL, 'replay', cut], capture_output=True, text=True)
    obs, diag, bad = parse(p.stdout)
    t.check(p.returncode == 0 and not bad and
            sum(o['name'] == 'cpu.time.usr' for o in obs) ==
            len(times) - 1 and 'part of a sample' in ' '.join(diag),
            f'a cut spool: exit {p.returncode}, {diag}')
    link = os.path.join(d, 'link')
    os.symlink(spool, link)
    rec = record('--duration', '1', '--spool', link)
    out, err = finish(t, rec, 60)
    t.check(rec.returncode == 1 and 'cannot create' in err and
            os.path.getsize(spool) > 0,
            f'a spool at a symlink: exit {rec.returncode}, {err!r}')
    p = subprocess.run([TOOL, 'replay', '/proc/self/status'],
                       capture_output=True, text=True)
    t.check(p.returncode == 1 and 'not a spool' in p.stderr,
            f'not a spool: exit {p.returncode}, {p.stderr!r}')

    rec = record('--interval', '100', '--duration', '1', '--spool', spool)
    out, err = finish(t, rec, 60)
    p = subprocess.run([TOOL, 'replay', spool], capture_output=True,
                       text=True)
    lines = [x for x in out.splitlines() if LINE.match(x)]
    again = [x for x in p.stdout.splitlines() if LINE.match(x)]
    t.check(rec.returncode == 0 and len(lines) > 10 and again == lines,
            f'record exited {rec.returncode}, {len(lines)} lines, '
            f'replayed {len(again)}, the same: {again == lines}')


def ring_of_record(*args, devs=('lo',)):
    """(exit status, stderr, the ring of its session, its sample size) of
    a record of 0.3 s of @devs with @args, its COMMAND reading debugfs"""
    with tempfile.NamedTemporaryFile('r') as f:
        p = subprocess.run([TOOL, 'record', *args,
                            *[a for d in devs for a in ('--ifname', d)],
                            '--', 'sh', '-c', f'sleep 0.3; tail -n1 '
                            f'{SESSIONS} > {f.name}'],
                           capture_output=True, text=True)
        row = dict(zip(HEAD, f.read().split()))
    return (p.returncode, p.stderr, int(row.get('ring_size', 0)),
            int(row.get('sample_size', 0)))


def sessions():
    """the rows of debugfs's sessions, by column name"""
    with open(SESSIONS) as f:
        return [dict(zip(HEAD, line.split())) for line in f.readlines()[1:]]


def default_ring_at_short_intervals(t):
    """record's default ring, 4 s of samples (0.8 s with --spool) from
    256 to 4096: 256 at 100 ms, 512 at 10 ms, 4096 at 1 ms, 1024 at 1 ms
    with --spool; halved while over 4 MiB (16 netdevs at 1 ms); and
    halved, without a word, where the module has room for 700 samples
    only: other sessions hold the rest of its 64 MiB"""
    with tempfile.TemporaryDirectory() as d:
        got = [ring_of_record('--interval', iv) for iv in ('100', '10', '1')]
        got.append(ring_of_record('--interval', '1', '--spool',
                                  os.path.join(d, 'spool')))
    t.check([g[:2] for g in got] == [(0, '')] * 4 and
            [g[2] for g in got] == [256, 512, 4096, 1024], f'rings {got}')
    # 16 netdevs: halved until the ring is 4 MiB at most
    subprocess.run('for i in $(seq 8); do ip link add kpmr$i type veth '
                   'peer name kpms$i; done', shell=True, check=True)
    try:
        devs = ['lo'] + [f'kpm{x}{i}' for i in range(1, 9)
                         for x in 'rs'][:15]
        rc, err, ring, size = ring_of_record('--interval', '1', devs=devs)
    finally:
        subprocess.run('for i in $(seq 8); do ip link del kpmr$i; done',
                       shell=True)
    want = 4096
    while want > 256 and want * size > 4 << 20:
        want //= 2
    t.check((rc, err) == (0, '') and size > 1024 and ring == want,
            f'16 netdevs, samples of {size} bytes: exit {rc}, ring {ring} '
            f'where {want}; {err!r}')
    print(f'# default rings {[g[2] for g in got]}; with 16 netdevs, {ring} '
          f'of {size} bytes')
    fillers, before = [], len(sessions())
    try:
        # sessions at 60 s of the sample size record's will have, each of
        # an owner of its own (a record), up to its 16 MiB: a ring and
        # the three samples a session holds besides it
        probe = subprocess.Popen([TOOL, 'record', '--interval', '60000',
                                  '--ring', '2', '--ifname', 'lo',
                                  '--duration', '600'],
                                 stdout=subprocess.DEVNULL)
        fillers.append(probe)
        for _ in range(100):
            if any(r['ring_size'] == '2' for r in sessions()):
                break
            time.sleep(0.1)
        size = int(next(r['sample_size'] for r in sessions()
                        if r['ring_size'] == '2'))
        used = sum(int(r['mem_bytes']) for r in sessions())
        left = (64 << 20) - used - 700 * size
        # a session of a netdev takes its ring and four samples more
        while left >= size * 5:
            ring = min(left // size - 4, (16 << 20) // size - 4, 65536)
            fillers.append(subprocess.Popen(
                [TOOL, 'record', '--interval', '60000', '--ring', str(ring),
                 '--ifname', 'lo', '--duration', '600'],
                stdout=subprocess.DEVNULL))
            left -= (ring + 4) * size
            for _ in range(100):
                if len(sessions()) == before + len(fillers):
                    break
                time.sleep(0.1)
        used = sum(int(r['mem_bytes']) for r in sessions())
        room = ((64 << 20) - used) // size - 4
        rc, err, ring, _ = ring_of_record('--interval', '1')
        t.check(512 <= room < 1024 and (rc, err, ring) == (0, '', 512),
                f'room for {room} samples of {size} bytes: exit {rc}, '
                f'ring {ring}, {err!r}')
        print(f'# room for {room} samples: record at 1 ms took a ring of '
              f'{ring}')
    finally:
        for p in fillers:
            p.terminate()
            p.wait()


KERNEL_TESTS = [cpu_hotplug, zero_loss_1khz, tiny_ring_stalled_reader,
                duration_when_time_passes_between_reads]
# record as a supervisor and its output: the same on every kernel
TOOL_TESTS = [stop_reaches_the_command_group, stop_as_soon_as_ready,
              command_that_ignores_sigterm, kernel_error_while_recording,
              output_and_ready_fd, stopped_again_while_writing,
              killed_record_replays_from_its_spool,
              default_ring_at_short_intervals]
TESTS = KERNEL_TESTS + TOOL_TESTS


def main():
    args, named, left_out = sys.argv[1:], [], []
    tests = TESTS
    while args:
        if args[0] == '--kernel':
            tests = KERNEL_TESTS
        elif args[0] == '--except' and len(args) > 1:
            args.pop(0)
            left_out.append(args[0])
        elif args[0].startswith('-'):
            print(__doc__.split('\n\n', 1)[1], file=sys.stderr, end='')
            return 2
        else:
            named.append(args[0])
        args.pop(0)
    unknown = set(named + left_out) - {f.__name__ for f in TESTS}
    if unknown:
        print(f'record_test.py: no test {", ".join(sorted(unknown))}',
              file=sys.stderr)
        return 2
    sys.stdout.reconfigure(line_buffering=True)
    tests = [f for f in tests if (not named or f.__name__ in named) and
             f.__name__ not in left_out]
    if not tests:
        print('record_test.py: no test left to run', file=sys.stderr)
        return 2
    return run_all('record', tests, announce=True)


if __name__ == '__main__':
    sys.exit(main())
