#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A session's cpu-net counts against /proc/net/softnet_stat and
/proc/softirqs, with backlog drops, squeezed polls and RPS wake-ups forced
on purpose: UDP from CPU 0 into a netns whose veth steers every packet to
CPU 1 (RPS), with netdev_max_backlog at 1 and netdev_budget at 1, which
hold for the whole guest for the 1.5 s of the flood.

With backlog threads (PREEMPT_RT, or thread_backlog_napi), RPS wakes the
target's thread rather than sending an IPI, and no net_rx_action() runs
for the backlog: received_rps and time_squeeze stay, so only the drops
and the processed packets are required to move there. CPU 1 is assumed
to carry no other traffic meanwhile: 200 packets of slack cover neighbour
discovery and rate-limited ICMP errors.

The kernel's raw values, decoded here from the spec alone, are checked
against the kernel's own files read before and after a sample: each count
of each CPU must lie between the two. Then `ksft-perfmon-nl record
--metrics all` records a second flood, run as its COMMAND: what each of
its per-cpu metrics says the CPUs counted must lie between 0 and what the
files counted around the whole record, and CPU 1's must add up to the
datagrams that COMMAND sent.

With NEARWRAP.KO (selftests/modules/nearwrap), the extension past 2^32 in the
kernel: the test module sets every CPU's processed, NET_RX and NET_TX
counts to 1000 under 2^32, and 20000 datagrams over lo from CPU 0 make
CPU 0's wrap. Each count of the last sample must be the files' (read
around it) plus 2^32 where the files' went below what was set, and no
sample may step back or by 2^31 or more. The counts are set to 0 after
it, so that the tests after it see counts that have not wrapped.

Needs the module loaded, root, and at least two CPUs (the main suite's
guest has four).

usage: softnet_test.py [NEARWRAP.KO]
       softnet_test.py --flood SECONDS FILE   (record's COMMAND: writes
                                              the datagrams sent to FILE)
"""

import contextlib
import json
import os
import re
import signal
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

TOOL = os.environ.get('KSFT_PERFMON_NL',
                      os.path.join(kpm_genl.TOP, 'tools', 'ksft-perfmon-nl'))
NS = 'kpm-softnet'
RPS_CPU = 1
# the cpu-stats attributes and the files' columns they are checked against
SOFTNET = {'softnet-processed': 0, 'softnet-dropped': 1,
           'softnet-time-squeeze': 2, 'softnet-received-rps': 9}
SOFTIRQS = {'softirq-net-rx': 'NET_RX:', 'softirq-net-tx': 'NET_TX:'}
NET = list(SOFTNET) + list(SOFTIRQS)
# record's optional metric of each count
METRIC = {'softnet-processed': 'cpu.softnet.processed',
          'softnet-dropped': 'cpu.softnet.dropped',
          'softnet-time-squeeze': 'cpu.softnet.squeezed',
          'softnet-received-rps': 'cpu.softnet.rps',
          'softirq-net-rx': 'cpu.softirq.net_rx',
          'softirq-net-tx': 'cpu.softirq.net_tx'}
DEFAULT = ['cpu.time.usr', 'cpu.time.sys', 'cpu.time.sirq', 'cpu.utilization']
# what selftests/modules/nearwrap sets: the counts it sets, and what to
NEAR = 1 << 32
WRAPPED = ['softnet-processed', 'softirq-net-rx', 'softirq-net-tx']


def samples(g, sid, times=None):
    """{seq: {cpu id: {attribute: value}}}, whole samples; their times
    (CLOCK_MONOTONIC ns, as time.monotonic_ns()) into @times"""
    out = {}
    for seq, smp in kpm_genl.samples(g, sid).items():
        out[seq] = smp['cpu']
        if times is not None:
            times[seq] = smp['time']
    return out


def proc_counts():
    """{cpu: {attribute: value}} of the online CPUs, from the kernel's
    own files"""
    out = {}
    with open('/proc/net/softnet_stat') as f:
        for line in f:
            col = [int(x, 16) for x in line.split()]
            out[col[12]] = {k: col[i] for k, i in SOFTNET.items()}
    with open('/proc/softirqs') as f:
        head = f.readline().split()
        for line in f:
            row = line.split()
            for k, name in SOFTIRQS.items():
                if row[0] == name:
                    for i, v in enumerate(row[1:]):
                        cpu = int(head[i][3:])
                        if cpu in out:
                            out[cpu][k] = int(v)
    return out


def around(g, sid, interval):
    """the files, the session's samples up to one taken after the files'
    first read (however late the sampler runs), and the files again"""
    before = proc_counts()
    t_before = time.monotonic_ns()
    for _ in range(100):
        time.sleep(interval / 1e9)
        times = {}
        got = samples(g, sid, times)
        if times and times[max(times)] > t_before:
            break
    return before, got, proc_counts()


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True)


def sysctl(name, value=None):
    path = '/proc/sys/net/core/' + name
    with open(path) as f:
        old = f.read().strip()
    if value is not None:
        with open(path, 'w') as f:
            f.write(str(value))
    return old


def backlog_threads():
    """whether the backlog is polled by threads (no RPS IPI, no squeeze):
    their kthreads, backlog_napi/N, exist only then"""
    for pid in os.listdir('/proc'):
        try:
            with open(f'/proc/{pid}/comm') as f:
                if f.read().startswith('backlog_napi/'):
                    return True
        except (OSError, ValueError):
            pass
    return False


def flood(secs):
    """UDP from CPU 0 to the netns, as fast as one socket sends"""
    os.sched_setaffinity(0, {0})
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    end, n = time.monotonic() + secs, 0
    while time.monotonic() < end:
        for _ in range(100):
            s.sendto(b'x' * 64, ('192.0.2.82', 9))
        n += 100
    s.close()
    os.sched_setaffinity(0, set(range(os.cpu_count())))
    return n


@contextlib.contextmanager
def steered():
    """the netns whose veth steers to RPS_CPU, and the sysctls of a
    flood, undone after it"""
    # a permanent neighbour: no datagram waits for ARP, or is dropped
    # there rather than in the backlog
    subprocess.run(['ip', 'netns', 'del', NS], stderr=subprocess.DEVNULL)
    old = {}
    try:
        sh(f'ip netns add {NS}; ip link add kpmsn0 type veth peer name '
           f'kpmsn1 netns {NS}; ip -n {NS} link set kpmsn1 address '
           f'02:00:00:00:00:82; ip addr add 192.0.2.81/30 dev kpmsn0; '
           f'ip link set kpmsn0 up; ip -n {NS} addr add 192.0.2.82/30 dev '
           f'kpmsn1; ip -n {NS} link set kpmsn1 up; ip neigh replace '
           f'192.0.2.82 lladdr 02:00:00:00:00:82 dev kpmsn0 nud permanent; '
           f'ip netns exec {NS} sh -c "echo {1 << RPS_CPU:x} > '
           f'/sys/class/net/kpmsn1/queues/rx-0/rps_cpus"')
        time.sleep(0.2)
        for k in ('netdev_max_backlog', 'netdev_budget'):
            old[k] = sysctl(k)
            sysctl(k, 1)
        yield
    finally:
        try:
            for k, v in old.items():
                sysctl(k, v)
        finally:
            subprocess.run(['ip', 'netns', 'del', NS])


def set_counts(ko, count):
    """every online CPU's WRAPPED counts to @count; the load's status
    (the test module refuses to stay loaded: EAGAIN once it has set)"""
    p = subprocess.run(['insmod', ko, f'count={count}'], capture_output=True,
                       text=True)
    return 'Resource temporarily unavailable' in p.stderr, p.stderr.strip()


def lo_flood(n):
    """@n datagrams from CPU 0 to a socket on lo, which reads none: each
    is received on CPU 0's backlog (lo has no RPS), most in a NET_RX
    softirq of its own"""
    os.sched_setaffinity(0, {0})
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx, \
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
            rx.bind(('127.0.0.1', 0))
            for _ in range(n):
                tx.sendto(b'x' * 64, rx.getsockname())
    finally:
        os.sched_setaffinity(0, set(range(os.cpu_count())))


def near_wrap(c, ko, interval):
    """the counts set near 2^32 and wrapped on CPU 0 by traffic: the
    session's 64-bit counts against the files' 32-bit ones"""
    sh('ip link set lo up')
    ok, err = set_counts(ko, NEAR - 1000)
    at_set = proc_counts()
    g = Genl()
    sid = session_new(g, interval, 512, True)
    try:
        time.sleep(0.1)
        lo_flood(20000)
        time.sleep(0.2)
        before, got, after = around(g, sid, interval)
    finally:
        session_del(g, sid)
        set_counts(ko, 0)
    seqs = sorted(got)
    last = got[seqs[-1]] if seqs else {}
    print(f'# set to 2^32 - 1000: {ok} {err}; CPU 0 at the set '
          f'{ {k: at_set.get(0, {}).get(k) for k in WRAPPED} }, sampled '
          f'{ {k: last.get(0, {}).get(k) for k in WRAPPED} }, then the '
          f'files { {k: after.get(0, {}).get(k) for k in WRAPPED} }')
    c.check(ok and all(NEAR - 1000 <= v[k] < NEAR for v in at_set.values()
                       for k in WRAPPED), 'near_wrap_set',
            f'{err}; {at_set}')

    # a count the files show below what was set has wrapped since; the
    # session, which began after the set, counts 2^32 more then
    want = ['softnet-processed']
    if not backlog_threads():
        want.append('softirq-net-rx')
    bad = []
    for cpu in before:
        for k in WRAPPED:
            high = NEAR if after[cpu][k] < at_set[cpu][k] else 0
            sampled = last.get(cpu, {}).get(k, -1)
            if not before[cpu][k] + high <= sampled <= after[cpu][k] + high:
                bad.append((cpu, k, at_set[cpu][k], before[cpu][k], sampled,
                            after[cpu][k]))
    c.check(seqs and all(last.get(0, {}).get(k, 0) >= NEAR for k in want)
            and not bad, 'wrap_extended_past_2_32',
            f'{want} of CPU 0 should be past 2^32; (cpu, count, set, '
            f'before, sampled, after): {bad[:6]}')
    big = [(b, cpu, k) for a, b in zip(seqs, seqs[1:])
           for cpu in got[b] for k in WRAPPED
           if not 0 <= got[b][cpu].get(k, 0) -
           got[a].get(cpu, {}).get(k, 0) < 1 << 31]
    c.check(len(seqs) >= 2 and not big, 'no_step_across_the_wrap',
            f'{len(seqs)} samples; {big[:6]}')


def record_flood(c):
    """a flood as record --metrics all's COMMAND, its lines against the
    files read around the record and the datagrams sent"""
    with tempfile.NamedTemporaryFile('r') as sentf:
        before = proc_counts()
        rec = subprocess.run([TOOL, 'record', '--metrics', 'all',
                              '--interval', '50', '--', sys.executable,
                              os.path.abspath(__file__), '--flood', '1.0',
                              sentf.name], capture_output=True, text=True)
        after = proc_counts()
        sent = int(sentf.read() or 0)
    policies, last = [], {}
    for line in rec.stdout.splitlines():
        m = re.match(r'# ktap-metric(-policy)?-json: (.*)', line)
        if not m:
            continue
        o = json.loads(m.group(2))
        if m.group(1):
            policies.append(o['name'])
        else:
            last[o['name']] = o['value']
    want = DEFAULT + list(METRIC.values())
    c.check(rec.returncode == 0 and policies == want and
            sorted(last) == sorted(want), 'record_metrics_all',
            f'exit {rec.returncode}, policies {policies}, observed '
            f'{sorted(last)}: {rec.stderr.strip()[:300]}')

    # what record says each CPU counted, within what the files counted
    bad = []
    for k, name in METRIC.items():
        vals = last.get(name) or []
        for cpu in before:
            v = vals[cpu] if cpu < len(vals) else None
            if v is None or not 0 <= v <= after[cpu][k] - before[cpu][k]:
                bad.append((name, cpu, v, after[cpu][k] - before[cpu][k]))
    c.check(last and not bad, 'record_counts_within_proc',
            f'(metric, cpu, recorded, counted by the files): {bad[:6]}')

    def on_rps(name):
        vals = last.get(name) or []
        return vals[RPS_CPU] or 0 if RPS_CPU < len(vals) else 0
    handled = (on_rps('cpu.softnet.processed') +
               on_rps('cpu.softnet.dropped'))
    print(f'# record: {sent} datagrams sent, {handled} processed or '
          f'dropped on CPU {RPS_CPU}, '
          f'{on_rps("cpu.softnet.squeezed")} squeezed rounds')
    c.check(sent and sent <= handled <= sent + 200,
            'record_counts_every_datagram',
            f'{sent} sent, {handled} processed or dropped on CPU {RPS_CPU}')


def main():
    if len(sys.argv) == 4 and sys.argv[1] == '--flood':
        n = flood(float(sys.argv[2]))
        # the record's last sample comes after the last packet's handling
        time.sleep(0.3)
        with open(sys.argv[3], 'w') as f:
            f.write(str(n))
        return 0
    ko = sys.argv[1] if len(sys.argv) == 2 else None
    print('TAP version 13')
    c = Ktap('softnet')
    g = Genl()
    interval = 20_000_000
    plain = session_new(g, interval, 16, False)
    sid = session_new(g, interval, 512, True)
    info, pinfo = session_get(g, sid), session_get(g, plain)
    cpus = info.get('cpus', 0)
    c.check(info.get('cpu-net') is True and 'cpu-net' not in pinfo and
            info['sample-size'] - pinfo['sample-size'] == 48 * cpus,
            'session_has_cpu_net',
            f'{info.get("sample-size")} bytes a sample against '
            f'{pinfo.get("sample-size")}, {cpus} CPUs; cpu-net '
            f'{info.get("cpu-net")}, without {pinfo.get("cpu-net")}')

    # a timeout's SIGTERM still restores the sysctls and deletes the netns
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    with steered():
        # the counts the flood starts from: the newest sample before it
        pre = samples(g, sid)
        base = pre[max(pre)] if pre else {}
        sent = flood(1.5)
    print(f'# {sent} datagrams sent from CPU 0, steered to CPU {RPS_CPU}')

    time.sleep(0.2)
    before, got, after = around(g, sid, interval)
    seqs = sorted(got)
    last = got[seqs[-1]] if seqs else {}

    # every count of every online CPU, between the files' two reads
    bad = [(cpu, k, before[cpu][k], last.get(cpu, {}).get(k),
            after.get(cpu, {}).get(k))
           for cpu in before for k in NET
           if not before[cpu][k] <= last.get(cpu, {}).get(k, -1) <=
           after.get(cpu, {}).get(k, -1)]
    c.check(seqs and not bad, 'counts_match_proc',
            f'{len(seqs)} samples; (cpu, count, before, sampled, after): '
            f'{bad[:6]}')

    # the tool's dump decodes them as this file does; it reads the
    # samples with changed-only, which leaves out what did not change
    dump = subprocess.run([TOOL, 'dump', '--id', str(sid)],
                          capture_output=True, text=True)
    dumped = {o['seq']: o for o in map(json.loads, dump.stdout.splitlines())}
    common = sorted(set(dumped) & set(got))
    diff = [(q, cpu, k, v.get(k), dumped[q]['cpus'][cpu].get(key))
            for q in common for cpu, v in got[q].items()
            for k, key in ((k, k.replace('-', '_')) for k in NET)
            if dumped[q]['cpus'][cpu].get(key) != v.get(k)]
    c.check(dump.returncode == 0 and len(common) >= 2 and not diff,
            'dump_decodes_cpu_net',
            f'exit {dump.returncode}, {len(common)} samples in both; '
            f'(seq, cpu, count, here, dump): {diff[:6]}')

    # the flood shows in the samples, on the CPU RPS steered it to
    first = base.get(RPS_CPU, {})
    last1 = last.get(RPS_CPU, {})
    moved = {k: last1.get(k, 0) - first.get(k, 0) for k in NET}
    print(f'# CPU {RPS_CPU} from the sample before the flood to the last: '
          f'{moved}')
    want = ['softnet-processed', 'softnet-dropped']
    if not backlog_threads():
        want += ['softnet-time-squeeze', 'softnet-received-rps',
                 'softirq-net-rx']
    c.check(base and all(moved[k] > 0 for k in want),
            'forced_events_counted', f'{want} should have moved: {moved}')

    # each datagram was processed or dropped there; a few more packets
    # (IPv6 neighbour discovery, rate-limited ICMP errors) may join them
    handled = moved['softnet-processed'] + moved['softnet-dropped']
    c.check(base and sent <= handled <= sent + 200,
            'every_datagram_counted_once',
            f'{sent} sent, {handled} processed or dropped on CPU {RPS_CPU}')

    # the extension only adds; a kernel count that went back would show
    # as a step of nearly 2^32
    big = [(b, cpu, k) for a, b in zip(seqs, seqs[1:])
           for cpu in got[b] for k in NET
           if got[b][cpu].get(k, 0) - got[a].get(cpu, {}).get(k, 0) >= 1 << 31]
    c.check(seqs and not big, 'no_step_of_2_31', f'{big[:6]}')

    got = samples(g, plain)
    plain_net = [k for s in got.values() for cpu in s.values()
                 for k in cpu if k in NET]
    c.check(got and not plain_net, 'none_without_cpu_net',
            f'{len(got)} samples, {plain_net[:6]}')
    with steered():
        record_flood(c)
    if ko:
        # the sessions above would take the set and the reset for wraps
        session_del(g, sid)
        session_del(g, plain)
        near_wrap(c, ko, interval)
    return c.finish()


if __name__ == '__main__':
    sys.exit(main())
