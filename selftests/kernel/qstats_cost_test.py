#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""What a session with queues costs the host it measures, on the test
module's netdevs (selftests/modules/slowdev: queue statistics that RTNL guards,
and whose every call into the driver busy-waits as long as asked), and on
7.3's netdevsim where the kernel has it.

- The read budget charges every queue: a netdev of 64 queues sampled
  with queues=1 at 1 ms costs its CPUs, itself and 1 + 64 + 64 calls into
  the driver a sample, and a budget one read/s short of that refuses it,
  its extack saying so; the exact budget takes it.
- The charge follows the queues: a session charged for 4 queues, in a
  budget that has no more room, has its reads skipped (over-budget, and
  counted in qstats-skipped) once ethtool -L gives the netdev 64, the
  map still read; given room, it reads all 64 again. A netdev that
  leaves the namespace gives its queues' charge back: a second such
  session, refused while it sampled them, is taken.
- The sampler holds RTNL for 50 us at most, plus one call: with each call
  busy-waiting 20 us, no hold of the debugfs counts makes more than 3
  calls (a hold ends at the first call that ends 50 us or more after it
  began), and every read of 129 calls is whole.
- On netdevsim at 1024 queues (it sets no limit; a large NIC has a few
  hundred), sampled at the shortest interval, 0.1 ms, with 64 queues:
  the default budget refuses the session, 2049 calls a sample; given
  the budget it needs, the sampler reads the netdev back to back. An MTU
  set of the netdev (RTM_SETLINK: RTNL, and its instance lock, which the
  sampler holds) in a loop beside it, turn about with one of lo (RTNL
  alone), takes longer than lo's, at the median, by at most a tenth of
  what one read takes (from the session's cost, less its samples of the
  CPUs alone, over its reads of the netdev) more than without
  the sampler, give or take the spread of that difference over two runs
  without it. A sampler that held the lock for a whole read would make
  it wait half of one. The holds are printed, with the latencies.

usage: qstats_cost_test.py SLOWDEV_KO
"""

import errno
import os
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
import kpm_genl   # noqa: E402
from kpm_genl import Genl, samples, session_del, session_get, \
    session_new  # noqa: E402
from ktap import Ktap   # noqa: E402

READ_BUDGET = '/sys/module/ksft_perfmon/parameters/read_budget'
SESSIONS = '/sys/kernel/debug/ksft_perfmon/sessions'
HOLD_US = 50
CALL_US = 20
NSIM_ID = 7310
NSIM_QUEUES = 1024


def possible_cpus():
    n = 0
    for part in open('/sys/devices/system/cpu/possible').read().split(','):
        lo, _, hi = part.strip().partition('-')
        n += int(hi or lo) - int(lo) + 1
    return n


def budget(value=None):
    if value is not None:
        with open(READ_BUDGET, 'w') as f:
            f.write(f'{value}\n')
    return int(open(READ_BUDGET).read())


def ifindex(name):
    return int(open(f'/sys/class/net/{name}/ifindex').read())


def debugfs_row(sid):
    """the session's row of debugfs's sessions, by column"""
    head, *rows = open(SESSIONS).read().splitlines()
    for row in rows:
        if row.split()[0] == str(sid):
            return dict(zip(head.split(), row.split()))
    return {}


def session_new_err(g, *args, **kw):
    """(id, None), or (None, the errno and extack of the refusal)"""
    try:
        return session_new(g, *args, **kw), None
    except OSError as e:
        return None, e


def channels(dev, n):
    subprocess.run(['ethtool', '-L', dev, 'combined', str(n)], check=True)


def charges_every_queue(c, dev):
    """a session that reads 129 calls a sample is charged for them"""
    g = Genl()
    cost = -(-(possible_cpus() + 1 + 1 + 2 * 64) * 10**9 // 1_000_000)
    old = budget()
    try:
        budget(cost - 1)
        sid, err = session_new_err(g, 1_000_000, 16, ifindex=[ifindex(dev)],
                                   queues=1)
        refused = sid is None and err.errno == errno.ENOSPC
        if sid:
            session_del(g, sid)
        budget(cost)
        sid, err2 = session_new_err(g, 1_000_000, 16,
                                    ifindex=[ifindex(dev)], queues=1)
        if sid:
            session_del(g, sid)
    finally:
        budget(old)
    print(f'# 64 queues, queues=1, at 1 ms: {cost} reads/s; a budget '
          f'of {cost - 1}: {err}; of {cost}: {err2 or "taken"}')
    c.check(refused and sid is not None, 'budget_charges_every_queue',
            f'refused {refused}, then {err2}')


def follows_channels(c, dev):
    """64 queues where 4 were charged, and no room: reads skipped"""
    g = Genl()
    channels(dev, 4)
    old = budget()
    sid = None
    try:
        cost = -(-(possible_cpus() + 1 + 1 + 2 * 4) * 10**9 // 10_000_000)
        budget(cost)
        sid = session_new(g, 10_000_000, 256, ifindex=[ifindex(dev)],
                          queues=1)
        time.sleep(0.2)
        channels(dev, 64)
        time.sleep(0.3)
        over = kpm_genl.samples(g, sid)
        skipped = session_get(g, sid).get('qstats-skipped', 0)
        budget(old)
        time.sleep(0.3)
        after = kpm_genl.samples(g, sid)
    finally:
        if sid:
            session_del(g, sid)
        budget(old)
        channels(dev, 64)
    last_over = over[max(over)]['qstats'][0] if over else {}
    last = after[max(after)]['qstats'][0] if after else {}
    print(f'# charged for 4 queues, given 64 with no room: {skipped} reads '
          f'skipped, the last sample {last_over}; with room: {last}')
    c.check(last_over.get('over-budget') and
            last_over.get('rx-queues') == 4 and
            'map-version' in last_over and skipped >= 5,
            'queues_past_the_budget_skipped',
            f'{skipped} skipped, the last sample {last_over}')
    c.check(last.get('rx-queues') == 64 and not last.get('over-budget'),
            'queues_read_again_with_room', f'the last sample {last}')


def gone_gives_queues_back(c, dev, other):
    """a netdev that leaves the namespace gives its queues' charge back"""
    ns = 'kpm-cost'
    g = Genl()
    cpus = possible_cpus()
    full = -(-(cpus + 1 + 1 + 2 * 64) * 10**9 // 1_000_000)
    rest = -(-(cpus + 1) * 10**9 // 1_000_000)
    old = budget()
    sid = None
    subprocess.run(['ip', 'netns', 'del', ns], stderr=subprocess.DEVNULL)
    try:
        # room for one such session, and for the rest of it once gone
        budget(full + rest)
        sid = session_new(g, 1_000_000, 16, ifindex=[ifindex(dev)],
                          queues=1)
        before, err = session_new_err(g, 1_000_000, 16,
                                      ifindex=[ifindex(other)], queues=1)
        if before:
            session_del(g, before)
        subprocess.run(['ip', 'netns', 'add', ns], check=True)
        subprocess.run(['ip', 'link', 'set', dev, 'netns', ns], check=True)
        after, err2 = session_new_err(g, 1_000_000, 16,
                                      ifindex=[ifindex(other)], queues=1)
        if after:
            session_del(g, after)
    finally:
        if sid:
            session_del(g, sid)
        budget(old)
        subprocess.run(['ip', '-n', ns, 'link', 'set', dev, 'netns', '1'],
                       stderr=subprocess.DEVNULL)
        subprocess.run(['ip', 'netns', 'del', ns], stderr=subprocess.DEVNULL)
    print(f'# a budget of {full + rest} reads/s, one session of {full} on '
          f'{dev}: a second {err or "taken"}; once {dev} left, '
          f'{err2 or "taken"}')
    c.check(before is None and after is not None,
            'gone_netdev_gives_its_queues_back',
            f'before {err}, after {err2}')


def holds_bounded(c, dev):
    """every 20 us call: at most 3 a hold"""
    with open('/sys/module/kpm_slowdev/parameters/call_delay_us', 'w') as f:
        f.write(f'{CALL_US}\n')
    g = Genl()
    sid = session_new(g, 10_000_000, 256, ifindex=[ifindex(dev)], queues=4)
    try:
        time.sleep(1)
        info = session_get(g, sid)
        row = debugfs_row(sid)
    finally:
        session_del(g, sid)
        with open('/sys/module/kpm_slowdev/parameters/call_delay_us',
                  'w') as f:
            f.write('0\n')
    holds = int(row.get('holds', 0))
    calls = int(row.get('hold_calls', 0))
    # counted before the holds were: samples later, if any, add calls.
    # Read at every interval, each sample is a read's: the timer takes
    # none while a read is in flight
    reads = info.get('samples', 0) - info.get('qstats-skipped', 0)
    most = -(-HOLD_US // CALL_US)
    print(f'# {reads} whole reads of 129 calls of {CALL_US} us: {calls} '
          f'calls in {holds} holds, the longest '
          f'{int(row.get("hold_max_ns", 0)) / 1e3:.0f} us, on average '
          f'{int(row.get("hold_mean_ns", 0)) / 1e3:.0f} us')
    c.check(reads >= 10 and calls >= 129 * reads and holds and
            calls <= most * holds, 'rtnl_held_50_us_and_a_call',
            f'{calls} calls in {holds} holds: more than {most} a hold')


def nsim_dev():
    """a netdevsim netdev of NSIM_QUEUES queues, up, or None"""
    bus = '/sys/bus/netdevsim'
    if not os.path.exists(bus):
        subprocess.run(['modprobe', '-q', 'netdevsim'])
    if not os.path.exists(bus):
        return None
    with open(f'{bus}/new_device', 'w') as f:
        f.write(f'{NSIM_ID} 1 {NSIM_QUEUES}')
    for _ in range(100):
        names = os.listdir(f'{bus}/devices/netdevsim{NSIM_ID}/net') \
            if os.path.exists(f'{bus}/devices/netdevsim{NSIM_ID}/net') \
            else []
        if names:
            subprocess.run(['ip', 'link', 'set', names[0], 'up'],
                           check=True)
            return names[0]
        time.sleep(0.05)
    return None


def nsim_del():
    if os.path.exists(f'/sys/bus/netdevsim/devices/netdevsim{NSIM_ID}'):
        with open('/sys/bus/netdevsim/del_device', 'w') as f:
            f.write(f'{NSIM_ID}')


def set_mtu(sock, index, mtu):
    """RTM_SETLINK of @index's MTU, to its ACK: RTNL, and the netdev's
    instance lock where its driver has one"""
    body = struct.pack('=BxHiII', socket.AF_UNSPEC, 0, index, 0, 0) + \
        struct.pack('=HHI', 8, 4, mtu)      # IFLA_MTU
    # RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK
    sock.send(struct.pack('=IHHII', 16 + len(body), 19, 5, 0, 0) + body)
    reply = sock.recv(4096)
    err = struct.unpack_from('=i', reply, 16)[0]
    if err:
        raise OSError(-err, os.strerror(-err))


def loop_latency(devs, secs):
    """the latencies of an MTU set of each of @devs in turn, in a loop
    for @secs: a list of ns for each"""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    sock.bind((0, 0))
    out, end = [[] for _ in devs], time.monotonic() + secs
    idx = [(ifindex(d), int(open(f'/sys/class/net/{d}/mtu').read()))
           for d in devs]
    while time.monotonic() < end:
        for lat, (index, mtu) in zip(out, idx):
            t0 = time.monotonic_ns()
            set_mtu(sock, index, mtu)
            lat.append(time.monotonic_ns() - t0)
    sock.close()
    return out


def median(xs):
    return sorted(xs)[len(xs) // 2]


def nsim_waiters(c):
    """the budget refuses netdevsim's 1024 queues at 0.1 ms; given what
    it needs, the sampler reads them over and over, and `ip link set`
    beside it waits a fraction of one read"""
    dev = nsim_dev()
    if not dev:
        c.skip('nsim', 'no netdevsim in this kernel')
        return
    g = Genl()
    need = (possible_cpus() + 1 + 1 + 2 * NSIM_QUEUES) * 10**9 // 100_000
    old = budget()
    try:
        sid, err = session_new_err(g, 100_000, 64, ifindex=[ifindex(dev)],
                                   queues=64)
        refused = sid is None and err.errno == errno.ENOSPC
        if sid:
            session_del(g, sid)
        c.check(refused, 'nsim.budget_refuses_1024_queues_at_0.1_ms',
                f'{need} reads/s in a budget of {old}: {err or "taken"}')
        budget(max(old, need))
        base = [loop_latency([dev, 'lo'], 1.5) for _ in range(2)]
        sid = session_new(g, 100_000, 64, ifindex=[ifindex(dev)], queues=64)
        try:
            time.sleep(0.3)
            busy = loop_latency([dev, 'lo'], 3)
            info = session_get(g, sid)
            row = debugfs_row(sid)
            smp = samples(g, sid)
        finally:
            session_del(g, sid)
    finally:
        budget(old)
        nsim_del()
    # the wait for netdevsim's lock: what its MTU set takes more than
    # lo's, beside the sampler and without it (the same CPUs busy or not)
    waits = [median(n) - median(lo) for n, lo in base]
    spread = abs(waits[0] - waits[1])
    extra = median(busy[0]) - median(busy[1]) - min(waits)
    # one read of the netdev, from the kernel's counts: the session's
    # cost less its samples of the CPUs alone (those of the timer, which
    # hold the read before theirs), over the reads (the newest sample's
    # dev-read, the reads so far)
    seqs = sorted(smp)
    reads = smp[seqs[-1]].get('dev-read', 0) if seqs else 0
    cpus = sorted(smp[b]['cost'] for a, b in zip(seqs, seqs[1:])
                  if smp[b].get('dev-read') == smp[a].get('dev-read'))
    cpu = cpus[len(cpus) // 2] if cpus else 0
    read = (info.get('cost', 0) - (info.get('samples', 0) - reads) * cpu) \
        // max(reads, 1)
    print(f'# netdevsim of {NSIM_QUEUES} queues, sampled every 0.1 ms: '
          f'{info.get("samples")} samples, {reads} reads of it of '
          f'{read / 1e6:.2f} ms each, the CPUs\' {cpu / 1e3:.0f} us; '
          f'{row.get("holds")} holds of {row.get("hold_calls")} calls, '
          f'the longest {int(row.get("hold_max_ns", 0)) / 1e3:.0f} us, on '
          f'average {int(row.get("hold_mean_ns", 0)) / 1e3:.0f} us')
    print('# MTU set of netdevsim and lo, p50 ms: without the sampler ' +
          ', '.join(f'{median(n) / 1e6:.3f} and {median(lo) / 1e6:.3f}'
                    for n, lo in base) +
          f'; beside it {median(busy[0]) / 1e6:.3f} and '
          f'{median(busy[1]) / 1e6:.3f}; p90 beside it '
          f'{sorted(busy[0])[len(busy[0]) * 9 // 10] / 1e6:.3f} ms')
    # a sampler that held the lock for a whole read would make a waiter
    # wait half of one
    c.check(read and extra <= read / 10 + spread,
            'nsim.lock_waiter_waits_a_fraction_of_a_read',
            f'netdevsim\'s MTU set {extra / 1e6:.3f} ms longer beside the '
            f'sampler, whose reads take {read / 1e6:.2f} ms (spread '
            f'{spread / 1e6:.3f} ms)')


def main():
    ko = sys.argv[1]
    print('TAP version 13')
    c = Ktap('qstats_cost')
    subprocess.run(['insmod', ko, 'count=2', 'queues=64'], check=True)
    try:
        subprocess.run(['ip', 'link', 'set', 'kpmslow0', 'up'], check=True)
        charges_every_queue(c, 'kpmslow0')
        follows_channels(c, 'kpmslow0')
        holds_bounded(c, 'kpmslow0')
        gone_gives_queues_back(c, 'kpmslow0', 'kpmslow1')
    finally:
        subprocess.run(['rmmod', 'kpm_slowdev'])
    nsim_waiters(c)
    return c.finish()


if __name__ == '__main__':
    sys.exit(main())
