#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check the output of the RFC's drivers/net/hw/iperf.py run on
ksft_perfmon (its SystemMonitor imported from ksft_perfmon.py): the
case passed; its metric lines, which the library prints, come right
before its result line, each policy once and before the observations;
Iperf3Runner reported its throughput and retransmits, which it does
only while metric reporting is on; both hosts' system metrics are
there, with the traffic in them, on the case's clock and lined up with
each other; and ksft-perfmon-report reads the output.

usage: check_rfc_output.py OUTPUT CASE
"""

import json
import os
import subprocess
import sys

from check_perfmon_output import best_shift, busy_series, \
    policies_and_observations, read_output, system_metrics_of
from ktap import Ktap
from ktap_metrics import VECTORS

# what Iperf3Runner.measure_bandwidth() reports, and on which host
IPERF3 = {'throughput': 'local', 'tcp.retransmits': 'remote'}
REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                      '..', '..', 'tools', 'ksft-perfmon-report')


def main():
    path, case = sys.argv[1], sys.argv[2]
    c = Ktap('rfc')
    lines, end, metric = read_output(c, path, case)
    plan = next((i for i, line in enumerate(lines) if line == '1..1'), -1)
    # the library's flush: one run of lines, ending at the result line
    c.check(metric and metric[0][0] > plan and
            [i for i, _, _ in metric] == list(range(metric[0][0], end)),
            'metric_lines_right_before_result',
            f'plan at line {plan + 1}, result at {end + 1}, metric lines '
            f'{metric[0][0] + 1 if metric else None} to '
            f'{metric[-1][0] + 1 if metric else None}')

    names, obs = policies_and_observations(c, metric)
    c.check(set(names) == set(VECTORS) | set(IPERF3), 'policies_as_expected',
            f'{names}')
    reported = {(o['name'], o['host']) for o in obs}
    c.check(all((n, h) in reported for n, h in IPERF3.items()),
            'iperf3_metrics_while_reporting',
            f'{sorted(r for r in reported if r[0] in IPERF3)}')
    for host in ('local', 'remote'):
        system_metrics_of(c, obs, host)
    # the case's clock: the library's observations (iperf3's, stamped
    # when it reports them) and the module's in one order; the hosts
    # lined up, as check_perfmon_output.py checks them
    times = [o['time'] for o in obs]
    c.check(times and times == sorted(times) and times[0] >= 0,
            'times_from_case_start_in_order',
            f'{times[:3]} ... {times[-3:]}')
    shift = best_shift(busy_series(obs, 'local'), busy_series(obs, 'remote'))
    c.check(shift is not None and abs(shift) <= 0.5, 'hosts_on_one_clock',
            f'the remote lines up best {shift} s off')
    print(f'# the remote lines up best {shift} s off; {len(obs)} '
          f'observations')

    p = subprocess.run([REPORT, '--json', path], capture_output=True,
                       text=True)
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    got = {(r['metric'], r['host']) for r in rows
           if r['case'].endswith(case)}
    want = {(n, h) for n in VECTORS for h in ('local', 'remote')}
    want |= set(IPERF3.items())
    c.check(p.returncode == 0 and want <= got, 'report_reads_it',
            f'exit {p.returncode} {p.stderr.strip()}: missing '
            f'{sorted(want - got)}')
    return c.finish(plan=False)


if __name__ == '__main__':
    sys.exit(main())
