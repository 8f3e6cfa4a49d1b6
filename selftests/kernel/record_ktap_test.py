#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""`ksft-perfmon-nl record --ktap`: the metrics of every leaf case of a
KTAP program, no program changed. Needs the module loaded and root; KTAP
output, non-zero exit when a test failed.

The programs: record_ktap_prog.py, whose cases are known (one spins on
a CPU between two that sleep; fast and long lines; an exit and a kill
within a line), and with KSFT_DIR, the kernel's own runner
(run_kselftest.sh, kselftest/runner.sh) over a C harness program
(net/so_incoming_cpu) and a Python one of drivers/net (ping.py), with
the NETIF config of the environment (drv_env.sh ktap).

Each is run alone and under record. The output under record, less its
metric and diagnostic lines, must be the bytes of the run alone, and its
exit status the same; each case's lines must sit right before its result
line, at its depth, policies first; and the report must read it. Then
the kernel's programs again, record sampling the remote of REMOTE_TYPE
and REMOTE_ARGS too (KPM_REMOTE_IFNAME its netdev): their cases must
have its metrics.

usage: record_ktap_test.py [KSFT_DIR [TEST...]]
"""

import collections
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
from ktap import run_all   # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, '..', '..', 'tools', 'ksft-perfmon-nl')
REPORT = os.path.join(HERE, '..', '..', 'tools', 'ksft-perfmon-report')
PROG = os.path.join(HERE, 'record_ktap_prog.py')
KSFT = sys.argv[1] if len(sys.argv) > 1 else None
REMOTE = os.environ.get('REMOTE_TYPE')
REMOTE_IFNAME = os.environ.get('KPM_REMOTE_IFNAME')
INTERVAL_MS = 20
# the harness's cases take tens of ms in a guest
RUNNER_INTERVAL_MS = 5

OURS = re.compile(rb'^((?:# )*)# (ktap-metric-policy-json|ktap-metric-json|'
                  rb'ksft-perfmon): (.*)$')
RUN = re.compile(rb'^((?:# )*)#  RUN ')
SUMMARY = re.compile(rb'^# ksft-perfmon: metric lines for (\d+) of (\d+) leaf '
                     rb'cases', re.M)
RESULT = re.compile(rb'^((?:# )*)(not )?ok \d+(?: (.*?))?(?: # .*)?$')


Run = collections.namedtuple('Run', 'out rc came err')


def run(cmd, record, interval_ms, remote=False, env=None):
    """@cmd alone or under record --ktap, with the remote of the
    environment or none: a Run of its output, its exit status as a shell
    gives it, the time each line came by the reader's clock, and its
    standard error"""
    if record:
        opts = ['--remote-type', 'none']
        if remote:
            opts = ['--remote-tool', os.path.abspath(TOOL)]
            if REMOTE_IFNAME:
                opts += ['--remote-ifname', REMOTE_IFNAME]
        cmd = [TOOL, 'record', '--ktap', '-I', str(interval_ms)] + opts + \
            ['--'] + cmd
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err,
                             env=env)
        # read as fast as it comes: when each line came is our clock's
        chunks, came = [], []
        while chunk := os.read(p.stdout.fileno(), 1 << 20):
            chunks.append(chunk)
            came += [time.monotonic()] * chunk.count(b'\n')
        out = b''.join(chunks)
        if not out.endswith(b'\n'):
            came.append(time.monotonic())
        p.stdout.close()
        rc = p.wait()
        err.seek(0)
        return Run(out, rc if rc >= 0 else 128 - rc, came, err.read())


def cases_of(out):
    """The result lines of @out with the metric lines right before each
    at its depth: [(line index, depth, path, [(kind, object)])]. The
    path: the names of the result lines around it, outermost first.
    Also the lines that metric lines came right before, not being result
    lines: (cases, orphans)."""
    lines = out.split(b'\n')
    cases, pending, orphans = [], [], []
    for i, line in enumerate(lines):
        m = OURS.match(line)
        if m:
            if m.group(2) != b'ksft-perfmon':
                pending.append((len(m.group(1)) // 2, m.group(2).decode(),
                                json.loads(m.group(3))))
            continue
        r = RESULT.match(line)
        if not r:
            if pending:
                orphans.append(line)
            pending = []
            continue
        cases.append((i, len(r.group(1)) // 2, [(r.group(3) or b'').decode()],
                      pending))
        pending = []
    # the names of the results that come after, one less deep each
    for n, (_, depth, path, _) in enumerate(cases):
        for _, d, p, _ in cases[n + 1:]:
            if d < depth and d == depth - len(path):
                path.insert(0, p[-1])
    return cases, orphans


def leaves(cases):
    """the indexes into @cases of the leaf results: none deeper since the
    one before at their depth"""
    out, last = [], {}
    for n, (_, depth, _, _) in enumerate(cases):
        prev = last.get(depth, -1)
        if not any(d > depth for _, d, _, _ in cases[prev + 1:n]):
            out.append(n)
        last[depth] = n
        for d in list(last):
            if d > depth:
                del last[d]
    return out


def strip_ours(out):
    return b'\n'.join(line for line in out.split(b'\n')
                      if not OURS.match(line))


def check_lines(c, cases, orphans):
    """each case's lines: at its depth, policies once and first, every
    observation's metric with a policy, times from 0 on and in order;
    none before a line that is no result line"""
    c.check(not orphans, f'metric lines before {orphans[:3]}')
    for _, depth, path, lines in cases:
        name = '/'.join(path)
        if not lines:
            continue
        c.check(all(d == depth for d, _, _ in lines),
                f'{name}: a metric line not at depth {depth}')
        kinds = [k for _, k, _ in lines]
        npol = kinds.count('ktap-metric-policy-json')
        c.check(kinds[:npol] == ['ktap-metric-policy-json'] * npol,
                f'{name}: a policy after an observation')
        pol = [o['name'] for _, k, o in lines
               if k == 'ktap-metric-policy-json']
        obs = [o for _, k, o in lines if k == 'ktap-metric-json']
        c.check(len(pol) == len(set(pol)) and
                {o['name'] for o in obs} == set(pol),
                f'{name}: policies {pol} for {({o["name"] for o in obs})}')
        last = {}
        for o in obs:
            key = o['host'], o['name']
            c.check(o['time'] >= last.get(key, 0),
                    f'{name}: {key} at {o["time"]} s, before 0 or '
                    f'the one before')
            last[key] = o['time']


def same_bytes(c, out, printed, what):
    """@out less our lines is @printed, byte for byte"""
    ours = strip_ours(out)
    if c.check(ours == printed,
               f'the output less our lines differs from {what} '
               f'({len(ours)} bytes, {len(printed)})'):
        return
    for line in list(difflib.unified_diff(
            printed.decode(errors='replace').splitlines(),
            ours.decode(errors='replace').splitlines(), what, 'ours',
            n=1, lineterm=''))[:12]:
        print(f'# {line[:150]}')


def check_summary(c, r, cases):
    """record's count of the leaf cases, and of those with lines, is
    ours: on stdout, or on stderr when the output ended within a line"""
    mid = not r.out.endswith(b'\n') and r.out != b''
    m = SUMMARY.search(r.err if mid else r.out)
    leaf = leaves(cases)
    want = (sum(bool(cases[n][3]) for n in leaf), len(leaf))
    c.check(m and (int(m[1]), int(m[2])) == want and
            not SUMMARY.search(r.out if mid else r.err),
            f'the summary line {m and m[0]} on std'
            f'{"err" if mid else "out"}, {want} ours')


def same_as_alone(c, cmd, interval_ms=INTERVAL_MS):
    """@cmd alone and under record; the run under record, its cases"""
    alone = run(cmd, False, interval_ms)
    r = run(cmd, True, interval_ms)
    same_bytes(c, r.out, alone.out, 'the run alone')
    c.check(r.rc == alone.rc, f'exit status {r.rc}, {alone.rc} alone')
    cases, orphans = cases_of(r.out)
    check_lines(c, cases, orphans)
    check_summary(c, r, cases)
    return r.out, cases, r.came


def same_as_printed(c, cmd, interval_ms, remote):
    """@cmd under record, what it printed copied by tee: a kselftest run
    is not the same twice. The run, its cases and when its lines came."""
    with tempfile.TemporaryDirectory() as d:
        tee = ['bash', '-c', '"$@" | tee "$KPM_TEE/printed"; '
               's=${PIPESTATUS[0]}; echo "$s" > "$KPM_TEE/status"; exit "$s"',
               'tee', *cmd]
        r = run(tee, True, interval_ms, remote, dict(os.environ, KPM_TEE=d))
        with open(f'{d}/printed', 'rb') as f:
            printed = f.read()
        with open(f'{d}/status') as f:
            status = int(f.read())
    same_bytes(c, r.out, printed, 'what it printed')
    c.check(r.rc == status, f'exit status {r.rc}, {status} its own')
    cases, orphans = cases_of(r.out)
    check_lines(c, cases, orphans)
    check_summary(c, r, cases)
    # the remote sent every case's samples, and stopped as it should
    c.check(b'ksft-perfmon-nl record: the remote' not in r.err,
            f'stderr: {r.err.decode(errors="replace")[-300:]!r}')
    return r.out, cases, r.came


def last_value(lines, name, cpu):
    vals = [o['value'][cpu] for _, k, o in lines
            if k == 'ktap-metric-json' and o['name'] == name]
    return vals[-1] if vals and vals[-1] is not None else 0.0


def by_name(cases):
    return {'/'.join(path): lines for _, _, path, lines in cases}


def timing(c):
    """a case's metrics are of its own run: the spin's CPU time is in
    the case that spun, not in the sleeps around it"""
    cpu = max(os.sched_getaffinity(0))
    with tempfile.NamedTemporaryFile('r') as side:
        cmd = [sys.executable, PROG, 'timing', str(cpu), side.name]
        out, cases, _ = same_as_alone(c, cmd)
        spun = float(side.read().split()[1])
    got = by_name(cases)

    def busy(case):
        lines = got.get(case, [])
        return (last_value(lines, 'cpu.time.usr', cpu) +
                last_value(lines, 'cpu.time.sys', cpu))

    def span(case):
        """the time from the case's first sample to its last"""
        t = [o['time'] for _, k, o in got.get(case, [])
             if k == 'ktap-metric-json']
        return max(t) - min(t) if t else 0.0

    for case in ('phases/phases.sleep_before', 'phases/phases.spin',
                 'phases/phases.sleep_after', 'sleep_at_top'):
        c.check(got.get(case), f'{case}: no metrics')
    c.check(not got.get('phases'), 'phases, which has cases, has metrics')
    phases = [busy(f'phases/phases.{p}')
              for p in ('sleep_before', 'spin', 'sleep_after')]
    spin, spin_span = phases[1], span('phases/phases.spin')
    print(f'# busy on CPU {cpu}: {phases[0]:.3f}, {spin:.3f} in '
          f'{spin_span:.3f} s of samples, {phases[2]:.3f} s; '
          f'{spun:.3f} s spun')
    # the CPU was busy in the spin's window, and in its neighbours' it was
    # not. The kernel counts CPU time by the tick, and a host under load
    # makes an emulated CPU miss ticks: of the spin's span, 0.85 was
    # counted beside stress-ng, 0.55 in a debug kernel beside another
    # guest, and over 0.95 on a quiet host.
    c.check(spin_span >= 5 * INTERVAL_MS / 1000 and spin >= 0.3 * spin_span,
            'the spin case: its CPU not busy in its window')
    c.check(spin >= 0.75 * sum(phases),
            'the spin\'s CPU time in the cases beside it')


def stream(c):
    """fast lines, a 1 MiB line and a result line in parts pass as they
    are; the line that only looks like a result gets no metrics"""
    out, cases, _ = same_as_alone(c, [sys.executable, PROG, 'stream'])
    got = by_name(cases)
    for case in ('burst', 'parts', 'last'):
        if not c.check(got.get(case), f'{case}: no metrics'):
            for line in out.split(b'\n')[-12:]:
                print(f'# {line[:100]!r}')


def ending(c, how, end):
    """the output ends in @end, ours on stderr"""
    out, cases, _ = same_as_alone(c, [sys.executable, PROG, how])
    c.check(out.endswith(end), f'the end: {out[-40:]!r}')
    c.check(by_name(cases).get('before_the_end'),
            'before_the_end: no metrics')


def early_exit(c):
    """COMMAND exits within a line: the line, its status"""
    ending(c, 'exit', b'# cut short, no newline')


def early_exit_in_result(c):
    """COMMAND exits within what may yet be a result line"""
    ending(c, 'undecided', b'\nnot o')


def killed(c):
    """COMMAND is killed within a line: the line, 128 + 9"""
    ending(c, 'kill', b'# cut short, no newline')


def install(ksft, d):
    """a kselftest install in @d as "make install" lays it out, of
    net:so_incoming_cpu (built here) and drivers/net:ping.py"""
    shutil.copy(f'{ksft}/run_kselftest.sh', d)
    shutil.copytree(f'{ksft}/kselftest', f'{d}/kselftest')
    os.makedirs(f'{d}/net')
    subprocess.run(['gcc', '-O2', f'-I{ksft}',
                    f'-I{ksft}/../../include/uapi', '-o',
                    f'{d}/net/so_incoming_cpu',
                    f'{ksft}/net/so_incoming_cpu.c'], check=True)
    shutil.copytree(f'{ksft}/net/lib/py', f'{d}/net/lib/py')
    # the ynl library and its specs, where the library looks in an install
    src = f'{ksft}/../../..'
    shutil.copytree(f'{src}/tools/net/ynl/pyynl', f'{d}/net/lib/ynl/pyynl')
    shutil.copytree(f'{src}/Documentation/netlink/specs', f'{d}/net/lib/specs')
    os.makedirs(f'{d}/drivers/net/lib')
    shutil.copytree(f'{ksft}/drivers/net/lib/py', f'{d}/drivers/net/lib/py')
    for f in ('ping.py', 'settings'):
        shutil.copy(f'{ksft}/drivers/net/{f}', f'{d}/drivers/net')
    with open(f'{d}/kselftest-list.txt', 'w') as f:
        f.write('net:so_incoming_cpu\ndrivers/net:ping.py\n')


def run_runner(c, remote):
    """run_kselftest.sh of the kernel's tree over a C harness program and
    a Python one, under record --ktap with the remote or none: its
    output, cases and leaves, checked as every run's, and the report's
    cases the leaves with metrics, by path"""
    with tempfile.TemporaryDirectory() as d:
        install(KSFT, d)
        out, cases, came = same_as_printed(c, [f'{d}/run_kselftest.sh'],
                                           RUNNER_INTERVAL_MS, remote)
    leaf = leaves(cases)
    progs = {}
    for n in leaf:
        progs.setdefault(cases[n][2][0], 0)
        progs[cases[n][2][0]] += bool(cases[n][3])
    print(f'# {len(leaf)} leaf cases, {sum(progs.values())} with metrics '
          f'(by program: {progs})')
    # the leaves are the programs' own cases, one deeper than the runner
    c.check(len(progs) == 2 and all(progs.values()) and
            all(cases[n][1] == 1 for n in leaf),
            f'programs and their cases with metrics: {progs}, leaves at '
            f'depths {sorted({cases[n][1] for n in leaf})}')
    with tempfile.NamedTemporaryFile('wb') as f:
        f.write(out)
        f.flush()
        rep = subprocess.run([REPORT, '--json', f.name],
                             capture_output=True, text=True)
    rows = [json.loads(r) for r in rep.stdout.splitlines()]
    paths = {tuple(r['path']) for r in rows}
    want = {tuple(cases[n][2]) for n in leaf if cases[n][3]}
    c.check(paths == want,
            f'the report\'s cases {sorted(paths)}, ours {sorted(want)}')
    return out, cases, came, leaf


def hosts_of(lines):
    return {o['host'] for _, k, o in lines if k == 'ktap-metric-json'}


def runner(c):
    """the kernel's runner, this host alone: every leaf case that ran
    three intervals by when its lines came to us has metrics"""
    if not KSFT:
        return 'SKIP: no kselftest tree given'
    out, cases, came, leaf = run_runner(c, False)
    # a harness's "#  RUN" lines: (line index, depth of its case)
    runs = [(i, len(m.group(1)) // 2)
            for i, line in enumerate(out.split(b'\n'))
            if (m := RUN.match(line))]
    for n in leaf:
        i, depth, path, ml = cases[n]
        # from the result line before it, or its harness's RUN line
        prev = max([cases[m][0] for m in range(n) if cases[m][1] <= depth] +
                   [r for r, d in runs if r < i and d == depth], default=0)
        span = came[i] - came[prev]
        if span >= 3 * RUNNER_INTERVAL_MS / 1000:
            c.check(hosts_of(ml) == {'local'},
                    f'{"/".join(path)}: metrics of {sorted(hosts_of(ml))} '
                    f'after {span:.3f} s')


def runner_remote(c):
    """the kernel's runner with the drivers/net config's remote: a case
    whose own samples span three intervals has the remote's too, its
    clock lined up with ours, and of its netdev"""
    if not KSFT:
        return 'SKIP: no kselftest tree given'
    if not REMOTE:
        return 'SKIP: no REMOTE_TYPE (drv_env.sh ktap gives one)'
    # a case's lines wait for the remote's samples, which holds its
    # result line back: when lines came to us tells no case's span here
    _, cases, _, leaf = run_runner(c, True)
    for n in leaf:
        _, _, path, ml = cases[n]
        t = [o['time'] for _, k, o in ml
             if k == 'ktap-metric-json' and o['host'] == 'local']
        if not t or max(t) - min(t) < 3 * RUNNER_INTERVAL_MS / 1000:
            continue
        c.check(hosts_of(ml) == {'local', 'remote'},
                f'{"/".join(path)}: metrics of {sorted(hosts_of(ml))} in '
                f'{max(t) - min(t):.3f} s of ours')
        if REMOTE_IFNAME:
            c.check(any(o['host'] == 'remote' and o['name'] == 'nic.rx.dropped'
                        for _, k, o in ml if k == 'ktap-metric-json'),
                    f'{"/".join(path)}: no nic metrics of the remote\'s '
                    f'netdev')


if __name__ == '__main__':
    tests = [timing, stream, early_exit, early_exit_in_result, killed,
             runner, runner_remote]
    if len(sys.argv) > 2:
        tests = [t for t in tests if t.__name__ in sys.argv[2:]]
    sys.exit(run_all('record_ktap', tests))
