#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check the output of a driver selftest run with PerfMonitor
(selftests/kernel/perfmon_py_test.py): valid metric lines from both
hosts before the test case's result line, all at times inside the case
(which the test prints as "# elapsed: S s"), the test's own throughput
lines, and ksft-perfmon-report's numbers for them equal to ours. Both
tests ask for one optional metric, cpu.softnet.processed: it must come
from both hosts, with the traffic in it, and no other optional one may.

usage: check_perfmon_output.py OUTPUT CASE
"""

import bisect
import json
import os
import re
import statistics
import subprocess
import sys

from ktap import Ktap
from ktap_metrics import LINE, VECTORS, dumps

# what both tests ask for besides the default set
OPTIONAL = 'cpu.softnet.processed'
ELAPSED = re.compile(r'^(?:# )+elapsed: ([0-9.]+) s$')
TRIP = re.compile(r'^(?:# )+remote round trip: ([0-9.]+) s$')
REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                      '..', '..', 'tools', 'ksft-perfmon-report')


def busy_series(obs, host):
    """(time, user + system + softirq seconds of all CPUs) of @host"""
    busy = {}
    for o in obs:
        if o['host'] == host and o['name'] in ('cpu.time.usr',
                                                'cpu.time.sys',
                                                'cpu.time.sirq'):
            busy[o['time']] = busy.get(o['time'], 0.0) + sum(
                x for x in o['value'] if x is not None)
    return sorted(busy.items())


def at(series, t):
    """@series linearly interpolated at @t; None outside it"""
    i = bisect.bisect_left(series, (t,))
    if i < len(series) and series[i][0] == t:
        return series[i][1]
    if i == 0 or i == len(series):
        return None
    (t0, v0), (t1, v1) = series[i - 1], series[i]
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def best_shift(local, remote):
    """the shift in -5..5 s, in 10 ms steps, that makes the remote's
    increments closest to the local ones; None with too little overlap"""
    best = None
    for step in range(-500, 501):
        d, err, n = step / 100, 0.0, 0
        for (t0, v0), (t1, v1) in zip(remote, remote[1:]):
            a, b = at(local, t0 + d), at(local, t1 + d)
            if a is not None and b is not None:
                err += abs((v1 - v0) - (b - a))
                n += 1
        if n >= 5 and (best is None or err / n < best[0]):
            best = (err / n, d)
    return best and best[1]


def policies_and_observations(c, metric):
    """@metric's lines, (index, kind, JSON text), checked: the JSON as
    Python writes it, each policy once and before every observation, the
    system metrics' policies the format's test vectors. (the policies'
    names, the observations)"""
    objs = [(kind, json.loads(text), text) for _, kind, text in metric]
    c.check(all(dumps(o) == text for _, o, text in objs),
            'json_dumps_byte_identical')
    policies = [o for kind, o, _ in objs if kind == 'ktap-metric-policy-json']
    names = [p['name'] for p in policies]
    first_obs = next((i for i, (kind, _, _) in enumerate(objs)
                      if kind == 'ktap-metric-json'), len(objs))
    c.check(len(names) == len(set(names)) and
            all(kind == 'ktap-metric-policy-json'
                for kind, _, _ in objs[:first_obs]) and
            len(policies) == first_obs,
            'policies_once_before_observations', f'{names}')
    by_name = {p['name']: text for kind, p, text in objs
               if kind == 'ktap-metric-policy-json'}
    c.check(all(by_name.get(n) == v for n, v in VECTORS.items()),
            'system_policies_equal_test_vectors',
            f'{set(VECTORS) - set(by_name)} missing or different')
    return names, [o for kind, o, _ in objs if kind == 'ktap-metric-json']


def system_metrics_of(c, obs, host):
    """@host's system metrics, all there, with the traffic in its system
    and softirq time; the last value of each of its metrics"""
    seen = {o['name'] for o in obs if o['host'] == host}
    c.check(set(VECTORS) <= seen, f'{host}.all_system_metrics',
            f'{host}: missing {set(VECTORS) - seen}')
    last = {}
    for o in obs:
        if o['host'] == host:
            last[o['name']] = o['value']
    busy = sum(x for n in ('cpu.time.sys', 'cpu.time.sirq')
               for x in last.get(n, []) if x is not None)
    c.check(busy >= 0.1, f'{host}.traffic_in_sys_and_softirq',
            f'{host}: {busy} s of sys + softirq')
    return last


def read_output(c, path, case):
    """the lines of @path, @case's result passed; (the lines, the index of
    its result line or -1, its metric lines as (index, kind, JSON text))"""
    with open(path) as f:
        lines = f.read().splitlines()
    result = [i for i, line in enumerate(lines)
              if line.startswith('ok ') and line.endswith(case)]
    c.check(len(result) == 1, 'case_passed', f'no "ok N ...{case}"')
    metric = [(i, m.group(1), m.group(2)) for i, line in enumerate(lines)
              if (m := LINE.match(line))]
    return lines, result[0] if result else -1, metric


def main():
    path, case = sys.argv[1], sys.argv[2]
    c = Ktap('drv')
    lines, end, metric = read_output(c, path, case)
    c.check(metric and all(i < end for i, _, _ in metric),
            'metric_lines_before_result', f'result at line {end + 1}')

    names, obs = policies_and_observations(c, metric)
    c.check(set(names) == set(VECTORS) | {'throughput', OPTIONAL},
            'optional_metrics_as_asked', f'{names}')

    for host in ('local', 'remote'):
        last = system_metrics_of(c, obs, host)
        # iperf3's segments and ACKs, each host the receiver of one
        processed = sum(x for x in last.get(OPTIONAL, []) if x is not None)
        c.check(processed >= 100, f'{host}.packets_in_softnet_processed',
                f'{host}: {processed} packets processed')
    # Relative to the case's start, every time falls inside the case:
    # from 0 to the "# elapsed: S" the test prints once the monitor has
    # stopped, on the same clock. The guest's uptime (an absolute
    # CLOCK_MONOTONIC time) is past it, however slow the kernel.
    times = [o['time'] for o in obs]
    elapsed = [float(m.group(1)) for line in lines
               if (m := ELAPSED.match(line))]
    c.check(times == sorted(times) and times and len(elapsed) == 1 and
            0 <= times[0] and times[-1] <= elapsed[0],
            'times_from_case_start_in_order',
            f'{times[:3]} ... {times[-3:]}, elapsed {elapsed}')

    # The remote's record stops when its connection's input ends, which
    # the stop of ours sends: the two stop within the connection's round
    # trip (as the helper lined the clocks up in, whose error it bounds
    # too), and each one's last sample is within an interval (the local
    # samples' spacing) of its stop, or two where a timer period or the
    # stop itself came late under load. A stop on a connection of its
    # own takes seconds to open over ssh.
    last, spacing = {}, []
    for host in ('local', 'remote'):
        ts = sorted({o['time'] for o in obs if o['host'] == host and
                     o['name'] == 'cpu.time.sys'})
        last[host] = ts[-1] if ts else None
        if host == 'local':
            spacing = [b - a for a, b in zip(ts, ts[1:])]
    trip = [float(m.group(1)) for line in lines if (m := TRIP.match(line))]
    bound = (2 * statistics.median(spacing) + trip[0]
             if spacing and len(trip) == 1 else None)
    c.check(bound is not None and None not in last.values() and
            abs(last['remote'] - last['local']) <= bound,
            'remote_stops_with_local',
            f'last samples: local {last["local"]}, remote {last["remote"]};'
            f' bound {bound} s (interval and round trip {trip})')
    print(f'# last samples: local {last["local"]}, remote '
          f'{last["remote"]}; round trip {trip} s')

    tput = [o['value'] for o in obs if o['name'] == 'throughput']
    tput_t = [o['time'] for o in obs if o['name'] == 'throughput']
    # Both hosts on one clock. Here they are two netns of one kernel, so
    # both sample the same CPU times: the shift that best lines up the
    # remote's increments with the local ones must be about 0 (a wrong
    # time base would show as seconds).
    shift = best_shift(busy_series(obs, 'local'), busy_series(obs, 'remote'))
    c.check(shift is not None and abs(shift) <= 0.5, 'hosts_on_one_clock',
            f'the remote lines up best {shift} s off')
    print(f'# the remote lines up best {shift} s off')

    c.check(len(tput) >= 1 and 'throughput' in names and
            all(o['host'] == 'local' for o in obs
                if o['name'] == 'throughput'),
            'throughput_recorded_by_test', f'{tput}')

    p = subprocess.run([REPORT, '--json', path], capture_output=True,
                       text=True)
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    row = next((r for r in rows if r['metric'] == 'throughput'), None)
    want = statistics.median(tput) if tput else None
    got = row and row['value']
    got = got['p50'] if isinstance(got, dict) else got
    c.check(p.returncode == 0 and row is not None and want is not None and
            abs(got - want) <= 1e-12 * abs(want) and
            row['case'].endswith(case) and row['n'] == len(tput),
            'report_p50_is_median', f'exit {p.returncode} {p.stderr} {row}'
            f' want {want}')
    hosts = {(r['metric'], r['host']) for r in rows}
    c.check(all((n, h) in hosts for n in VECTORS
                for h in ('local', 'remote')), 'report_has_both_hosts',
            f'{sorted(hosts)}')
    print(f'# {len(obs)} observations, {len(tput)} throughput')
    return c.finish(plan=False)


if __name__ == '__main__':
    sys.exit(main())
