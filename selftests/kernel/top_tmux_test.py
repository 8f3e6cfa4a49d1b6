#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ksft-perfmon-nl top in a real terminal: started in tmux, its screen
read with capture-pane, its numbers checked against what the test did:
a busy loop pinned to CPU 1, and UDP on lo at a rate the test paces and
measures itself. Needs the module loaded, root, 2 CPUs or more, tmux.
Prints KTAP.
"""

import fcntl
import os
import re
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
from ktap import Ktap   # noqa: E402
from record_test import write_blocked   # noqa: E402

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                    '..', 'tools', 'ksft-perfmon-nl')
RATE = 200          # UDP packets a second
# bytes of UDP payload; lo counts 20 + 8 more for each: IPv4 and UDP
# headers (loopback_xmit() counts the skb after eth_type_trans() has
# pulled the Ethernet header)
PAYLOAD = 100
TMUX = 'kpm-top-test'
HEAD = re.compile(r'^ksft_perfmon top: session (\d+), sample (\d+) over '
                  r'([\d.]+) s', re.M)
LO = re.compile(r'^lo +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +'
                r'([\d.]+)$', re.M)
ROW = re.compile(r'^(\d+|all) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +'
                 r'([\d.]+) +\[(#*) *\]$')
# a CPU's network counts a second: rx pkt/s, drop/s, squeeze/s, rps/s,
# NET_RX/s, NET_TX/s
NET_ROW = re.compile(r'^(\d+|sum)((?: +\d+){6})$')


class Sender(threading.Thread):
    """UDP to a bound socket on lo, paced at RATE a second"""
    def __init__(self):
        super().__init__(daemon=True)
        self.rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rx.bind(('127.0.0.1', 0))
        self.rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.stop = threading.Event()
        self.secs = 0.0
        self.times = []     # CLOCK_MONOTONIC of each packet sent

    def run(self):
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        dst = self.rx.getsockname()
        start = time.monotonic()
        while not self.stop.is_set():
            due = int((time.monotonic() - start) * RATE)
            while len(self.times) < due:
                tx.sendto(b'x' * PAYLOAD, dst)
                self.times.append(time.monotonic())
            try:
                while True:
                    self.rx.recv(2048, socket.MSG_DONTWAIT)
            except BlockingIOError:
                pass
            time.sleep(0.002)
        self.secs = time.monotonic() - start


def window_counts(times, span):
    """The fewest and the most of @times in a window @span long within
    their first and last: a thread that falls behind its pace sends the
    packets it owes at once, so a frame's rate may be any of these."""
    lo_n, hi_n, j, k = len(times), 0, 0, 0
    for i, t in enumerate(times):
        if t + span > times[-1]:
            break
        # [t, t + span]: the most; (t, t + span): the fewest
        while j < len(times) and times[j] <= t + span:
            j += 1
        while k < len(times) and times[k] < t + span:
            k += 1
        hi_n = max(hi_n, j - i)
        lo_n = min(lo_n, k - i - 1)
    return lo_n, hi_n


def tmux(*args):
    return subprocess.run(['tmux', *args], capture_output=True, text=True)


def frame(sample, timeout=60):
    """the screen once it shows a whole frame of @sample or later: top
    clears the screen and draws lo's row last. A slow guest takes longer
    to get there, so the screen is polled, not read once at a fixed
    time."""
    deadline = time.monotonic() + timeout
    while True:
        screen = tmux('capture-pane', '-p', '-t', TMUX).stdout
        head = HEAD.search(screen)
        if head and int(head.group(2)) >= sample and LO.search(screen) or \
           time.monotonic() > deadline:
            return screen
        time.sleep(0.2)


def gone(timeout=30):
    """whether the tmux session ended within @timeout s"""
    deadline = time.monotonic() + timeout
    while tmux('has-session', '-t', TMUX).returncode == 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def stopped_while_writing(c):
    """top whose output is a pipe that fills up, read only once top is
    stopped: the stop waits for the write, and every frame comes out
    whole, however many fit in the pipe (top's stop handler had no
    SA_RESTART: the write failed with EINTR, stdio lost what it held and
    top exited 1)"""
    r, w = os.pipe()
    size = fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    p = subprocess.Popen([TOOL, 'top', '--interval', '100', '--ifname',
                          'lo'], stdout=w, stderr=subprocess.PIPE, text=True)
    os.close(w)
    where = write_blocked(p)
    p.terminate()
    write_blocked(p)
    with os.fdopen(r) as f:
        out = f.read()
    err = p.stderr.read()
    p.wait()
    frames = out.split('ksft_perfmon top: ')[1:]
    whole = [f for f in frames if HEAD.match('ksft_perfmon top: ' + f) and
             len(LO.findall(f)) == 1 and
             sum(bool(m and m.group(1) == 'sum')
                 for m in map(NET_ROW.match, f.splitlines())) == 1]
    print(f'# {len(out)} bytes through a pipe of {size}, top waiting in '
          f'{where!r}: {len(whole)} of {len(frames)} frames whole')
    c.check(where.endswith('pipe_write') and p.returncode == 0 and
            not err and frames and len(whole) == len(frames) and
            out.startswith('ksft_perfmon top: '),
            'stopped_while_writing',
            f'exit {p.returncode}: {err!r}; output begins {out[:40]!r}')


def main():
    print('TAP version 13')
    c = Ktap('tmux')
    # a guest's lo starts down
    subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)
    hog = subprocess.Popen(['taskset', '-c', '1', 'sh', '-c',
                            'while :; do :; done'])
    sender = Sender()
    sender.start()
    tmux('kill-session', '-t', TMUX)
    p = tmux('new-session', '-d', '-s', TMUX, '-x', '120', '-y', '50',
             f'{TOOL} top --interval 1000 --ifname lo')
    # the busy loop and the traffic ran through all of the third interval
    screen = frame(3)
    captured = time.monotonic()
    sessions = subprocess.run([TOOL, 'show'], capture_output=True,
                              text=True).stdout
    tmux('send-keys', '-t', TMUX, 'C-c')
    alive = not gone()
    after = subprocess.run([TOOL, 'show'], capture_output=True,
                           text=True).stdout
    tmux('kill-session', '-t', TMUX)
    sender.stop.set()
    sender.join()
    hog.kill()
    hog.wait()
    rate = len(sender.times) / sender.secs if sender.secs else 0.0
    for line in screen.rstrip().splitlines():
        print(f'# | {line}')
    print(f'# the test sent {rate:.1f} UDP packets a second')

    # A frame is over the samples top read at two refreshes: one interval
    # apart, or two when top itself ran a refresh late (a guest with
    # another beside it on the host's cores); the sample times differ by
    # their wake-up delays on top of that. Three would be a frame over
    # the first sample (sample 3 or later over a prev never updated).
    head = HEAD.search(screen)
    span = float(head.group(3)) if head else 0.0
    c.check(p.returncode == 0 and head and int(head.group(2)) >= 3 and
            1 <= round(span) <= 2 and abs(span - round(span)) <= 0.45 and
            f'session {head.group(1)} ' in sessions, 'screen_has_a_frame',
            f'over {span} s; {p.stderr} {sessions}')
    rows = {m.group(1): [float(x) for x in m.groups()[1:6]] + [len(m.group(7))]
            for m in map(ROW.match, screen.splitlines()) if m}
    cpus = {k: v for k, v in rows.items() if k != 'all'}
    c.check(len(cpus) == os.cpu_count() and 'all' in rows and
            all(abs(sum(v[:5]) - 100) <= 0.5 for v in rows.values()),
            'cpu_rows_add_up_to_100', f'{rows}')
    busy1 = 100 - cpus.get('1', [0] * 5 + [0])[4]
    c.check(busy1 >= 80 and cpus['1'][5] >= 24, 'pinned_busy_loop_on_cpu1',
            f'CPU 1 {busy1:.1f}% busy, bar {cpus.get("1")}')
    mean = [sum(v[i] for v in cpus.values()) / max(len(cpus), 1)
            for i in range(5)]
    c.check(cpus and all(abs(a - b) <= 0.15 for a, b in zip(mean,
                                                             rows['all'])),
            'all_is_the_mean', f'{mean} vs {rows.get("all")}')

    # the frame's packets: as many as the test sent in some stretch of
    # its traffic before the screen was read, as long as the frame, give
    # or take one at each end (top rounds its rates to a packet a second);
    # a stall of the sender as long as the frame would widen that range
    nic = LO.search(screen)
    v = [float(x) for x in nic.groups()] if nic else [0] * 6
    mbit = v[0] * (PAYLOAD + 28) * 8 / 1e6
    before = [t for t in sender.times if t <= captured]
    fewest, most = window_counts(before, span) if span else (0, 0)
    shown = v[0] * span
    c.check(nic and fewest - 2 - span <= shown <= most + 2 + span and
            shown > 0 and abs(v[3] - v[0]) <= 1.5 and
            abs(v[1] - mbit) <= 0.05 * mbit + 0.002,
            'lo_rates_match_the_traffic',
            f'lo {v}: rx {shown:.0f} packets in {span} s, where the test '
            f'sent {fewest} to {most} in any {span} s ({rate:.1f} a second '
            f'on average); rx {v[1]} Mbit/s against {mbit:.3f} from the '
            f'packet size')
    # every packet of lo goes through the backlog of a CPU, whose softnet
    # counts it as processed, in a NET_RX softirq; nothing else moves in
    # the guest. Two counters of the kernel's, read microseconds apart in
    # one sample: within a packet or two and a percent.
    net = {m.group(1): [int(x) for x in m.group(2).split()]
           for m in map(NET_ROW.match, screen.splitlines()) if m}
    total = net.get('sum', [0] * 6)
    c.check(len(net) == os.cpu_count() + 1 and
            abs(total[0] - v[0]) <= 2 + 0.01 * v[0] and total[4] > 0 and
            v[0] > 0, 'softnet_counts_lo_packets',
            f'{net}; lo rx {v[0]} pkt/s')
    c.check(not alive and f'session {head.group(1) if head else "?"} '
            not in after, 'ctrl_c_ends_it_and_its_session', f'{after}')
    stopped_while_writing(c)
    return c.finish()


if __name__ == '__main__':
    sys.exit(main())
