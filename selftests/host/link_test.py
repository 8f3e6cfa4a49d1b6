#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ksft-perfmon-nl link, and the requests of record --control, with no
module: link's other end is a peer that speaks record --control's part
(peer() below) in a time namespace whose CLOCK_MONOTONIC is 1000 s ahead
of ours, as another host's is. The offset link measures must be that of
the namespace, which the test sets; the base the peer gets, ours on its
clock; a stop, the end of the peer's input, its output passed on whole,
its exit status link's. record --control's own requests are checked on
the real record, which refuses what is no request before it needs the
module. The suite runs the two together against the module in its
guests (selftests/lib/sh/drv_env.sh, perfmon_sh_test.sh). KTAP output;
non-zero exit when a test failed.
"""

import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'lib', 'py'))
from ktap import run_all   # noqa: E402

TOOLS = os.path.abspath(os.environ.get('KPM_TOOLS',
                                      os.path.join(HERE, '..', '..', 'tools')))
TOOL = os.path.join(TOOLS, 'ksft-perfmon-nl')
AHEAD = 1000
# what the tests give a process to end: a guard against a hang, not a
# time to check
HANG = 120

# record --control's part: answers "clock", takes "base NS", then, at the
# end of its input, prints "base NS", LINES lines of WIDTH bytes and
# exits with STATUS. BANNER: a line before the first answer. MODE deaf:
# at the end of its input it says "eof" on stderr and waits for link to
# be gone instead;
# closed: the same, with its output closed after the base; echo: each
# line of its input after the base comes back at once as "got LINE".
PEER = r'''
import os, sys, time
lines, width, status, banner, mode = (int(sys.argv[1]), int(sys.argv[2]),
                                      int(sys.argv[3]), sys.argv[4],
                                      sys.argv[5])
if banner:
    print(banner, flush=True)
base = None
while base is None:
    req = sys.stdin.readline()
    if not req:
        sys.exit(9)
    if req == 'clock\n':
        print(f'clock {time.monotonic_ns()}', flush=True)
    elif req.startswith('base '):
        base = int(req[5:])
os.write(2, f'ready {os.getpid()}\n'.encode())   # one write, as record's
if mode == 'closed':
    os.close(1)
if mode == 'echo':
    for req in sys.stdin:
        print(f'got {req}', end='', flush=True)
    mode = ''
sys.stdin.read()
if mode:
    os.write(2, b'eof\n')
    parent = os.getppid()       # until link is gone
    while os.getppid() == parent:
        time.sleep(0.1)
print(f'base {base}')
for i in range(lines):
    print(f'{i:08d}' + 'x' * (width - 8))
sys.exit(status)
'''


def peer(lines=0, width=8, status=0, banner='', mode=''):
    """link's COMMAND: the peer, in a time namespace AHEAD s ahead"""
    return ['unshare', '--time', '--monotonic', str(AHEAD), sys.executable,
            '-c', PEER, str(lines), str(width), str(status), banner, mode]


def link(command, base, args=(), **kwargs):
    return subprocess.Popen([TOOL, 'link', '--time-base', str(base), *args,
                             '--', *command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def ended(p):
    """@p's status once it ended, or None: killed after HANG s"""
    try:
        p.communicate(timeout=HANG)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None
    return p.returncode


def ready(p):
    """link's stderr up to the peer's "ready" and link's "clock", in
    either order: its lines"""
    said = []
    while not all(any(x.startswith(w) for x in said)
                  for w in ('ready ', 'clock ')):
        line = p.stderr.readline()
        if not line:
            break
        said.append(line.rstrip('\n'))
    return said


def stopped(p, sig=signal.SIGTERM):
    p.send_signal(sig)
    out, err = p.communicate(timeout=HANG)
    return out, err


def lined_up_and_based(t):
    """the offset link measures is the namespace's, within half the round
    trip it measured; the peer's base is ours on its clock"""
    base = time.monotonic_ns()
    p = link(peer(), base)
    said = ready(p)
    out, _ = stopped(p)
    m = [re.fullmatch(r'clock (-?[0-9]+) ([0-9]+)', x) for x in said]
    m = [x for x in m if x]
    b = re.fullmatch(r'base ([0-9]+)\n', out)
    t.check(len(m) == 1 and b and p.returncode == 0,
            f'exit {p.returncode}, stderr {said}, stdout {out!r}')
    if len(m) == 1 and b:
        offset, trip = int(m[0][1]), int(m[0][2])
        print(f'# offset {offset} ns, round trip {trip} ns')
        t.check(abs(offset - AHEAD * 10**9) <= trip // 2 + 1,
                f'offset {offset} ns, {AHEAD} s ahead, trip {trip} ns')
        t.check(int(b[1]) == base + offset, f'base {b[1]}, ours {base}')


def stop_passes_output_on(t):
    """a stop ends the peer's input; what it prints then (5000 lines of
    10 kB) comes whole and in order, and its status is link's"""
    p = link(peer(lines=5000, width=10000, status=3), time.monotonic_ns())
    ready(p)
    out, _ = stopped(p)
    lines = out.splitlines()[1:]
    t.check(p.returncode == 3 and len(lines) == 5000 and
            all(x == f'{i:08d}' + 'x' * 9992 for i, x in enumerate(lines)),
            f'exit {p.returncode}, {len(lines)} lines')


def passes_input(t):
    """--pass-input: our lines reach the peer after the base, and its
    answers come back as it writes them, before its end; the end of our
    input ends its own"""
    p = link(peer(mode='echo'), time.monotonic_ns(), ('--pass-input',),
             stdin=subprocess.PIPE)
    ready(p)
    got = []
    for i in range(3):
        p.stdin.write(f'sync {i}\n')
        p.stdin.flush()
        # link passes it on as it comes, or not in time
        if not select.select([p.stdout], [], [], HANG)[0]:
            break
        got.append(p.stdout.readline())
    p.stdin.close()
    rest = p.stdout.read()
    p.stderr.read()
    t.check(got == [f'got sync {i}\n' for i in range(3)] and
            rest.startswith('base ') and p.wait(timeout=HANG) == 0,
            f'answers {got}, then {rest!r}, exit {p.returncode}')


def login_lines_to_stderr(t):
    """a line before the first answer (a login's) goes to stderr, not
    with record's lines"""
    p = link(peer(banner='Welcome to the remote'), time.monotonic_ns())
    said = ready(p)
    out, _ = stopped(p)
    t.check('Welcome to the remote' in said and 'Welcome' not in out and
            p.returncode == 0, f'stderr {said}, stdout {out!r}')


def stop_before_the_base(t):
    """a COMMAND that never answers (a remote's record that does not
    start) gets SIGTERM at the first stop: nothing to keep"""
    p = link(['sh', '-c', 'echo started >&2; exec sleep 600'],
             time.monotonic_ns())
    p.stderr.readline()     # link's handlers are in place before its fork
    try:
        stopped(p)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
    t.check(p.returncode == 128 + signal.SIGTERM,
            f'exit {p.returncode}')


def second_stop_ends_command(t):
    """a record that does not stop at the end of its input (a peer that
    ignores it) ends at the second stop; one whose output closed has its
    input closed by link then, and ends at the first"""
    for mode, stops in (('deaf', 2), ('closed', 1)):
        p = link(peer(mode=mode), time.monotonic_ns())
        ready(p)
        if stops == 2:
            p.send_signal(signal.SIGTERM)
        while p.stderr.readline() not in ('eof\n', ''):
            pass
        p.send_signal(signal.SIGTERM)
        t.check(ended(p) == 128 + signal.SIGTERM,
                f'{mode}: exit {p.returncode}')


def stops_that_come_together(t):
    """two stop signals that are pending together are two stops: the
    input closed, then COMMAND ended"""
    p = link(peer(mode='deaf'), time.monotonic_ns())
    ready(p)
    p.send_signal(signal.SIGSTOP)
    p.send_signal(signal.SIGTERM)
    p.send_signal(signal.SIGINT)
    p.send_signal(signal.SIGCONT)
    t.check(ended(p) == 128 + signal.SIGTERM, f'exit {p.returncode}')


def closed_descriptors(t):
    """link started with its standard input closed gives COMMAND a pipe
    all the same"""
    p = link(peer(), time.monotonic_ns(), stdin=subprocess.DEVNULL,
             preexec_fn=lambda: os.close(0))
    said = ready(p)
    out, _ = stopped(p)
    t.check(p.returncode == 0 and out.startswith('base '),
            f'exit {p.returncode}, {said}, {out!r}')


def command_leaves_a_child(t):
    """COMMAND gone, what it started still holding its output: link passes
    on what is there and exits with COMMAND's status"""
    p = link(['sh', '-c', 'sleep 600 2>/dev/null & echo "left $!"; exit 5'],
             time.monotonic_ns())
    try:
        out, err = p.communicate(timeout=HANG)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    left = re.search(r'left ([0-9]+)', err)
    if left:
        os.kill(int(left[1]), signal.SIGTERM)
    t.check(p.returncode == 5 and left, f'exit {p.returncode}, {out!r} {err!r}')


def refused(t):
    """usage errors, a COMMAND that cannot run, an answer that is no
    clock, a COMMAND that ends before it answers"""
    for args, rc, why in (
            ([], 2, 'give --time-base NS and -- COMMAND'),
            (['--time-base', '5'], 2, 'give --time-base NS and -- COMMAND'),
            (['--time-base', 'x', '--', 'true'], 1,
             "--time-base: 'x' is not a number"),
            (['--time-base', '5', '--', '/nonexistent'], 127,
             'cannot run /nonexistent'),
            (['--time-base', '5', '--', 'sh', '-c',
              'read x; echo "clock abc"'], 1, "'clock abc', not a clock"),
            (['--time-base', '5', '--', 'true'], 1,
             'ended before it answered a clock request')):
        p = subprocess.run([TOOL, 'link', *args], capture_output=True,
                           text=True, timeout=HANG)
        t.check(p.returncode == rc and why in p.stderr,
                f'{args}: exit {p.returncode}, {p.stderr!r}')


def record_control_requests(t):
    """record --control answers each "clock" at once, and refuses what
    is no request, an input that ends before the base, a COMMAND or a
    --time-base beside it"""
    p = subprocess.run([TOOL, 'record', '--control'], capture_output=True,
                       text=True, input='clock\nclock\nbogus\n')
    clocks = [x for x in p.stdout.splitlines()
              if re.fullmatch(r'clock [0-9]+', x)]
    t.check(len(clocks) == 2 and p.returncode == 1 and
            "not a request (clock, base NS): 'bogus'" in p.stderr,
            f'exit {p.returncode}, {p.stdout!r} {p.stderr!r}')
    p = subprocess.run([TOOL, 'record', '--control'], capture_output=True,
                       text=True, input='clock\n')
    t.check(p.returncode == 1 and
            'standard input ended before the time base' in p.stderr,
            f'exit {p.returncode}, {p.stderr!r}')
    p = subprocess.run([TOOL, 'record', '--control'], capture_output=True,
                       text=True, input='x' * 100 + '\n')
    t.check(p.returncode == 1 and 'a request of over 63 bytes' in p.stderr,
            f'exit {p.returncode}, {p.stderr!r}')
    for args in (['--time-base', '5'], ['--', 'true']):
        p = subprocess.run([TOOL, 'record', '--control', *args],
                           capture_output=True, text=True, input='')
        t.check(p.returncode == 2 and
                'takes no COMMAND and no --time-base' in p.stderr,
                f'{args}: exit {p.returncode}, {p.stderr!r}')


TESTS = [lined_up_and_based, stop_passes_output_on, passes_input,
         login_lines_to_stderr,
         stop_before_the_base, second_stop_ends_command,
         stops_that_come_together, command_leaves_a_child,
         closed_descriptors, refused, record_control_requests]


def main():
    return run_all('link', TESTS)


if __name__ == '__main__':
    sys.exit(main())
