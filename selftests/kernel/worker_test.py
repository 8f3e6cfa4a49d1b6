#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The sampler off the CPU it watches: a session created on a CPU that a
softirq load keeps busy keeps its beat, and its work does not all run on
that CPU.

UDP from a sender (selftests/lib/udp_flood) on each CPU but CPU 1, into a
netns whose veth steers every packet to CPU 1 (RPS): CPU 1 spends its
time in NET_RX. A session of 50 ms of the veth is created by this test
while it runs on CPU 1, so that the session's timer fires there; its
netdev is read every interval, so every period's sample is its work's
(the work reads the netdevs, then the CPUs). The module counts the
samples whose work ran on the CPU their timer fired on (debugfs's
sessions, on_timer_cpu: the work's CPU when it starts, against the
timer's).

- CPU 1 was busy: /proc/stat says it spent most of the run out of idle
  (a check of the load, not of the module);
- the session kept its beat: its timer ran for half the periods of the
  run or more, and took a sample in half of them or more (session-get's
  samples and missed). Under TCG, the periods for which the host did not
  run the timer's or the worker's vCPU count as missed, and the guest
  cannot tell them from a sampler that was late: how many were missed
  is printed, a measure of the host as much as of the module;
- fewer than half of its samples ran on the timer's CPU, CPU 1.

A sampler on the per-CPU queue of the timer's CPU runs every sample
there, behind the softirq load, and charges that CPU's time with its
cost. (Not counted with the workqueue's trace event: enabling tracing
patches the scheduler's text while other vCPUs run it, which TCG does
not make safe.)

Needs the module loaded, root, and 3 CPUs or more.

usage: worker_test.py
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
import kpm_genl   # noqa: E402
from kpm_genl import Genl, session_del, session_get, session_new  # noqa: E402
from ktap import Ktap, skip_all   # noqa: E402

SESSIONS = '/sys/kernel/debug/ksft_perfmon/sessions'
FLOOD = os.path.join(kpm_genl.TOP, 'selftests', 'lib', 'udp_flood')
NS = 'kpm-worker'
BUSY_CPU = 1
SECONDS = 4
INTERVAL_NS = 50_000_000


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True)


def cpu_busy(cpu):
    """(busy, total) ticks of @cpu so far, from /proc/stat"""
    for line in open('/proc/stat'):
        f = line.split()
        if f[0] == f'cpu{cpu}':
            v = [int(x) for x in f[1:9]]
            return v[0] + v[1] + v[2] + v[5] + v[6] + v[7], sum(v)
    raise LookupError(cpu)


def on_timer_cpu(sid):
    head, *rows = open(SESSIONS).read().splitlines()
    cols = head.split()
    for row in rows:
        f = row.split()
        if f[0] == str(sid) and 'on_timer_cpu' in cols:
            # the ifindex column is one field: '-' or a list
            return int(f[cols.index('on_timer_cpu')])
    return None


def main():
    c = Ktap('worker')
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 3:
        return skip_all(f'{len(cpus)} CPUs: needs 3 or more')
    subprocess.run(['ip', 'netns', 'del', NS], stderr=subprocess.DEVNULL)
    senders = []
    try:
        sh(f'ip netns add {NS}; ip link add kpmwk0 type veth peer name '
           f'kpmwk1 netns {NS}; ip -n {NS} link set kpmwk1 address '
           f'02:00:00:00:00:86; ip addr add 192.0.2.85/30 dev kpmwk0; '
           f'ip link set kpmwk0 up; ip -n {NS} addr add 192.0.2.86/30 dev '
           f'kpmwk1; ip -n {NS} link set kpmwk1 up; ip neigh replace '
           f'192.0.2.86 lladdr 02:00:00:00:00:86 dev kpmwk0 nud permanent; '
           f'ip netns exec {NS} sh -c "echo {1 << BUSY_CPU:x} > '
           f'/sys/class/net/kpmwk1/queues/rx-0/rps_cpus"')
        for cpu in (x for x in cpus if x != BUSY_CPU):
            senders.append(subprocess.Popen(
                ['taskset', '-c', str(cpu), FLOOD, '192.0.2.86', '9',
                 str(SECONDS + 1.5)], stdout=subprocess.DEVNULL))
        time.sleep(0.5)
        g = Genl()
        busy0 = cpu_busy(BUSY_CPU)
        os.sched_setaffinity(0, {BUSY_CPU})
        sid = session_new(g, INTERVAL_NS, 1024, ifindex=(
            int(open('/sys/class/net/kpmwk0/ifindex').read()),))
        os.sched_setaffinity(0, set(cpus) - {BUSY_CPU})
        time.sleep(SECONDS)
        info = session_get(g, sid)
        local = on_timer_cpu(sid)
        session_del(g, sid)
        busy1 = cpu_busy(BUSY_CPU)
    finally:
        for p in senders:
            p.kill()
            p.wait()
        subprocess.run(['ip', 'netns', 'del', NS])
    busy = (busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1)
    print(f'# CPU {BUSY_CPU} busy {100 * busy:.0f}% of the run; '
          f'{info.get("samples")} samples, {info.get("missed")} periods '
          f'missed, {local} of them on the timer\'s CPU')
    c.check(busy > 0.5, 'softirq_load_kept_the_cpu_busy',
            f'CPU {BUSY_CPU} busy {100 * busy:.0f}%')
    periods = info.get('samples', 0) + info.get('missed', 0)
    c.check(periods >= SECONDS * 1e9 / INTERVAL_NS / 2 and
            info.get('missed', periods) * 2 <= periods,
            'half_the_periods_sampled',
            f'{info.get("samples")} samples, {info.get("missed")} missed')
    # the samples of the work: those the timer took itself, for a read
    # that was due while the one before was still running, are not
    c.check(local is not None and local < info.get('samples', 0) / 2 and
            info.get('dev-missed', 0) * 2 <= info.get('samples', 0),
            'work_not_on_the_busy_cpu',
            f'{local} of {info.get("samples")} on the timer\'s CPU')
    return c.finish()


if __name__ == '__main__':
    sys.exit(main())
