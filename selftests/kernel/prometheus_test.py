#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A real run in a real Prometheus.

ksft-perfmon-report --openmetrics writes the two-namespace test's run
(two_hosts.ktap in DIR, from e2e_two_hosts_test.sh with KPM_E2E_OUT=DIR);
promtool lints it and backfills it into a TSDB; a prometheus server on
127.0.0.1, started and stopped here, serves that TSDB; PromQL over its
HTTP API must give the report's numbers and the KTAP lines' own. It
all runs in a network namespace of its own (root: unshare).

usage: prometheus_test.py DIR
"""

import json
import math
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
from ktap import Ktap   # noqa: E402

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
REPORT = os.path.join(TOP, 'tools', 'ksft-perfmon-report')
LINE = re.compile(r'^(?:# )+ktap-metric-json: (.*)$')
CASE = 'two_hosts'
RUN = 'prometheus-test'
TOL = 1e-9


def close(a, b):
    return math.isclose(a, b, rel_tol=TOL, abs_tol=1e-12)


def observations(path):
    """the observations of the KTAP file, as read by json.loads"""
    with open(path) as f:
        return [json.loads(m.group(1)) for m in map(LINE.match, f) if m]


def ms(start, t):
    """a case's time t as Prometheus keeps it: a millisecond"""
    return math.floor((start + t) * 1000 + 0.5)


def as_text_format(om):
    """
    The OpenMetrics text as the Prometheus text format (0.0.4), which is
    all promtool check metrics reads (prometheus/prometheus#8932): its
    timestamps are integer milliseconds (OpenMetrics' are seconds, with
    the millisecond after a point, #10259), a counter's TYPE and HELP are
    on its sample's name (_total), and it has no UNIT and no EOF.
    """
    counters, out = set(), []
    for line in om.splitlines():
        m = re.match(r'# TYPE (\S+) counter$', line)
        if m:
            counters.add(m.group(1))
        m = re.match(r'# (TYPE|HELP) (\S+)( .*)$', line)
        if m and m.group(2) in counters:
            line = f'# {m.group(1)} {m.group(2)}_total{m.group(3)}'
        elif line.startswith(('# UNIT ', '# EOF')):
            continue
        elif not line.startswith('#'):
            head, ts = line.rsplit(' ', 1)
            line = f'{head} {round(float(ts) * 1000)}'
        out.append(line)
    return '\n'.join(out) + '\n'


class Prometheus:
    """a server on 127.0.0.1 serving @tsdb, and nothing to scrape"""

    def __init__(self, tsdb, tmp):
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            self.port = s.getsockname()[1]
        cfg = os.path.join(tmp, 'prometheus.yml')
        with open(cfg, 'w') as f:
            f.write('global:\n  scrape_interval: 1h\n')
        self.log = open(os.path.join(tmp, 'prometheus.log'), 'w+')
        self.proc = subprocess.Popen(
            ['prometheus', f'--config.file={cfg}',
             f'--storage.tsdb.path={tsdb}',
             f'--web.listen-address=127.0.0.1:{self.port}',
             '--log.level=warn'],
            stdout=self.log, stderr=subprocess.STDOUT)

    def url(self, path):
        return f'http://127.0.0.1:{self.port}{path}'

    def ready(self, timeout=120):
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.proc.poll() is None:
            try:
                with urllib.request.urlopen(self.url('/-/ready'),
                                            timeout=5) as r:
                    if r.status == 200:
                        return True
            except OSError:
                time.sleep(0.5)
        return False

    def query(self, promql, at):
        q = urllib.parse.urlencode({'query': promql, 'time': f'{at:.3f}'})
        with urllib.request.urlopen(self.url('/api/v1/query?' + q),
                                    timeout=30) as r:
            d = json.load(r)
        if d.get('status') != 'success':
            raise RuntimeError(f'{promql}: {d}')
        return d['data']['result']

    def stop(self):
        self.proc.terminate()
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.seek(0)
        return rc, self.log.read()


def main():
    # a network namespace of its own, with lo up and nothing else: the
    # server can reach no one, and no one it
    if os.environ.get('KPM_PROM_NETNS') != '1':
        os.execvp('unshare', [
            'unshare', '--net', 'sh', '-c',
            'ip link set lo up && KPM_PROM_NETNS=1 exec "$@"', 'sh',
            sys.executable, *sys.argv])
    d = sys.argv[1]
    ktap = os.path.join(d, CASE + '.ktap')
    c = Ktap('prometheus')
    print('TAP version 13')
    # a run that passed, with what the queries below ask of it
    obs, ok = [], False
    if os.path.exists(ktap):
        obs = observations(ktap)
        with open(ktap) as f:
            ok = 'ok 1 two_hosts\n' in f.readlines()
    have = {(o['name'], o['host']) for o in obs}
    need = {('throughput', 'local'), ('cpu.time.sys', 'local'),
            ('cpu.time.sys', 'remote')}
    if not c.check(ok and need <= have, 'run_given',
                   f'{ktap}: ok {ok}, series {sorted(need - have)} missing'):
        return c.finish()
    kernel = os.uname().release
    # a whole second, an hour ago: inside the server's retention, and
    # each time's millisecond computed here independently of the tool
    start = math.floor(time.time()) - 3600
    end = start + max(o['time'] for o in obs) + 1
    tmp = tempfile.mkdtemp(prefix='kpm-prom-')
    om = os.path.join(tmp, CASE + '.om')

    r = subprocess.run([REPORT, '--json', '--openmetrics', om, '--run', RUN,
                        '--kernel', kernel, '--start', str(start), ktap],
                       capture_output=True, text=True)
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    c.check(r.returncode == 0 and not r.stderr, 'report_writes_openmetrics',
            f'exit {r.returncode}: {r.stderr.strip()}')
    with open(om) as f:
        text = f.read()
    samples = [x for x in text.splitlines() if not x.startswith('#')]

    r = subprocess.run(['promtool', 'check', 'metrics'],
                       input=as_text_format(text), capture_output=True,
                       text=True)
    print(f'# promtool check metrics: exit {r.returncode}, '
          f'{len(samples)} samples, output {r.stdout + r.stderr!r}')
    c.check(r.returncode == 0 and not (r.stdout + r.stderr).strip(),
            'promtool_check_metrics_clean')

    # every observation, a sample a CPU for per-cpu ones, null ones none
    want = sum(1 if o['shape'] == 'scalar' else
               sum(v is not None for v in o['value']) for o in obs)
    got = sum(not x.startswith('ksft_report_') for x in samples)
    c.check(got == want, 'a_sample_per_observation',
            f'{got} samples of observations, {want} in the KTAP lines')

    tsdb = os.path.join(tmp, 'tsdb')
    r = subprocess.run(['promtool', 'tsdb', 'create-blocks-from',
                        'openmetrics', om, tsdb], capture_output=True,
                       text=True)
    blocks = re.findall(r'^\S+\s+\d+\s+\d+\s+\S+\s+(\d+)\s', r.stdout, re.M)
    in_tsdb = sum(map(int, blocks))
    print(f'# promtool tsdb create-blocks-from openmetrics: exit '
          f'{r.returncode}, {len(blocks)} blocks, {in_tsdb} samples')
    c.check(r.returncode == 0 and in_tsdb == len(samples),
            'backfill_takes_every_sample', r.stderr.strip())

    prom = Prometheus(tsdb, tmp)
    try:
        up = c.check(prom.ready(), 'server_ready_on_loopback')
        if up:
            queries(c, prom, obs, rows, start, end, kernel)
    finally:
        rc, log = prom.stop()
        if log.strip():
            print('# prometheus: ' + log.strip().replace('\n', '\n# '))
        c.check(rc == 0, 'server_stopped', f'exit {rc}')
        subprocess.run(['rm', '-rf', tmp])
    return c.finish()


def queries(c, prom, obs, rows, start, end, kernel):
    sel = f'run="{RUN}",kernel="{kernel}",case="{CASE}"'

    # the throughput's distribution: PromQL on the raw samples against
    # the report's summary of the same lines
    row = next((x for x in rows if x['metric'] == 'throughput'), None)
    n = sum(o['name'] == 'throughput' for o in obs)
    for stat, promql in (('p50', 'quantile_over_time(0.5, {})'),
                         ('p90', 'quantile_over_time(0.9, {})'),
                         ('p99', 'quantile_over_time(0.99, {})'),
                         ('max', 'max_over_time({})')):
        q = promql.format(f'ksft_throughput{{{sel},host="local"}}[1h]')
        res = prom.query(q, end)
        got = float(res[0]['value'][1]) if len(res) == 1 else None
        want = row['value'][stat] if row else None
        print(f'# {q} = {got}; report: {stat} {want} of {n}')
        c.check(got is not None and want is not None and close(got, want),
                f'throughput_{stat}_equals_report')

    # each CPU's rate of system time over the whole run of each host,
    # with the range from its first sample to its last: no extrapolation
    for host in ('local', 'remote'):
        sys_obs = [o for o in obs
                   if o['name'] == 'cpu.time.sys' and o['host'] == host]
        first, last = sys_obs[0], sys_obs[-1]
        t0, t1 = ms(start, first['time']), ms(start, last['time'])
        q = (f'rate(ksft_cpu_time_sys_seconds_total{{{sel},host="{host}"}}'
             f'[{t1 - t0}ms])')
        res = prom.query(q, t1 / 1000)
        got = {int(x['metric']['cpu']): float(x['value'][1]) for x in res}
        want = {cpu: (b - a) / ((t1 - t0) / 1000)
                for cpu, (a, b) in enumerate(zip(first['value'],
                                                 last['value']))
                if a is not None and b is not None}
        print(f'# {q} at {t1 / 1000:.3f}: {got}; from the lines: {want}')
        c.check(got.keys() == want.keys() and
                all(close(got[k], want[k]) for k in want),
                f'{host}.cpu_sys_rate_per_cpu')

    # and every sample of them as the lines have it: time and value
    res = prom.query(f'ksft_cpu_time_sys_seconds_total{{{sel}}}[1h]', end)
    got = {(x['metric']['host'], int(x['metric']['cpu']), t / 1000):
           float(v) for x in res for t, v in
           ((round(t * 1000), v) for t, v in x['values'])}
    want = {(o['host'], cpu, ms(start, o['time']) / 1000): v
            for o in obs if o['name'] == 'cpu.time.sys'
            for cpu, v in enumerate(o['value']) if v is not None}
    print(f'# cpu.time.sys: {len(got)} samples in the TSDB, '
          f'{len(want)} in the lines')
    c.check(got == want, 'cpu_sys_samples_equal_lines',
            f'differ at {sorted(set(got.items()) ^ set(want.items()))[:3]}')

    # every series carries the run, the kernel and the case
    every = prom.query('count(last_over_time({__name__=~"ksft_.+"}[1h]))',
                       end)
    labelled = prom.query(
        f'count(last_over_time({{__name__=~"ksft_.+",{sel}}}[1h]))', end)
    n = [int(r[0]['value'][1]) if r else 0 for r in (every, labelled)]
    c.check(n[0] > 0 and n[0] == n[1], 'labels_run_kernel_case',
            f'{n[1]} of {n[0]} series have them')


if __name__ == '__main__':
    sys.exit(main())
