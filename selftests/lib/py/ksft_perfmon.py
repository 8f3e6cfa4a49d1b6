# SPDX-License-Identifier: GPL-2.0
"""What the CPUs and the NICs of both endpoints did while a driver
selftest ran, from the ksft_perfmon module, as KTAP metric lines.

    from lib.py import ksft_run, NetDrvEpEnv
    from ksft_perfmon import PerfMonitor

    def test(cfg):
        with PerfMonitor(cfg) as mon:
            run_traffic()
            mon.metric("throughput", gbps, policy=THROUGHPUT_POLICY)

`ksft-perfmon-nl record` runs on the local host and, deployed with
cfg.remote.deploy(), on the remote one, sampling cfg.ifname and
cfg.remote_ifname. When the block ends, the policy lines of every metric
seen and then the observations of both hosts (host "local" and
"remote"), ordered by time, are printed: before the test case's result
line, as the metric format wants. Times are seconds since the test case
started: the PerfMonitor's creation, or start_ns (CLOCK_MONOTONIC ns).
The remote's record runs with --control over the one connection that
starts it (an ssh, an ip netns exec): its clock is lined up with ours by
requests on that connection, to within half a round trip, and the end
of its standard input stops it, so it samples as long as ours give or
take that trip. mon.remote_trip_s is the round trip the clock was
lined up in.

With the kernel library's metric API (ksft_metric() and
ksft_metric_aggregate(), net/lib/py/ksft.py), a PerfMonitor entered in
a test case works as that library's SystemMonitor does, and is one
under that name: it turns the library's metric reporting on for its
block (so that Iperf3Runner reports its throughput and retransmits),
its times are from the case's start (KSFT_METRICS_START), and its
policies and observations are the case's own, which the library prints
before the case's result line, each policy once.

The module must be loaded on both hosts: on a host without it, record
does not start, and entering the block raises PerfMonitorError with
record's message ("is the ksft_perfmon module loaded?") once what it
started is stopped; so does a record that is not sampling after
ready_s. A remote's record whose connection is lost (an ssh that
exits 255) is named in a "# " line when the block ends, and the other
host's lines are printed still. The tool is found in $KSFT_PERFMON_NL,
in this tree's tools/, or on $PATH.
"""

import fcntl
import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

import lib.py
from lib.py import bkg

POLICY = '# ktap-metric-policy-json: '
OBS = '# ktap-metric-json: '


def _dumps(obj):
    return json.dumps(obj, allow_nan=False, separators=(',', ':'),
                      sort_keys=True)


def _tool():
    path = os.environ.get('KSFT_PERFMON_NL')
    if not path:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            '..', '..', '..', 'tools', 'ksft-perfmon-nl')
        if not os.access(path, os.X_OK):
            path = shutil.which('ksft-perfmon-nl')
    if not path or not os.access(path, os.X_OK):
        raise FileNotFoundError('ksft-perfmon-nl not found: set '
                                'KSFT_PERFMON_NL')
    return os.path.abspath(path)


class PerfMonitorError(Exception):
    pass


def _case_library():
    """(the library's ksft module, its case's start in CLOCK_MONOTONIC
    ns) when it has the metric API and a test case is running; else
    (None, None)"""
    aggregate = getattr(lib.py, 'ksft_metric_aggregate', None)
    ksft = aggregate and sys.modules.get(aggregate.__module__)
    if ksft is None:
        return None, None
    with ksft.KSFT_METRICS_LOCK:
        start = ksft.KSFT_METRICS_START
    if start is None:
        return None, None
    return ksft, round(start * 1e9)


def _end(p, timeout, terminate=False):
    """@p (a bkg()) ended and read within @timeout s, or killed then: one
    that does not end is an ssh whose host is gone (no FIN). Whether it
    ended"""
    try:
        p.process(terminate=terminate, fail=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        p.proc.kill()
        p.process(terminate=False, fail=False, timeout=10)
        return False
    return True


_stdin_lock = threading.Lock()


def _spawn_with_stdin(spawn):
    """spawn() with a pipe of ours as the standard input it passes on (a
    Remote's cmd() gives its Popen ours); (its result, the pipe's write
    end). While it runs our fd 0 is the pipe, for every thread: a process
    another thread starts then gets it too"""
    # above 2, so that neither end is the fd 0 it replaces
    ends = os.pipe()
    r, w = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3) for fd in ends)
    for fd in ends:
        os.close(fd)
    with _stdin_lock:
        try:
            saved = os.dup(0)
        except OSError:
            saved = None
        try:
            os.dup2(r, 0)
            return spawn(), w
        except BaseException:
            os.close(w)
            raise
        finally:
            if saved is None:
                os.close(0)
            else:
                os.dup2(saved, 0)
                os.close(saved)
            os.close(r)


def _line(fd, deadline):
    """the next line of @fd, bytes without its newline (the last may have
    none); None at its end; TimeoutError, with what came of the line,
    past @deadline"""
    line = b''
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(line)
        c = os.read(fd, 1)      # no more: the rest is the tool's
        if not c:
            return line or None
        if c == b'\n':
            return line
        line += c


class _Recorder:
    """one `record` on one host: here, stopped by its pid; on the remote,
    a record --control over the one connection that runs it, its clock
    lined up and its time base given there, stopped by the end of its
    standard input"""

    def __init__(self, tool, host_label, ifname, base, interval_ms, ring,
                 metrics, host=None, ready_s=30):
        self.host, self.label = host, host_label
        self.control = None     # a remote's standard input
        args = [tool, 'record', '--interval', str(interval_ms),
                '--host', host_label]
        if host is None:
            args += ['--time-base', str(base), '--duration',
                     str(7 * 24 * 3600)]
        else:
            args += ['--control']
        if ring:
            args += ['--ring', str(ring)]
        if metrics:
            args += ['--metrics', ','.join(metrics)]
        if ifname:
            args += ['--ifname', ifname]
        # "ready PID" comes on stderr: a remote passes no other descriptor.
        # Before it, a remote's shell says its pid, record's once it
        # execs, so that a record that never says it is ready is stopped
        # there too, with what its shell started
        comm = 'KSFT_READY_FD=2 exec ' + shlex.join(args)
        self.shell_pid = None
        self.offset_ns = self.trip_ns = None
        deadline = time.monotonic() + ready_s
        if host is None:
            self.bkg = bkg(['/bin/sh', '-c', comm], fail=False)
        else:
            comm = f'/bin/sh -c {shlex.quote("echo pid $$ >&2; " + comm)}'
            self.bkg, self.control = _spawn_with_stdin(
                lambda: bkg(comm, host=host, fail=False))
        try:
            if host is not None:
                self._line_up(base, deadline, ready_s)
            self.pid = self._ready(deadline, ready_s)
        except PerfMonitorError:
            raise
        except BaseException:
            # stopped whatever stopped us (^C): the remote too
            self._close_control()
            _end(self.bkg, 10, terminate=True)
            raise

    def _line_up(self, base, deadline, ready_s):
        """the remote's clock, as record --control answers on its stdout:
        of three requests, the answer of the shortest round trip, as of
        its middle; then @base on that clock to the record. Lines before
        an answer (a login's) are kept for a message"""
        fd, said, best = self.bkg.proc.stdout.fileno(), [], None
        try:
            for _ in range(3):
                sent = time.monotonic_ns()
                os.write(self.control, b'clock\n')
                while (line := _line(fd, deadline)) is not None and \
                        not line.startswith(b'clock '):
                    said.append(line.decode(errors='replace'))
                seen = time.monotonic_ns()
                if line is None:
                    self._fail('did not start', said, b'', exited=True)
                trip = seen - sent
                if best is None or trip < best[0]:
                    best = (trip, int(line[6:]) - (sent + trip // 2))
            self.trip_ns, self.offset_ns = best
            os.write(self.control, f'base {base + self.offset_ns}\n'.encode())
        except TimeoutError as e:
            said.append(e.args[0].decode(errors='replace'))
            self._fail(f'not sampling after {ready_s} s', said, b'')
        except (OSError, ValueError) as e:
            # the pipe to a command that is gone, or no clock
            self._fail(f'did not start ({e})', said, b'', exited=True)

    def _ready(self, deadline, timeout):
        """record's pid, once it says it is ready; lines before it (a
        remote's shell may print some) are kept for a message"""
        fd = self.bkg.proc.stderr.fileno()
        said = []
        while True:
            try:
                line = _line(fd, deadline)
            except TimeoutError as e:
                self._fail(f'not sampling after {timeout} s', said,
                           e.args[0])
            if line is None:
                self._fail('did not start', said, b'', exited=True)
            text = line.decode(errors='replace').strip()
            m = re.fullmatch(r'(pid|ready) ([0-9]+)', text)
            if m and m[1] == 'ready':
                return int(m[2])
            if (m and self.host is not None and self.shell_pid is None and
                    int(m[2]) > 1):
                self.shell_pid = int(m[2])
            else:
                said.append(text)

    def _close_control(self):
        if self.control is not None:
            os.close(self.control)
            self.control = None

    def _fail(self, what, said, partial, exited=False):
        """@said, @partial: record's stderr so far; @exited: it ended
        (its own status, not a SIGTERM's, and nothing left to stop)"""
        self._close_control()
        if not exited and self.host is not None and self.shell_pid is None:
            # the remote shell's pid may be on its way still
            self._wait_for_pid(partial, said)
        if exited:
            try:
                self.bkg.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                exited = False
        if not exited and self.shell_pid is not None:
            # its process group (sshd makes a session of each command),
            # else the shell alone, as an "ip netns exec" remote runs it
            self._remote(f'kill -TERM -{self.shell_pid} 2>/dev/null || '
                         f'kill -TERM {self.shell_pid}')
        _end(self.bkg, 10, terminate=True)
        # the shell's pid, when it came after what was read
        rest = [x for x in self.bkg.stderr.splitlines()
                if not re.fullmatch(r'pid [0-9]+', x)]
        err = '\n'.join(said + [partial.decode(errors='replace')] +
                        rest).strip()
        raise PerfMonitorError(f'ksft-perfmon-nl record on {self.label} '
                               f'{what}: {err or "no message"} (exit '
                               f'status {self.bkg.ret})')

    def _wait_for_pid(self, partial, said, grace=10):
        """the remote shell's pid, from its stderr's lines within @grace
        s (@partial: what came of the first); the others go to @said"""
        fd, deadline = self.bkg.proc.stderr.fileno(), time.monotonic() + grace
        try:
            while (line := _line(fd, deadline)) is not None:
                line, partial = partial + line, b''
                m = re.fullmatch(rb'pid ([0-9]+)', line)
                if m and int(m[1]) > 1:
                    self.shell_pid = int(m[1])
                    return
                said.append(line.decode(errors='replace').strip())
        except TimeoutError:
            pass

    def _remote(self, comm):
        """@comm on the remote, bounded: one that does not answer (a
        host gone, no FIN) is given up"""
        _end(bkg(comm, host=self.host, fail=False), 30)

    def stop(self):
        """record told to stop: SIGTERM here, the end of its standard
        input on the remote"""
        if self.host is None:
            os.kill(self.pid, signal.SIGTERM)
        else:
            # a connection lost already says so in its exit status
            self._close_control()

    def output(self):
        """record's output, once it stopped"""
        answered = _end(self.bkg, 120)
        # 3: samples were lost, which record says in its output
        if not answered or self.bkg.ret not in (0, 3):
            err = self.bkg.stderr.strip()
            why = err or 'no message'
            if self.host is not None and (self.bkg.ret == 255 or
                                          not answered):
                # ssh's own status: its connection failed or was lost
                why = 'its connection was lost' + (f': {err}' if err else '')
            raise PerfMonitorError(f'ksft-perfmon-nl record on {self.label}'
                                   f' exited {self.bkg.ret}: {why}')
        return self.bkg.stdout


class PerfMonitor:
    """Samples both endpoints of @cfg (a NetDrvEpEnv) while in a `with`
    block, and prints their metric lines and those given to metric() when
    it ends. @interval_ms: sampling interval; @ring: samples the kernel
    keeps between reads (record's default when None); @start_ns: the test
    case's start in CLOCK_MONOTONIC ns (default: now); @metrics: names of
    the optional metrics to record too, or ['all'] (record --metrics);
    @ready_s: how long each record may take to start sampling, after
    which PerfMonitorError is raised and what started is stopped, on the
    remote too. Entered in a test case of the library with the metric
    API, the case's start is the clock, and @start_ns must not be given.
    The remote's command is started with our fd 0 a pipe for the moment:
    a process that another thread starts then gets it too."""

    def __init__(self, cfg, interval_ms=1000, ring=None, start_ns=None,
                 tool=None, metrics=(), ready_s=30):
        self.cfg = cfg
        self.ready_s = ready_s
        self.interval_ms, self.ring = interval_ms, ring
        self.metrics = list(metrics)
        self._ksft = None
        self._start_ns_given = start_ns is not None
        self.start_ns = time.monotonic_ns() if start_ns is None else start_ns
        self.tool = tool or _tool()
        self._policies = {}     # name: JSON text, in registration order
        self._obs = []          # (time, order, line)
        self._recorders = []
        self.remote_trip_s = None

    def now(self):
        """seconds since the test case started, as the lines have it"""
        return round((time.monotonic_ns() - self.start_ns) / 1e9, 6)

    def _reporting(self, on):
        """the library's metric reporting, where it has it, on or off"""
        reporting = getattr(self._ksft, 'ksft_metric_reporting', None)
        if reporting is not None:
            reporting(on)

    def __enter__(self):
        self._ksft, case_ns = _case_library()
        if self._ksft is not None:
            if self._start_ns_given:
                raise ValueError('start_ns: in a test case, the times are '
                                 'from its start, KSFT_METRICS_START')
            self.start_ns = case_ns
        self._reporting(True)
        try:
            self._start()
        except BaseException:
            self._reporting(False)
            raise
        return self

    def _start(self):
        self._recorders.append(_Recorder(
            self.tool, 'local', self.cfg.ifname, self.start_ns,
            self.interval_ms, self.ring, self.metrics,
            ready_s=self.ready_s))
        try:
            remote_tool = self.cfg.remote.deploy(self.tool)
            self._recorders.append(_Recorder(
                remote_tool, 'remote', self.cfg.remote_ifname, self.start_ns,
                self.interval_ms, self.ring, self.metrics,
                host=self.cfg.remote, ready_s=self.ready_s))
            self.remote_trip_s = self._recorders[-1].trip_ns / 1e9
        except BaseException:
            self._stop_all()
            raise

    def _stop_all(self):
        """every record stopped at once, then their outputs"""
        outs = []
        for r in self._recorders:
            r.stop()
        for r in self._recorders:
            try:
                outs.append(r.output())
            except PerfMonitorError as e:
                print(f'# {e}')
        self._recorders = []
        return outs

    def __exit__(self, ex_type, ex_value, ex_tb):
        self._reporting(False)
        outs = self._stop_all()
        try:
            for out in outs:
                self._take(out)
            self.flush()
        except (ValueError, RuntimeError, TypeError) as e:
            # a policy the case gave otherwise, or one the library does
            # not take: the block's own exception is the one to see
            if ex_type is None:
                raise
            print(f'# the metrics of ksft_perfmon: {e}')

    def _policy(self, name, text):
        old = self._policies.get(name)
        if old is not None and old != text:
            raise ValueError(f'policy of {name} conflicts: {text} after '
                             f'{old}')
        self._policies[name] = text

    def _take(self, out):
        """record's lines: policies, observations, diagnostics"""
        for line in out.splitlines():
            if line.startswith(POLICY):
                text = line[len(POLICY):]
                self._policy(json.loads(text)['name'], text)
            elif line.startswith(OBS):
                self._obs.append((json.loads(line[len(OBS):])['time'],
                                  len(self._obs), line))
            elif line.startswith('# '):
                print(line)

    def metric(self, name, value, policy=None, shape='scalar', host='local',
               time_s=None, **labels):
        """a test's own observation, e.g. a throughput, with the policy of
        its name (once is enough; the same again is allowed)"""
        if policy is not None:
            self._policy(name, _dumps(dict(policy, name=name)))
        t = self.now() if time_s is None else round(time_s, 6)
        line = OBS + _dumps(dict(labels, name=name, shape=shape, time=t,
                                 value=value, host=host))
        self._obs.append((t, len(self._obs), line))

    def flush(self):
        """print what was collected: policies, then observations by time;
        in a test case of the library, give them to the case instead"""
        policies, obs = self._policies, sorted(self._obs)
        self._policies, self._obs = {}, []
        if self._ksft is not None:
            self._to_case(policies, obs)
            return
        for text in policies.values():
            print(POLICY + text)
        for _, _, line in obs:
            print(line)

    def _to_case(self, policies, obs):
        """@policies through ksft_metric_aggregate(), which prints each
        once; @obs into the case's observations, by time among those
        there. Not through ksft_metric(): that stamps the time of its
        call, and a sample has the time the kernel took it"""
        ksft = self._ksft
        for text in policies.values():
            policy = json.loads(text)
            ksft.ksft_metric_aggregate(policy.pop('name'), **policy)
        obs = [json.loads(line[len(OBS):]) for _, _, line in obs]
        with ksft.KSFT_METRICS_LOCK:
            if ksft.KSFT_METRICS is None:
                raise RuntimeError('PerfMonitor ended after its test case')
            # stable, and nearly linear on two runs in order
            ksft.KSFT_METRICS.extend(obs)
            ksft.KSFT_METRICS.sort(key=lambda m: m['time'])


# for a test of the kernel's library: ksft_perfmon's, in place of its own
SystemMonitor = PerfMonitor
