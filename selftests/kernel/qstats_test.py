#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A session's queue statistics (session-new's queues) on the drivers of
the guest that have them: netdevsim (7.3's: four queues, linked to a
peer in a netns) and virtio-net (vm.sh --virtio-net: one queue, a
second NIC on its hub in a netns as its peer; its driver has queue
statistics from 6.10 on). Debian's 6.12 has no
netdevsim: its part is skipped there.

For each, ksft-perfmon-nl record --metrics nic.queue.rx.packets,
nic.queue.tx.packets runs over UDP that this file sends as its COMMAND
(to the netdev from the peer for netdevsim, out of it to the peer for
virtio-net), with --spool, and then:

- the last sample's raw queue statistics (replay --raw) equal what the
  kernel's own qstats-get (netdev family, through the kernel's YNL CLI)
  reports once the traffic is over, queue by queue and for the netdev;
- the queues' counts moved by the datagrams sent, and netdevsim's split
  is the one its driver reports: all of it on queue 0 (it has no true
  per-queue counts);
- each record line is the raw count less the first sample's;
- ksft-perfmon-report's balance summary of the traffic's metric equals
  the coefficient of variation and max/mean computed here from the raw
  samples; netdevsim's, all on one of four queues, is sqrt(3) and 4.

ksft-perfmon-nl top --queues shows each queue's rates while the same
traffic goes: the frames tile the time from top's first sample on, so
their packets a second times their spans, over the queues, add up to
what the netdev's sysfs counter moved by around top (within a packet a
frame, for rates rounded to whole packets). debugfs's latest of a
session with cpu-net and queues shows the same queue packets and CPU
network counts as sample-get's sample of the same seq.

Then a lock holder (selftests/modules/lockhold) holds the lock the sampler takes
for the netdev for 2 s, while a session samples every 20 ms: the reads
it finds held are skipped, counted and said in each sample, while its
samples go on. On 7.3, netdevsim's is its instance lock: RTNL held for
2 s then skips nothing.

Last, the map of each one's queues to NAPI instances, IRQs and CPUs, and
of the guest's e1000e (vm.sh --e1000e 1), in a session's whole samples
and in record's changed-only ones, while record's COMMAND changes it
(e1000e's IRQ moved to the next CPU, netdevsim's channels from four to
two, virtio-net's left alone): it must be what netdev-genl's queue-get
and napi-get and /proc/irq say before and after, in versions 1 and 2.

usage: qstats_test.py LOCKHOLD_KO [KERNEL_SOURCE]
       qstats_test.py --send ADDR N   (record's COMMAND)
       qstats_test.py --change IFNAME HOW   (record's COMMAND: HOW is
                                            irq:N:CPU, channels:N, none)
"""

import glob
import json
import math
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
import kpm_genl   # noqa: E402
from kpm_genl import Genl, session_del, session_get, session_new  # noqa: E402
from ktap import Ktap   # noqa: E402

TOOL = os.path.join(kpm_genl.TOP, 'tools', 'ksft-perfmon-nl')
REPORT = os.path.join(kpm_genl.TOP, 'tools', 'ksft-perfmon-report')
NS = 'kpm-qstats'
NSIM_IDS = (7301, 7302)
QUEUES = 4
SENT = 2000
METRICS = {'rx': 'nic.queue.rx.packets', 'tx': 'nic.queue.tx.packets'}


def sh(cmd, ns=None):
    if ns:
        cmd = f'ip netns exec {ns} sh -c {cmd!r}'
    return subprocess.run(cmd, shell=True, check=True, capture_output=True,
                          text=True).stdout


def send(addr, n):
    """@n datagrams to @addr, then a pause: the record's last sample comes
    after the last one's handling"""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(n):
        s.sendto(b'x' * 64, (addr, 9))
    s.close()
    time.sleep(0.3)


def no_ipv6(ifname, ns=None):
    """no neighbour discovery, MLD or router solicitation on it"""
    sh(f'echo 1 > /proc/sys/net/ipv6/conf/{ifname}/disable_ipv6', ns)


def nsim_new(dev_id):
    with open('/sys/bus/netdevsim/new_device', 'w') as f:
        f.write(f'{dev_id} 1 {QUEUES}')
    path = f'/sys/bus/netdevsim/devices/netdevsim{dev_id}/net/*'
    for _ in range(100):
        names = glob.glob(path)
        if names:
            return os.path.basename(names[0])
        time.sleep(0.05)
    raise RuntimeError(f'netdevsim{dev_id} has no netdev')


def nsim_setup():
    """the local netdevsim netdev of a pair linked across NS, or None"""
    if not os.path.exists('/sys/bus/netdevsim'):
        subprocess.run(['modprobe', '-q', 'netdevsim'])
    if not os.path.exists('/sys/bus/netdevsim'):
        return None
    subprocess.run(['ip', 'netns', 'del', NS], stderr=subprocess.DEVNULL)
    a, b = (nsim_new(i) for i in NSIM_IDS)
    sh(f'ip netns add {NS}; ip link set {b} netns {NS}')
    ia = int(open(f'/sys/class/net/{a}/ifindex').read())
    ib = int(sh(f'cat /sys/class/net/{b}/ifindex', NS))
    with open('/proc/self/ns/net') as f0, open(f'/run/netns/{NS}') as f1, \
            open('/sys/bus/netdevsim/link_device', 'w') as link:
        link.write(f'{f0.fileno()}:{ia} {f1.fileno()}:{ib}')
    no_ipv6(a)
    no_ipv6(b, NS)
    sh(f'ip link set {a} address 02:00:00:00:00:97; '
       f'ip addr add 192.0.2.97/30 dev {a}; ip link set {a} up; '
       f'ip neigh replace 192.0.2.98 lladdr 02:00:00:00:00:98 dev {a} '
       f'nud permanent')
    sh(f'ip link set {b} address 02:00:00:00:00:98; '
       f'ip addr add 192.0.2.98/30 dev {b}; ip link set {b} up; '
       f'ip neigh replace 192.0.2.97 lladdr 02:00:00:00:00:97 dev {b} '
       f'nud permanent', NS)
    return a


def nsim_teardown():
    for i in NSIM_IDS:
        try:
            with open('/sys/bus/netdevsim/del_device', 'w') as f:
                f.write(str(i))
        except OSError:
            pass
    subprocess.run(['ip', 'netns', 'del', NS], stderr=subprocess.DEVNULL)


def virtio_setup():
    """the first of the two virtio-net netdevs on one hub (vm.sh
    --virtio-net), the second moved into NS as its peer, or None"""
    subprocess.run(['modprobe', '-q', 'virtio_net'])
    for _ in range(50):
        nics = sorted((open(f'/sys/class/net/{n}/address').read(), n)
                      for n in (d.split('/')[4] for d in
                                glob.glob('/sys/class/net/*/device/driver')
                                if os.path.basename(os.readlink(d)) ==
                                'virtio_net'))
        if len(nics) == 2:
            break
        time.sleep(0.1)
    else:
        return None
    (mac_a, a), (mac_b, b) = ((m.strip(), n) for m, n in nics)
    subprocess.run(['ip', 'netns', 'del', NS], stderr=subprocess.DEVNULL)
    sh(f'ip netns add {NS}; ip link set {b} netns {NS}')
    no_ipv6(a)
    no_ipv6(b, NS)
    # the peer first: a NIC whose hub has no port up stalls its TX queue
    sh(f'ip addr add 192.0.2.102/30 dev {b}; ip link set {b} up; '
       f'ip neigh replace 192.0.2.101 lladdr {mac_a} dev {b} nud permanent',
       NS)
    sh(f'ip addr add 192.0.2.101/30 dev {a}; ip link set {a} up; '
       f'ip neigh replace 192.0.2.102 lladdr {mac_b} dev {a} nud permanent')
    return a


def virtio_teardown(ifname):
    """the sender down before its peer goes back"""
    subprocess.run(['ip', 'link', 'set', ifname, 'down'])
    subprocess.run(['ip', 'netns', 'del', NS], stderr=subprocess.DEVNULL)


def sums(base, rows):
    """netdev scope as qstats-get adds it up (netdev_nl_stats_add()): each
    counter of the base statistics, plus the queues' that report it"""
    out = dict(base)
    for r in rows:
        for k in out:
            out[k] += r.get(k, 0)
    return out


def amounts(raw, direction, base=False):
    """the packets of @direction per queue, last sample less first; with
    @base, the base statistics' too, last"""
    first, last = raw[0]['qstats'][0], raw[-1]['qstats'][0]
    key = f'{direction}_packets'
    out = [q[key] - p[key] for p, q in zip(first[direction], last[direction])]
    if base:
        out.append(last['base'].get(key, 0) - first['base'].get(key, 0))
    return out


def record_device(c, name, ifname, direction, command, ksrc):
    ifindex = int(open(f'/sys/class/net/{ifname}/ifindex').read())
    with tempfile.TemporaryDirectory() as tmp:
        spool = os.path.join(tmp, 'spool')
        rec = subprocess.run([TOOL, 'record', '--metrics',
                              ','.join(METRICS.values()), '--queues',
                              str(QUEUES), '--interval', '50', '--ifname',
                              ifname, '--spool', spool, '--', *command],
                             capture_output=True, text=True)
        genl_q = genl_dev = None
        if ksrc:
            from ynl_cli_test import cli
            nspec = os.path.join(ksrc, 'Documentation', 'netlink', 'specs',
                                 'netdev.yaml')
            _, genl_q, _ = cli(ksrc, 'dump', 'qstats-get',
                               {'ifindex': ifindex, 'scope': 'queue'},
                               spec=nspec)
            _, genl_dev, _ = cli(ksrc, 'dump', 'qstats-get',
                                 {'ifindex': ifindex}, spec=nspec)
        rep = subprocess.run([TOOL, 'replay', '--raw', spool],
                             capture_output=True, text=True)
        raw = [json.loads(x) for x in rep.stdout.splitlines()
               if x.startswith('{')]
        report = subprocess.run([REPORT, '--json'], input=rec.stdout +
                                f'ok 1 {name}\n', capture_output=True,
                                text=True)
    print(f'# {name}: record exited {rec.returncode}, {len(raw)} samples')
    for line in rec.stdout.splitlines():
        if line.startswith('# ksft-perfmon'):
            print(f'# {line}')
    c.check(rec.returncode == 0 and raw and all(
        x['qstats'][0]['read'] for x in raw), f'{name}.record_reads_queues',
        f'{rec.stderr.strip()[:300]}; {raw[-1]["qstats"] if raw else None}')
    if not raw or not raw[-1]['qstats'][0]['read']:
        return
    last = raw[-1]['qstats'][0]
    print(f'# {name}: last sample: {json.dumps(last)[:600]}')

    # what the kernel's own qstats-get says, queue by queue and for the
    # netdev, once the traffic is over
    if genl_q is None:
        c.skip(f'{name}.equal_netdev_genl',
               'no kernel source with the YNL CLI given')
    else:
        mine = [({'queue-type': d, 'queue-id': i},
                 {k.replace('_', '-'): v for k, v in q.items()})
                for d in ('rx', 'tx') for i, q in enumerate(last[d])]
        theirs = {(r['queue-type'], r['queue-id']):
                  {k: v for k, v in r.items()
                   if k not in ('ifindex', 'queue-type', 'queue-id')}
                  for r in genl_q or []}
        bad = [(k['queue-type'], k['queue-id'], v,
                theirs.get((k['queue-type'], k['queue-id'])))
               for k, v in mine
               if theirs.get((k['queue-type'], k['queue-id'])) != v]
        whole = sums(last['base'], [*last['rx'], *last['tx']])
        dev = {k.replace('-', '_'): v for k, v in (genl_dev or [{}])[0].items()
               if k != 'ifindex'}
        c.check(genl_q and not bad and len(theirs) == len(mine) and
                dev == whole, f'{name}.equal_netdev_genl',
                f'(type, id, sampled, qstats-get): {bad[:4]}; netdev '
                f'{whole} against {dev}')

    # the datagrams sent, in the queues of their direction
    moved = amounts(raw, direction)
    print(f'# {name}: {direction} packets per queue over the record: '
          f'{moved}')
    # netdevsim counts a netdev's first packet in its base statistics
    counted = sum(amounts(raw, direction, base=True))
    c.check(SENT <= counted <= SENT + 20, f'{name}.queues_count_sent',
            f'{SENT} sent, {counted} counted in the queues and the base: '
            f'{moved}')
    if name == 'nsim':
        # netdevsim reports all of a netdev's packets on queue 0 but one,
        # which its base statistics hold
        c.check(len(moved) == QUEUES and moved[0] == sum(moved) and
                last['base'].get(f'{direction}_packets') == 1,
                'nsim.driver_split_on_queue_0',
                f'{moved}, base {last["base"]}')

    # each line the raw count less the first sample's
    lines = {}
    for line in rec.stdout.splitlines():
        if line.startswith('# ktap-metric-json: '):
            o = json.loads(line.split(': ', 1)[1])
            if o['name'] in METRICS.values():
                lines[(o['name'], o['queue'])] = o['value']
    want = {(METRICS[d], i): v for d in ('rx', 'tx')
            for i, v in enumerate(amounts(raw, d))}
    c.check(lines == want, f'{name}.record_lines_are_raw_deltas',
            f'{lines} against {want}')

    # the balance summary, against one computed here
    rows = [json.loads(x) for x in report.stdout.splitlines()]
    bal = [r for r in rows if 'balance' in r and
           r['metric'] == METRICS[direction]]
    if len(moved) < 2:
        c.check(report.returncode == 0 and not bal,
                f'{name}.no_balance_of_one_queue', f'{bal}')
        return
    mean = sum(moved) / len(moved)
    cv = math.sqrt(sum((x - mean) ** 2 for x in moved) / len(moved)) / mean
    got = bal[0]['balance'] if bal else {}
    print(f'# {name}: balance {got}; computed here: cv {cv}, max/mean '
          f'{max(moved) / mean}')
    ok = (report.returncode == 0 and len(bal) == 1 and
          got.get('queues') == len(moved) and
          got.get('total') == sum(moved) and
          math.isclose(got.get('cv') or 0, cv, rel_tol=1e-9) and
          math.isclose(got.get('max_mean') or 0, max(moved) / mean,
                       rel_tol=1e-9))
    if name == 'nsim':
        ok = ok and math.isclose(cv, math.sqrt(3)) and \
            math.isclose(max(moved) / mean, 4)
    c.check(ok, f'{name}.balance_summary', f'{report.stderr} {bal}')


def top_queues(c, name, ifname, direction, command):
    """top --queues around @command's traffic: its frames' queue rows
    against the netdev's sysfs counter of @direction"""
    stat = f'/sys/class/net/{ifname}/statistics/{direction}_packets'
    before = int(open(stat).read())
    # a file, not a pipe read only at the end: a top that waits to write
    # misses its session's samples
    with tempfile.TemporaryFile('w+') as f:
        top = subprocess.Popen([TOOL, 'top', '--interval', '500',
                                '--ifname', ifname, '--queues', str(QUEUES)],
                               stdout=f, stderr=subprocess.PIPE, text=True)
        # its first sample, then the traffic, then two samples after it
        time.sleep(1.5)
        subprocess.run(command, check=True)
        time.sleep(1.5)
        top.terminate()
        _, err = top.communicate()
        f.seek(0)
        out = f.read()
    after = int(open(stat).read())
    row = re.compile(rf'^{re.escape(ifname)} (\d+) +(\S+) +(\S+) +(\S+) +'
                     r'(\S+)$')
    col = 0 if direction == 'rx' else 2
    frames, packets, queues = 0, 0.0, set()
    for frame in out.split('ksft_perfmon top: ')[1:]:
        m = re.search(r' over ([\d.]+) s', frame)
        rows = [r for r in map(row.match, frame.splitlines()) if r]
        if not m or not rows:
            continue
        frames += 1
        for r in rows:
            queues.add(int(r.group(1)))
            packets += float(r.group(2 + col)) * float(m.group(1))
    moved = after - before
    nq = len(glob.glob(f'/sys/class/net/{ifname}/queues/{direction}-*'))
    print(f'# {name}: top over {frames} frames, queues {sorted(queues)}: '
          f'{packets:.1f} {direction} packets; sysfs moved {moved}')
    c.check(top.returncode == 0 and frames >= 3 and moved >= SENT and
            queues == set(range(min(QUEUES, nq))) and
            abs(packets - moved) <= frames + 1,
            f'{name}.top_queue_rates_add_up',
            f'exit {top.returncode} {err.strip()[:200]}')


NET_COUNTS = ('softnet-processed', 'softnet-dropped', 'softnet-time-squeeze',
              'softnet-received-rps', 'softirq-net-rx', 'softirq-net-tx')


def debugfs_latest(c, name, ifname):
    """debugfs's latest of a session with cpu-net and queues: its netdev
    line's queue packets and its CPU lines' network counts, against the
    sample of the same seq that sample-get gives"""
    ifindex = int(open(f'/sys/class/net/{ifname}/ifindex').read())
    g = Genl()
    sid = session_new(g, 50_000_000, 64, cpu_net=True, ifindex=[ifindex],
                      queues=QUEUES)
    time.sleep(0.5)
    with open('/sys/kernel/debug/ksft_perfmon/latest') as f:
        text = f.read()
    got = kpm_genl.samples(g, sid)
    session_del(g, sid)
    m = re.search(rf'^session {sid} seq (\d+) .*\n((?:  .*\n)*)', text, re.M)
    seq, block = (int(m.group(1)), m.group(2)) if m else (None, '')
    mine, theirs = {}, {}
    d = re.search(rf'^  dev {ifindex} .* qstats(?: skipped)? rx_queues \d+ '
                  r'tx_queues \d+ rx_packets (\S+) tx_packets (\S+)'
                  r'(?: map \d+(?: skipped)? rx_cpus \S+ tx_cpus \S+)?$',
                  block,
                  re.M)
    for i, kind in enumerate(('rx', 'tx')):
        for q, v in enumerate(d.group(1 + i).split(',') if d else []):
            mine[(kind, q)] = None if v == '-' else int(v)
    # online CPUs' lines: an offline one's says so before its times
    for cpu, counts in re.findall(r'^  cpu(\d+) +\d[\d ]*\| ([\d ]+)$',
                                  block, re.M):
        mine[int(cpu)] = [int(x) for x in counts.split()]
    smp = got.get(seq, {'queue': [], 'cpu': {}})
    for q in smp['queue']:
        kind = ('rx', 'tx')[q['queue-type']]
        theirs[(kind, q['queue-id'])] = q.get(f'{kind}-packets')
    for cpu, st in smp['cpu'].items():
        if st.get('online'):
            theirs[cpu] = [st.get(k) for k in NET_COUNTS]
    print(f'# {name}: debugfs latest, seq {seq}: {len(mine)} queues and '
          f'CPUs; {d.group(0).strip()[-120:] if d else block[:200]}')
    c.check(seq in got and d and mine == theirs and
            any(isinstance(k, int) for k in mine), f'{name}.debugfs_latest',
            f'debugfs {mine}, sample-get {theirs}')


def beyond_n(c, ifname):
    """a session of 2 of netdevsim's 4 queues: two queue nests a
    direction, the netdev's 4 queues said, and base and queues adding up
    to its rx_packets (netdevsim's stats64 and its queue statistics count
    the same). netdevsim's queues 2 and 3 count nothing, so what the base
    gets of them here is 0: the sum is checked, not its parts."""
    ifindex = int(open(f'/sys/class/net/{ifname}/ifindex').read())
    g = Genl()
    sid = session_new(g, 20_000_000, 16, ifindex=[ifindex], queues=2)
    time.sleep(0.3)
    got = kpm_genl.samples(g, sid)
    session_del(g, sid)
    last = got[max(got)] if got else None
    qs = last and last['qstats'][0]
    queues = [q for q in last['queue']] if last else []
    total = qs and qs.get('rx-packets', 0) + sum(
        q.get('rx-packets', 0) for q in queues if q['queue-type'] == 0)
    dev = last and last['dev'][0].get('rx-packets')
    print(f'# nsim: 2 of 4 queues: {qs}, {len(queues)} queue nests, '
          f'stats64 rx_packets {dev}')
    c.check(qs and qs.get('rx-queues') == 4 and len(queues) == 4 and
            all(q['queue-id'] < 2 for q in queues) and total == dev,
            'nsim.queues_beyond_n_in_base', f'{total} against {dev}')


HELD = re.compile(r'kpm_lockhold: held .* from (\d+) to (\d+) ns')


def held_times():
    """(from, to) of the lock holder's last hold, as it says in the
    kernel log, or None"""
    out = subprocess.run(['dmesg'], capture_output=True, text=True).stdout
    got = HELD.findall(out)
    return tuple(int(x) for x in got[-1]) if got else None


def hold(c, name, ifname, ko, rtnl, instance=False):
    """the lock held for 2 s by @ko during a session of 20 ms; with @rtnl
    RTNL, which the sampler does not take for an instance-locked netdev;
    with @instance the netdev's instance lock, which the sampler takes
    after RTNL to read the map of a netdev that is not: its samples say
    map-skipped. The samples watched are those whose reads, from their
    time to their time plus cost, lie within the hold, as the holder
    says it took and let go of the lock: however late insmod returns, or
    the holder ran, on a loaded host."""
    ifindex = int(open(f'/sys/class/net/{ifname}/ifindex').read())
    g = Genl()
    sid = session_new(g, 20_000_000, 1024, ifindex=[ifindex], queues=QUEUES)
    time.sleep(0.3)
    before = session_get(g, sid).get('qstats-skipped', 0)
    p = subprocess.run(['insmod', ko, f'ifindex={ifindex}', 'ms=2000'] +
                       (['rtnl=1'] if rtnl else []) +
                       (['instance=1'] if instance else []),
                       capture_output=True, text=True)
    span = held_times()
    # a sample of the hold's end, and one after it
    time.sleep(0.1)
    skipped = session_get(g, sid).get('qstats-skipped', 0) - before
    got = kpm_genl.samples(g, sid)
    session_del(g, sid)
    lo, hi = span or (0, 0)
    inside = [s for s in got.values()
              if lo < s['time'] and s['time'] + s['cost'] < hi]
    times = sorted(s['time'] for s in got.values() if lo <= s['time'] <= hi)
    gap = max((b - a for a, b in zip(times, times[1:])), default=None)
    # the instance lock keeps the map from being read, not the counters
    flag = 'map-skipped' if instance else 'skipped'
    flags = [bool(s['qstats'] and s['qstats'][0].get(flag))
             for s in inside]
    what = 'RTNL' if rtnl else 'its instance lock' if instance else \
        'its lock'
    print(f'# {name}: {what} held for '
          f'{(hi - lo) / 1e9:.2f} s (insmod: {p.stderr.strip()}); '
          f'{len(inside)} samples read within it, {sum(flags)} '
          f'skipped; {skipped} reads skipped; longest gap '
          f'{gap / 1e6 if gap else 0:.0f} ms')
    held = p.returncode != 0 and 'temporarily' in p.stderr and \
        span is not None and hi - lo >= 2_000_000_000
    # the sampler went on through the hold: a sample every 500 ms at
    # least, however slow the host (the interval is 20 ms)
    going = len(inside) >= 4 and gap is not None and gap < 500_000_000 and \
        all(s['cpu'] for s in inside)
    if rtnl:
        c.check(held and going and not any(flags) and not skipped,
                f'{name}.rtnl_held_reads_go_on',
                f'held {held}, samples going {going}, skipped {skipped}')
    else:
        c.check(held and going and all(flags) and skipped >= len(inside),
                f'{name}.{"napi_" if instance else ""}'
                'lock_held_reads_skipped',
                f'held {held}, samples going {going}, flags {flags}, '
                f'skipped {skipped}')


def e1000e_setup():
    """the e1000e netdev of the main guest (vm.sh --e1000e 1), up, or
    None"""
    subprocess.run(['modprobe', '-q', 'e1000e'])
    for _ in range(50):
        for d in glob.glob('/sys/class/net/*/device/driver'):
            if os.path.basename(os.readlink(d)) == 'e1000e':
                name = d.split('/')[4]
                no_ipv6(name)
                sh(f'ip link set {name} up')
                return name
        time.sleep(0.1)
    return None


def genl_map(ksrc, ifindex):
    """{(type, queue): (napi id, IRQ, CPU)} of the netdev's first QUEUES
    queues of each direction that netdev-genl's queue-get links to a NAPI
    instance, with napi-get's irq and the IRQ's effective affinity from
    /proc, None where there is none or it is not one CPU"""
    from ynl_cli_test import cli
    nspec = os.path.join(ksrc, 'Documentation', 'netlink', 'specs',
                         'netdev.yaml')
    _, queues, err = cli(ksrc, 'dump', 'queue-get', {'ifindex': ifindex},
                         spec=nspec)
    if queues is None:
        raise RuntimeError(f'queue-get: {err}')
    out = {}
    for q in queues:
        if q['id'] >= QUEUES or 'napi-id' not in q:
            continue
        _, napi, err = cli(ksrc, 'do', 'napi-get', {'id': q['napi-id']},
                           spec=nspec)
        irq = (napi or {}).get('irq')
        cpu = None
        if irq is not None:
            eff = open(f'/proc/irq/{irq}/effective_affinity_list').read()
            cpu = int(eff) if eff.strip().isdigit() else None
        out[(q['type'], q['id'])] = (q['napi-id'], irq, cpu)
    return out


def whole_map(smp):
    """(map version, {(type, queue): (napi id, IRQ, CPU)}) of a whole
    sample of one netdev (kpm_genl.samples())"""
    links = {('rx' if q['queue-type'] == 0 else 'tx', q['queue-id']):
             (q['napi-id'], q.get('irq'), q.get('cpu'))
             for q in smp['queue'] if 'napi-id' in q}
    return smp['qstats'][0].get('map-version'), links


def raw_map(raw):
    """the same of a sample that record reassembled from changed-only
    parts (replay --raw)"""
    m = raw['qstats'][0].get('map')
    if m is None:
        return None, {}
    return m['version'], {(d, x['queue']): (x['napi_id'], x.get('irq'),
                                            x.get('cpu'))
                          for d in ('rx', 'tx') for x in m[d]}


def versions(maps):
    """{version: map} of a series of (version, map), or None when a
    version goes back or comes with two maps"""
    out, last = {}, 0
    for v, m in maps:
        if v is None or v < last or out.setdefault(v, m) != m:
            return None
        last = v
    return out


def change_map(ifname, how):
    """record's COMMAND: after a while, change the map of @ifname as @how
    says (irq:N:CPU, to move IRQ N to CPU; channels:N; none), then wait
    a while more"""
    time.sleep(0.6)
    kind, *args = how.split(':')
    if kind == 'irq':
        with open(f'/proc/irq/{args[0]}/smp_affinity_list', 'w') as f:
            f.write(args[1])
        for _ in range(100):
            eff = open(f'/proc/irq/{args[0]}/effective_affinity_list')
            if eff.read().strip() == args[1]:
                break
            time.sleep(0.05)
    elif kind == 'channels':
        sh(f'ethtool -L {ifname} combined {args[0]}')
    time.sleep(0.6)


def queue_map(c, name, ifname, ksrc, how):
    """the map of @ifname's queues to NAPI instances, IRQs and CPUs in a
    session's whole samples (sample-get) and in record's (changed-only),
    against netdev-genl and /proc/irq before and after record's COMMAND
    changes it as @how says (change_map())"""
    if not ksrc:
        c.skip(f'{name}.map_equals_netdev_genl',
               'no kernel source with the YNL CLI given')
        return
    ifindex = int(open(f'/sys/class/net/{ifname}/ifindex').read())
    before = genl_map(ksrc, ifindex)
    if how == 'irq':
        # the IRQ of its RX queue 0 to the next CPU, where the driver
        # links one (e1000e from 6.14 on)
        irq, cpu = before.get(('rx', 0), (None, None, None))[1:]
        how = 'none' if cpu is None else \
            f'irq:{irq}:{(cpu + 1) % os.cpu_count()}'
    g = Genl()
    sid = session_new(g, 20 * 1000 * 1000, 1024, ifindex=[ifindex],
                      queues=QUEUES)
    with tempfile.TemporaryDirectory() as tmp:
        spool = os.path.join(tmp, 'spool')
        rec = subprocess.run([TOOL, 'record', '--metrics',
                              'nic.queue.rx.cpu,nic.queue.tx.cpu',
                              '--queues', str(QUEUES), '--interval', '20',
                              '--ifname', ifname, '--spool', spool, '--',
                              sys.executable, os.path.abspath(__file__),
                              '--change', ifname, how],
                             capture_output=True, text=True)
        rep = subprocess.run([TOOL, 'replay', '--raw', spool],
                             capture_output=True, text=True)
        raw = [json.loads(x) for x in rep.stdout.splitlines()
               if x.startswith('{')]
    whole = kpm_genl.samples(g, sid)
    session_del(g, sid)
    after = genl_map(ksrc, ifindex)
    # a read that another holder of the lock cut short has no counters
    # and no map: the samples that say so are left out
    wread = [whole[k] for k in sorted(whole)
             if not whole[k]['qstats'][0].get('skipped')]
    rread = [x for x in raw if not x['qstats'][0].get('skipped')]
    wmaps = [whole_map(x) for x in wread]
    rmaps = [raw_map(x) for x in rread]
    print(f'# {name}: {how}: netdev-genl before {before}, after {after}')
    print(f'# {name}: {len(wmaps)} whole samples, versions '
          f'{sorted(set(v for v, _ in wmaps))}; record: {len(rmaps)}, '
          f'{sorted(set(v for v, _ in rmaps), key=str)}; skipped reads '
          f'left out: {len(whole) - len(wread)} and {len(raw) - len(rread)}')
    # most reads are whole, or the check would have little to go on
    c.check(rec.returncode == 0 and len(wmaps) * 2 > len(whole) and
            len(rmaps) * 2 > len(raw) and
            wmaps[0][1] == before and wmaps[-1][1] == after,
            f'{name}.map_equals_netdev_genl',
            f'exit {rec.returncode} {rec.stderr.strip()[:200]}; first '
            f'{wmaps[:1]}, last {wmaps[-1:]}')

    # a version for each map, one more at each change, from 1
    wv, rv = versions(wmaps), versions(rmaps)
    want = [1] if before == after else [1, 2]
    c.check(wv is not None and sorted(wv) == want and
            wv[want[0]] == before and wv[want[-1]] == after,
            f'{name}.map_version_counts_changes',
            f'{wmaps[:1]} .. {wmaps[-1:]}: {wv}')
    if how.startswith('irq:'):
        c.check(before[('rx', 0)][2] != after[('rx', 0)][2] and
                str(after[('rx', 0)][2]) == how.split(':')[2],
                f'{name}.map_follows_the_irq', f'{before} -> {after}')
    # record's changed-only samples carry the same maps
    c.check(rv is not None and rv == {v: m for v, m in (wv or {}).items()
                                      if v in rv} and
            rv.get(max(want)) == after,
            f'{name}.changed_only_maps_equal_whole', f'{rv} against {wv}')

    # a line for each queue with a CPU, of each version
    lines, wanted = set(), set()
    for line in rec.stdout.splitlines():
        if line.startswith('# ktap-metric-json: '):
            o = json.loads(line.split(': ', 1)[1])
            if o['name'].endswith('.cpu'):
                print(f'# {name}: {line}')
                lines.add((o['name'], o['queue'], o['map_version'],
                           o['napi_id'], o['irq'], o['value']))
    for v, m in (rv or {}).items():
        for (d, q), (napi, irq, cpu) in m.items():
            if cpu is not None:
                wanted.add((f'nic.queue.{d}.cpu', q, v, napi, irq, cpu))
    c.check(lines == wanted, f'{name}.record_cpu_lines',
            f'{sorted(lines)} against {sorted(wanted)}')


def main():
    if len(sys.argv) == 4 and sys.argv[1] == '--send':
        send(sys.argv[2], int(sys.argv[3]))
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == '--change':
        change_map(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) not in (2, 3):
        print(__doc__.split('usage: ')[1], file=sys.stderr)
        return 2
    ko = sys.argv[1]
    ksrc = sys.argv[2] if len(sys.argv) == 3 else None
    print('TAP version 13')
    c = Ktap('qstats')
    me = [sys.executable, os.path.abspath(__file__), '--send']
    try:
        nsim = nsim_setup()
        if nsim:
            record_device(c, 'nsim', nsim, 'rx',
                          ['ip', 'netns', 'exec', NS, *me, '192.0.2.97',
                           str(SENT)], ksrc)
            top_queues(c, 'nsim', nsim, 'rx',
                       ['ip', 'netns', 'exec', NS, *me, '192.0.2.97',
                        str(SENT)])
            debugfs_latest(c, 'nsim', nsim)
            beyond_n(c, nsim)
            hold(c, 'nsim', nsim, ko, rtnl=False)
            hold(c, 'nsim', nsim, ko, rtnl=True)
            queue_map(c, 'nsim', nsim, ksrc, 'channels:2')
        else:
            c.skip('nsim', 'no netdevsim in this kernel')
    finally:
        nsim_teardown()
    virtio = virtio_setup()
    if virtio:
        try:
            record_device(c, 'virtio', virtio, 'tx',
                          [*me, '192.0.2.102', str(SENT)], ksrc)
            top_queues(c, 'virtio', virtio, 'tx',
                       [*me, '192.0.2.102', str(SENT)])
            debugfs_latest(c, 'virtio', virtio)
            hold(c, 'virtio', virtio, ko, rtnl=False)
            queue_map(c, 'virtio', virtio, ksrc, 'none')
        finally:
            virtio_teardown(virtio)
    else:
        c.check(False, 'virtio_net', 'no two virtio-net netdevs: vm.sh '
                '--virtio-net gives the guest them')
    e1000e = e1000e_setup()
    if e1000e:
        try:
            queue_map(c, 'e1000e', e1000e, ksrc, 'irq')
            # the lock of its NAPI instance's fields, from 6.14 on
            if tuple(map(int, os.uname().release.split('.')[:2])) >= \
                    (6, 14):
                hold(c, 'e1000e', e1000e, ko, rtnl=False, instance=True)
        finally:
            subprocess.run(['ip', 'link', 'set', e1000e, 'down'])
    else:
        c.check(False, 'e1000e', 'no e1000e netdev: vm.sh --e1000e 1 '
                'gives the guest one')
    return c.finish()


if __name__ == '__main__':
    sys.exit(main())
