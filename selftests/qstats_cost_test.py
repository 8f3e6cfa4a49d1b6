#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""What a session with queues costs the host it measures, on the test
module's netdevs (selftests/slowdev: queue statistics that RTNL guards,
and queues that ethtool -L changes).

- The read budget charges every queue: a netdev of 64 queues sampled
  with queues=1 at 1 ms costs its CPUs, itself and 1 + 64 + 64 calls into
  the driver a sample, and a budget one read/s short of that refuses it,
  its extack saying so; the exact budget takes it.
- The charge follows the queues: a session charged for 4 queues, in a
  budget that has no more room, has its reads skipped (over-budget, and
  counted in qstats-skipped) once ethtool -L gives the netdev 64, the
  map still read; given room, it reads all 64 again.

usage: qstats_cost_test.py SLOWDEV_KO
"""

import errno
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kpm_genl   # noqa: E402
from kpm_genl import Genl, session_del, session_get, session_new  # noqa: E402
from ktap_metrics import Checks   # noqa: E402

READ_BUDGET = '/sys/module/ksft_perfmon/parameters/read_budget'


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


def main():
    ko = sys.argv[1]
    print('TAP version 13')
    c = Checks('qstats_cost')
    subprocess.run(['insmod', ko, 'count=1', 'queues=64'], check=True)
    try:
        subprocess.run(['ip', 'link', 'set', 'kpmslow0', 'up'], check=True)
        charges_every_queue(c, 'kpmslow0')
        follows_channels(c, 'kpmslow0')
    finally:
        subprocess.run(['rmmod', 'kpm_slowdev'])
    print(f'1..{c.n}')
    return 1 if c.failed else 0


if __name__ == '__main__':
    sys.exit(main())
