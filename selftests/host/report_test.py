#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ksft-perfmon-report against numbers this test computes itself, from
KTAP files it writes: rates over a counter reset, busy-core-equivalents
with and without a transform, percentiles of short series, baselines,
malformed lines and plots. KTAP output; non-zero exit when a test failed.
"""

import errno
import html.parser
import json
import math
import os
import random
import re
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
from ktap import Case, run_all   # noqa: E402

# KPM_TOOLS: the tools of another build, a sanitizer one (KPM_SANITIZED
# set), in which neither valgrind nor a bound on address space works
TOOLS = os.path.abspath(os.environ.get('KPM_TOOLS', os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools')))
TOOL = os.path.join(TOOLS, 'ksft-perfmon-report')
SANITIZED = bool(os.environ.get('KPM_SANITIZED'))
SEED = 20261130


def dumps(obj):
    return json.dumps(obj, allow_nan=False, separators=(',', ':'),
                      sort_keys=True)


def policy(name, **kw):
    return f'# ktap-metric-policy-json: {dumps(dict(name=name, **kw))}'


def obs(name, t, value, host='local', **labels):
    shape = 'per-cpu' if isinstance(value, list) else 'scalar'
    return ('# ktap-metric-json: ' +
            dumps(dict(labels, name=name, shape=shape, time=t, value=value,
                       host=host)))


def write_run(d, lines, name='run.ktap'):
    """@lines as the file @name in directory @d; its path"""
    path = os.path.join(d, name)
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return path


def run(lines, *args, baseline=None, max_mb=None):
    """(exit status, stdout, stderr, [JSON rows]) of the tool on @lines,
    with at most @max_mb of address space (not in a sanitizer build)"""
    def limit():
        size = max_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (size, size))

    with tempfile.TemporaryDirectory() as d:
        path = write_run(d, lines)
        if baseline is not None:
            base = write_run(d, baseline, 'base.ktap')
            args = ('--baseline', base) + args
        p = subprocess.run([TOOL, '--json', *args, path], text=True,
                           capture_output=True,
                           preexec_fn=limit if max_mb and not SANITIZED
                           else None)
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    return p.returncode, p.stdout, p.stderr, rows


def plot_roots(lines, *args):
    """(exit status, stderr, {file: its SVG root}) of --svg on @lines;
    None for the roots, and why in stderr, when a plot is not XML"""
    with tempfile.TemporaryDirectory() as d:
        rc, _, err, _ = run(lines, '--svg', d, *args)
        try:
            return rc, err, {f: ET.parse(os.path.join(d, f)).getroot()
                             for f in os.listdir(d)}
        except ET.ParseError as e:
            return rc, f'{err}{e}', None


def percentile(xs, p):
    """linear between closest ranks, by statistics, not by the tool's way"""
    xs = sorted(xs)
    if len(xs) == 1:
        return xs[0]
    if p == 100:
        return xs[-1]
    return statistics.quantiles(xs, n=100, method='inclusive')[p - 1]


def summary(xs, how):
    if how == 'last':
        return xs[-1]
    if how == 'total':
        return math.fsum(xs)
    if how == 'max':
        return max(xs)
    if how == 'distribution':
        if len(xs) == 1:
            return xs[0]
        return {k: summary(xs, k) for k in ('p50', 'p90', 'p99', 'max')}
    return percentile(xs, int(how[1:]))


class Test(Case):
    def close(self, got, want, what):
        if isinstance(want, dict):
            return self.check(isinstance(got, dict) and
                              got.keys() == want.keys() and
                              all(math.isclose(got[k], want[k],
                                               rel_tol=1e-12, abs_tol=1e-12)
                                  for k in want),
                              f'{what}: got {got}, want {want}')
        return self.check(got is not None and
                          math.isclose(got, want, rel_tol=1e-12,
                                       abs_tol=1e-12),
                          f'{what}: got {got}, want {want}')


def row(rows, metric, host='local', case=None, labels=None):
    for r in rows:
        if r['metric'] == metric and r['host'] == host and \
           r.get('labels') == labels and \
           (case is None or r['case'] == case):
            return r
    return None


def summary_row(t, lines, metric):
    """The tool's row of @metric on @lines, or None; either way checked
    that it ran"""
    rc, _, err, rows = run(lines)
    t.check(rc == 0, f'exit {rc}: {err}')
    r = row(rows, metric)
    t.check(r is not None, f'no row in {rows}')
    return r


def rates(series):
    """(time, rate) of consecutive (time, counter) pairs; a decrease or
    no elapsed time gives none"""
    out = []
    for (t0, v0), (t1, v1) in zip(series, series[1:]):
        if t1 > t0 and v1 >= v0:
            out.append((t1, (v1 - v0) / (t1 - t0)))
    return out


def rate_over_counter_reset(t):
    """a NIC counter that resets half way: no rate across the reset, the
    rest as computed here"""
    rnd = random.Random(SEED)
    series, v, tm = [], 0, 0.0
    for i in range(40):
        tm = round(tm + rnd.uniform(0.5, 1.5), 6)
        v = rnd.randrange(0, 50) if i == 20 else v + rnd.randrange(0, 1000)
        series.append((tm, v))
    series.append((tm, v + 5))          # no time elapsed: no rate
    want = [r for _, r in rates(series)]
    t.check(len(want) == len(series) - 3, f'{len(want)} rates')
    lines = [policy('nic.rx.dropped', summarize='distribution',
                    transform='rate', display_range={'min': 0})]
    lines += [obs('nic.rx.dropped', tm, v) for tm, v in series]
    lines += ['ok 1 reset']
    for how in ('distribution', 'total', 'last', 'p99'):
        lines[0] = policy('nic.rx.dropped', summarize=how, transform='rate')
        r = summary_row(t, lines, 'nic.rx.dropped')
        if r is not None:
            t.check(r['n'] == len(want), f'n {r["n"]}, want {len(want)}')
            t.close(r['value'], summary(want, how), how)


def cumulative_cpus(rnd, n, cpus, offline):
    """per-cpu cumulative seconds; CPU @offline is null for a while"""
    series, acc, tm = [], [0.0] * cpus, 0.0
    for i in range(n):
        tm = round(tm + rnd.uniform(0.9, 1.1), 6)
        acc = [round(a + rnd.uniform(0, 1), 6) for a in acc]
        v = list(acc)
        if 5 <= i < 9:
            v[offline] = None
        series.append((tm, v))
    return series


def busy_cores_with_rate(t):
    """cpu.time.* as published: per-CPU rates summed, nulls skipped"""
    rnd = random.Random(SEED + 1)
    series = cumulative_cpus(rnd, 30, 4, 2)
    want = []
    for (t0, a), (t1, b) in zip(series, series[1:]):
        per_cpu = [(y - x) / (t1 - t0) for x, y in zip(a, b)
                   if x is not None and y is not None and y >= x]
        want.append(math.fsum(per_cpu))
    lines = [policy('cpu.time.usr', aggregation='busy-core-equivalents',
                    display_label='Percent of one CPU',
                    display_range={'max': 100.0, 'min': 0.0},
                    display_scale=100.0, summarize='p90', transform='rate')]
    lines += [obs('cpu.time.usr', tm, v) for tm, v in series]
    lines += ['ok 1 usr']
    r = summary_row(t, lines, 'cpu.time.usr')
    if r is not None:
        t.check(r['n'] == len(want), f'n {r["n"]}')
        t.close(r['value'], percentile(want, 90), 'p90 of summed rates')


def busy_cores_without_transform(t):
    """cpu.utilization as published: the percentages' sum / 100"""
    rnd = random.Random(SEED + 2)
    series = []
    for i in range(25):
        v = [round(rnd.uniform(0, 100), 4) for _ in range(4)]
        if i % 7 == 3:
            v[1] = None
        series.append((i * 0.5, v))
    want = [math.fsum(x for x in v if x is not None) / 100
            for _, v in series]
    for how in ('p90', 'p50', 'max', 'last', 'total'):
        lines = [policy('cpu.utilization',
                        aggregation='busy-core-equivalents', summarize=how)]
        lines += [obs('cpu.utilization', tm, v) for tm, v in series]
        lines += ['ok 1 util']
        r = summary_row(t, lines, 'cpu.utilization')
        if r is not None:
            t.close(r['value'], summary(want, how), how)


def percentiles_short_series(t):
    """1 to 5 points: distribution is last for one, else p50, p90, p99,
    max, interpolated between closest ranks"""
    rnd = random.Random(SEED + 3)
    for n in range(1, 6):
        xs = [rnd.choice([rnd.uniform(-5, 5), rnd.randrange(0, 9)])
              for _ in range(n)]
        lines = [policy('throughput', summarize='distribution')]
        lines += [obs('throughput', i * 1.0, x) for i, x in enumerate(xs)]
        lines += [f'ok 1 short{n}']
        r = summary_row(t, lines, 'throughput')
        if r is not None:
            t.close(r['value'], summary(xs, 'distribution'), f'{n}: {xs}')
        for how in ('p50', 'p90', 'p99'):
            lines[0] = policy('throughput', summarize=how)
            r = row(run(lines)[3], 'throughput')
            if t.check(r is not None, 'no row'):
                t.close(r['value'], percentile(xs, int(how[1:])),
                        f'{how} of {xs}')


def per_cpu_without_aggregation(t):
    """no aggregation: one summary per CPU, null for a CPU never seen"""
    series = [(0.0, [1.0, None, 3.0]), (1.0, [2.0, None, 1.0]),
              (2.0, [4.0, None, 2.0])]
    lines = [policy('x', summarize='max')]
    lines += [obs('x', tm, v) for tm, v in series] + ['ok 1 x']
    rc, _, err, rows = run(lines)
    t.check(rc == 0, f'exit {rc}: {err}')
    r = row(rows, 'x')
    t.check(r is not None and r['value'] == [4.0, None, 3.0], f'{r}')


def cases_hosts_and_depth(t):
    """metrics at depths 0 to 2 belong to the case whose result line
    follows them, hosts apart; a result line without metrics is none"""
    lines = ['TAP version 13', '1..2',
             '# # ' + obs('m', 0.0, 1), '# # ' + obs('m', 1.0, 2, 'remote'),
             '# # ok 1 inner_a', '# ok 1 wrapper', 'ok 1 prog',
             obs('m', 0.0, 10), '# ' + obs('m', 1.0, 30),
             'not ok 2 second case # with a directive']
    rc, _, err, rows = run(lines)
    t.check(rc == 0, f'exit {rc}: {err}')
    got = sorted((r['case'], r['host'], r['result'], r['value'])
                 for r in rows)
    want = [('prog / wrapper / inner_a', 'local', 'ok', 1.0),
            ('prog / wrapper / inner_a', 'remote', 'ok', 2.0),
            ('second case', 'local', 'not ok', 40.0)]
    t.check(got == want, f'{got} != {want}')


def case_is_its_path(t):
    """a case is its path, every enclosing program's name and its own:
    two programs' cases of one name stay apart in the table, --json,
    --baseline, the plots and --openmetrics"""
    reg = dict(better='lower', compare='max', relative_tolerance=0.1)

    def two_programs(a, b):
        return ['# ' + policy('lat', regression=reg, summarize='max'),
                '# ' + obs('lat', 1.0, a), '# ok 1 basic',
                'ok 1 selftests: net: test_a',
                '# ' + policy('lat', regression=reg, summarize='max'),
                '# ' + obs('lat', 1.0, b), '# ok 1 basic',
                'ok 2 selftests: net: test_b']

    rc, _, err, rows = run(two_programs(1000, 900),
                           baseline=two_programs(1000, 10))
    got = sorted((tuple(r.get('path', ())), r['case'],
                  r.get('regression', {}).get('verdict')) for r in rows)
    want = [(('selftests: net: test_a', 'basic'),
             'selftests: net: test_a / basic', 'unchanged'),
            (('selftests: net: test_b', 'basic'),
             'selftests: net: test_b / basic', 'regressed')]
    t.check(rc == 1 and got == want, f'exit {rc}: {got} {err}')

    # three deep; a case that encloses others; one no program encloses
    m = obs('m', 1.0, 1)
    lines = ['# # ' + m, '# # ok 1 x', '# ok 1 sub',
             '# # ' + m, '# # ok 1 x', '# ' + m, '# ok 2 sub2',
             'ok 1 prog', '# ' + m, '# ok 1 x']
    rc, _, err, rows = run(lines)
    got = [r.get('path') for r in rows]
    want = [['prog', 'sub', 'x'], ['prog', 'sub2', 'x'], ['prog', 'sub2'],
            ['x']]
    t.check(rc == 0 and got == want, f'exit {rc}: {got} {err}')
    p = subprocess.run([TOOL], input='\n'.join(lines) + '\n', text=True,
                       capture_output=True)
    heads = [x for x in p.stdout.splitlines() if x.endswith(' (ok)')]
    want = ['prog / sub / x (ok)', 'prog / sub2 / x (ok)',
            'prog / sub2 (ok)', 'x (ok)']
    t.check(heads == want, f'{heads}')

    rc, err, plots = plot_roots(two_programs(1, 2))
    titles = [plots[f].find('{http://www.w3.org/2000/svg}text').text
              .split(')')[0] + ')' for f in sorted(plots or {})]
    t.check(rc == 0 and titles == ['lat (selftests: net: test_a / basic)',
                                   'lat (selftests: net: test_b / basic)'],
            f'exit {rc}: {titles} {err}')

    rc, err, text = openmetrics(two_programs(1, 2), '--start', '1000')
    cases = sorted(set(re.findall(r'case="([^"]*)"', text or '')))
    t.check(rc == 0 and cases == ['selftests: net: test_a / basic',
                                  'selftests: net: test_b / basic'],
            f'exit {rc}: {cases} {err} {text}')


def case_paths_bounded(t):
    """a name that encloses many cases is kept once, not once per case:
    4,000 cases in a program of a 50 kB name (200 MB as copies) are
    read and reported, as a table and as --json, in 128 MB of address
    space. (--openmetrics repeats a case's name in every sample: its
    output, and the labels it keeps, grow as the format makes them.)"""
    if SANITIZED:
        return 'SKIP: ASan\'s shadow memory needs more address space'
    prog = 'p' * 50000
    lines = [x for i in range(4000)
             for x in ('# ' + obs('m', 1.0, i), f'# ok {i + 1} c{i}')]
    lines.append(f'ok 1 {prog}')

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (128 << 20, 128 << 20))

    with tempfile.TemporaryDirectory() as d:
        path = write_run(d, lines)
        for args in ((), ('--json',)):
            p = subprocess.run([TOOL, *args, path], preexec_fn=limit,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
            t.check(p.returncode == 0,
                    f'{args}: exit {p.returncode}: {p.stderr[-300:]}')


def table_as_policies_show(t):
    """the table shows a value as its policy says: times display_scale,
    in display_label (or the scale, without one), four significant
    digits below 10,000 and three with an SI prefix above, the verdict's
    numbers too, and busy-core-equivalents of percentages as the
    percentage of one CPU they add up to; --json keeps the numbers as
    computed"""
    reg = dict(better='higher', compare='max', relative_tolerance=0.1)
    lines = [policy('cpu', display_scale=100.0, summarize='max',
                    display_label='Percent of one CPU'),
             policy('bps', summarize='max', regression=reg,
                    display_label='Bits per second'),
             policy('frac', display_scale=1000.0, summarize='max'),
             policy('util', aggregation='busy-core-equivalents',
                    display_label='Percent of one CPU', summarize='max'),
             policy('busy', aggregation='busy-core-equivalents',
                    display_label='Percent of one CPU', summarize='max',
                    display_scale=100.0, transform='rate'),
             obs('util', 1.0, [75.0, 22.0, None, 100.0]),
             obs('busy', 1.0, [1.0, 0.0]), obs('busy', 2.0, [1.5, 0.25]),
             obs('cpu', 1.0, 1.35241), obs('bps', 1.0, 9.4126e9),
             obs('frac', 1.0, 0.0123456), obs('raw', 1.0, 123456789),
             obs('edge', 1.0, 9999.7), obs('neg', 1.0, -9999.4),
             'ok 1 c']
    base = [x.replace('9412600000', '8000000000') for x in lines]
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([TOOL, '--baseline', write_run(d, base, 'b'),
                            write_run(d, lines)], text=True,
                           capture_output=True)
    rows = {x.split()[0]: x for x in p.stdout.splitlines()
            if x.startswith('  ') and not x.startswith('   ')}
    # busy-core-equivalents are CPUs: of percentages, their sum over 100,
    # shown again as the percentages of one CPU they add up to
    want = {'util': ' 197  Percent of one CPU',
            'busy': ' 75  Percent of one CPU',
            'cpu': ' 135.2  Percent of one CPU',
            'bps': ' 9.41G  Bits per second', 'frac': ' 12.35  (scaled x1000)',
            'raw': ' 123M', 'edge': ' 10k', 'neg': ' -9999'}
    for m, end in want.items():
        t.check(rows.get(m, '').endswith(end),
                f'{m}: {rows.get(m)!r}, want it to end in {end!r}')
    t.check('    max 9.41G against 8G (+17.66%, allowed 800M, higher is '
            'better): improved' in p.stdout, p.stdout)
    rc, _, _, js = run(lines)
    t.check(rc == 0 and row(js, 'cpu')['value'] == 1.35241 and
            row(js, 'bps')['value'] == 9.4126e9, f'{js}')


def malformed_lines_named(t):
    """each bad line is named with its reason, and the rest is read"""
    good = [obs('m', float(i), i) for i in range(4)]
    bad = [
        ('# ktap-metric-json: {"name":"m","shape":"scalar",', 'not JSON'),
        (obs('m', 9.0, 1).replace('1}', 'NaN}'), 'not JSON'),
        (policy('m', summarize='p42'), 'summarize'),
        (policy('n', transform='delta'), 'transform'),
        (policy('n', regression={'better': 'up', 'compare': 'p50',
                                 'absolute_tolerance': 1}), 'better'),
        (policy('n', regression={'better': 'higher', 'compare': 'p50'}),
         'tolerance'),
        (policy('n', display_scale=0), 'display_scale'),
        (obs('m', 9.0, [1.0]), 'shape'),
        (obs('m', 'soon', 1), 'time'),
    ]
    lines = [policy('m', summarize='total'), policy('m', summarize='total'),
             good[0], good[1], policy('m', summarize='max'),
             policy('late', summarize='max')]
    lines[5:5] = [obs('late', 0.0, 1)]
    for b, _ in bad:
        lines.insert(3, b)
    lines += good[2:] + ['ok 1 m']
    rc, _, err, rows = run(lines)
    t.check(rc == 2, f'exit {rc}, want 2')
    msgs = err.splitlines()
    want = {i + 1 for i, line in enumerate(lines)
            if line in [b for b, _ in bad] or '"max"' in line}
    named = {int(m.split(':')[2]) for m in msgs if m.count(':') > 2}
    t.check(named == want, f'lines named {sorted(named)}, want {sorted(want)}')
    for b, reason in bad:
        n = lines.index(b) + 1
        t.check(any(f':{n}: ' in m and reason in m for m in msgs),
                f'line {n} not refused for {reason}: {msgs}')
    t.check(any('conflicts with line 1' in m for m in msgs), f'{msgs}')
    t.check(any('after an observation' in m for m in msgs), f'{msgs}')
    r = row(rows, 'm')
    t.check(r is not None and r['value'] == 6.0 and r['n'] == 4,
            f'the good lines: {r}')


def baseline_verdicts(t):
    """higher and lower is better, relative and absolute allowances (the
    larger wins), exit 1 on a regression only"""
    def ktap(value, better, **tol):
        reg = dict(better=better, compare='p50', **tol)
        return [policy('v', regression=reg, summarize='distribution'),
                obs('v', 0.0, value), obs('v', 1.0, value), 'ok 1 c']

    cases = [   # value, baseline, better, tolerances, verdict
        (95.0, 100.0, 'higher', dict(relative_tolerance=0.1), 'unchanged'),
        (89.0, 100.0, 'higher', dict(relative_tolerance=0.1), 'regressed'),
        (111.0, 100.0, 'higher', dict(relative_tolerance=0.1), 'improved'),
        (89.0, 100.0, 'lower', dict(relative_tolerance=0.1), 'improved'),
        (111.0, 100.0, 'lower', dict(relative_tolerance=0.1), 'regressed'),
        (85.0, 100.0, 'higher', dict(relative_tolerance=0.1,
                                     absolute_tolerance=20), 'unchanged'),
        (70.0, 100.0, 'higher', dict(relative_tolerance=0.1,
                                     absolute_tolerance=20), 'regressed'),
        (0.5, 0.0, 'lower', dict(absolute_tolerance=1), 'unchanged'),
    ]
    for value, base, better, tol, verdict in cases:
        rc, _, err, rows = run(ktap(value, better, **tol),
                               baseline=ktap(base, better, **tol))
        r = row(rows, 'v')
        want_rc = 1 if verdict == 'regressed' else 0
        t.check(rc == want_rc, f'{value} vs {base}: exit {rc}: {err}')
        if t.check(r is not None and 'regression' in r, f'{rows}'):
            g = r['regression']
            allowance = max(tol.get('relative_tolerance', 0) * abs(base),
                            tol.get('absolute_tolerance', 0))
            t.check(g['verdict'] == verdict and g['baseline'] == base and
                    g['current'] == value and
                    math.isclose(g['allowance'], allowance),
                    f'{value} vs {base} {better} {tol}: {g}')
    rc, _, _, rows = run(ktap(1.0, 'higher', relative_tolerance=0.1),
                         baseline=['ok 1 other'])
    r = row(rows, 'v')
    t.check(rc == 0 and r and r['regression']['verdict'] == 'no baseline',
            f'{rc} {r}')


def svg_plots(t):
    """one plot per case and metric: a line per host of the transformed,
    scaled values, and a heat map cell per CPU and rate"""
    series = cumulative_cpus(random.Random(SEED + 4), 12, 3, 1)
    lines = [policy('cpu.time.sys', aggregation='busy-core-equivalents',
                    display_range={'max': 100.0, 'min': 0.0},
                    display_scale=100.0, summarize='p90', transform='rate'),
             policy('tput', display_scale=2.0, summarize='max')]
    lines += [obs('cpu.time.sys', tm, v) for tm, v in series]
    lines += [obs('tput', float(i), i * 3, host)
              for host in ('local', 'remote') for i in range(5)]
    lines += ['ok 1 plotted']
    rc, err, plots = plot_roots(lines)
    t.check(rc == 0, f'exit {rc}: {err}')
    files = sorted(plots or {})
    t.check(files == ['1-cpu.time.sys.svg', '1-tput.svg'], f'{files}')
    ns = '{http://www.w3.org/2000/svg}'
    tput = (plots or {}).get('1-tput.svg')
    heat = (plots or {}).get('1-cpu.time.sys.svg')
    if not t.check(tput is not None and heat is not None, f'plots: {err}'):
        return
    lines_ = tput.findall(f'{ns}polyline')
    t.check(len(lines_) == 2, f'{len(lines_)} lines, want one per host')
    for pl in lines_:
        t.check(len(pl.get('points').split()) == 5, pl.get('points'))
    cells = [r for r in heat.findall(f'{ns}rect') if r.get('class') == 'cell']
    want = sum(1 for (_, a), (_, b) in zip(series, series[1:])
               for x, y in zip(a, b) if x is not None and y is not None)
    t.check(len(cells) == want, f'{len(cells)} cells, want {want}')


def svg_readable(t):
    """plots a person reads at a glance: ticks at round numbers (1, 2 or
    5 times a power of ten apart, an SI prefix for large values), both
    axes named (time in s; display_label), a heat map with a color scale
    of its own ticks and name, and at 64 CPUs rows numbered no closer
    than 10 pixels, at 1 CPU a row as tall as its name"""
    ns = '{http://www.w3.org/2000/svg}'
    lab = 'Percent of one CPU'
    lines = [policy('cpu', aggregation='busy-core-equivalents',
                    display_label=lab, display_scale=100.0,
                    display_range={'min': 0.0, 'max': 100.0},
                    summarize='p90', transform='rate'),
             policy('bits', display_label='Bits per second',
                    summarize='p90', transform='rate')]
    for n, case in ((1, 'one'), (64, 'many')):
        lines += lines[:2] if n > 1 else []
        lines += [obs('cpu', i * 0.1, [i * 0.05 * (c % 3) for c in range(n)])
                  for i in range(61)]
        lines += [obs('bits', i * 0.1, int((i * 0.1) ** 2 * 2e8))
                  for i in range(61)]
        lines += [f'ok {n} {case}']

    def texts(root, cls):
        return [x.text for x in root.iter(f'{ns}text')
                if x.get('class') == cls]

    def round_apart(ticks):
        vals = [float(x[:-1]) * {'k': 1e3, 'M': 1e6, 'G': 1e9}[x[-1]]
                if x[-1] in 'kMG' else float(x) for x in ticks]
        steps = {round(b - a, 9) for a, b in zip(vals, vals[1:])}
        if len(vals) < 2 or len(steps) != 1 or min(steps) <= 0:
            return False
        step = steps.pop()
        mant = step / 10 ** math.floor(math.log10(step))
        return any(math.isclose(mant, m) for m in (1, 2, 5)) and \
            all(math.isclose(v / step, round(v / step), abs_tol=1e-9)
                for v in vals)

    rc, err, plots = plot_roots(lines)
    t.check(rc == 0, f'exit {rc}: {err}')
    if not t.check(plots is not None, err):
        return
    bits = plots.get('1-bits.svg')
    if t.check(bits is not None, f'{sorted(plots)}'):
        tv, tt = texts(bits, 'tick-v'), texts(bits, 'tick-t')
        t.check(round_apart(tv) and any(x.endswith('G') for x in tv),
                f'value ticks {tv}')
        t.check(round_apart(tt), f'time ticks {tt}')
        t.check(texts(bits, 'axis') == ['time (s)', 'Bits per second'],
                f'axes {texts(bits, "axis")}')
    # small values over a short run fill the plot; a narrow display
    # range is the axis
    small = [policy('lat', summarize='max'),
             policy('fr', summarize='max', display_range={'min': 0.0,
                                                          'max': 0.01})]
    small += [obs(m, i * 0.1, 0.001 + i * 0.001) for m in ('lat', 'fr')
              for i in range(4)] + ['ok 1 small']
    rc, err, small_plots = plot_roots(small)
    lat = (small_plots or {}).get('1-lat.svg')
    fr = (small_plots or {}).get('1-fr.svg')
    if not t.check(lat is not None and fr is not None,
                   f'small: exit {rc}, {err}'):
        return
    pts = [tuple(map(float, p.split(','))) for p in
           lat.find(f'{ns}polyline').get('points').split()]
    xs, ys = [x for x, _ in pts], [y for _, y in pts]
    t.check(min(xs) < 80 and max(xs) > 690 and max(ys) - min(ys) > 250,
            f'0.001 to 0.004 over 0.3 s drawn at {pts}')
    tf = texts(fr, 'tick-v')
    t.check(tf[:1] == ['0'] and tf[-1:] == ['0.010'],
            f'display_range 0 to 0.01: ticks {tf}')
    for name, cpus in (('1-cpu.svg', 1), ('2-cpu.svg', 64)):
        heat = plots.get(name)
        if not t.check(heat is not None, f'{name}: {sorted(plots)}'):
            continue
        tc = texts(heat, 'tick-c')
        t.check(tc == ['0', '20', '40', '60', '80', '100'],
                f'{name}: color scale ticks {tc}')
        t.check(lab in texts(heat, 'axis') and
                'time (s)' in texts(heat, 'axis'),
                f'{name}: axes {texts(heat, "axis")}')
        t.check(any(r.get('class') == 'scale'
                    for r in heat.iter(f'{ns}rect')), f'{name}: no scale')
        ys = [float(x.get('y')) for x in heat.iter(f'{ns}text')
              if x.get('class') == 'cpu']
        t.check(ys and ys[0] >= 0 and
                all(b - a >= 10 for a, b in zip(ys, ys[1:])),
                f'{name}: CPU numbers at {ys[:8]}')
        cells = [float(r.get('height')) for r in heat.iter(f'{ns}rect')
                 if r.get('class') == 'cell']
        t.check(cells and (cpus > 1 or min(cells) >= 30),
                f'{name}: rows {set(cells)} px high at {cpus} CPUs')


class Page(html.parser.HTMLParser):
    """A page's tags, the references it makes, and its tables as rows
    of cell texts"""

    def __init__(self, text):
        super().__init__()
        self.tags, self.refs, self.tables = [], [], []
        self.row = self.cell = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.refs += [v for k, v in attrs
                      if k in ('src', 'href', 'xlink:href', 'action')]
        if tag == 'table':
            self.tables.append([])
        elif tag == 'tr':
            self.row = []
            self.tables[-1].append(self.row)
        elif tag in ('td', 'th'):
            self.cell = ''

    def handle_endtag(self, tag):
        if tag in ('td', 'th') and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def html_run():
    """a run of two cases with a verdict, a queue balance and plots, and
    its baseline"""
    reg = dict(better='higher', compare='max', relative_tolerance=0.1)
    lines = [policy('cpu', display_scale=100.0, summarize='max',
                    display_label='Percent of one CPU'),
             policy('bps', summarize='max', regression=reg,
                    display_label='Bits per second'),
             obs('cpu', 1.0, [0.5, 1.35241]), obs('cpu', 2.0, [1.0, 2.7]),
             obs('bps', 1.0, 9.4126e9), obs('bps', 2.0, 9.0e9),
             obs('q', 1.0, 0, queue=0), obs('q', 2.0, 30, queue=0),
             obs('q', 1.0, 0, queue=1), obs('q', 2.0, 10, queue=1),
             '# ok 1 first', obs('cpu', 1.0, [0.25]), '# ok 2 second',
             'ok 1 prog']
    base = [x.replace('9412600000.0', '1.2e10') for x in lines]
    return lines, base


def html_hostile(t):
    """names from the input reach the page as text, never as markup, and
    without the controls HTML refuses (DEL, C1) or that would change how
    the text around them is shown (bidi, line separators)"""
    evil = '<script>alert(1)</script>&"\'\x7f\x85\u202e\u2028'
    lines = [obs('m' + evil, 1.0, 1, host=evil, **{evil: evil}),
             obs('m' + evil, 2.0, 2, host=evil, **{evil: evil}),
             policy('p', display_label=evil), obs('p', 1.0, 1),
             f'ok 1 case{evil}', f'ok 2 prog{evil}']
    with tempfile.TemporaryDirectory() as d:
        page = os.path.join(d, 'p.html')
        rc, _, err, _ = run(lines, '--html', page)
        with open(page) as f:
            text = f.read()
    pg = Page(text)
    t.check(rc == 0 and 'script' not in pg.tags and
            not any(c in text for c in '\x7f\x85\u202e\u2028'),
            f'exit {rc}: {err}; tags {set(pg.tags)}; controls '
            f'{[c for c in chr(0x7f) + chr(0x85) + chr(0x202e) if c in text]}')
    t.check('\\u202e' in text and '&lt;script&gt;' in text,
            'the names are not on the page, escaped')


def html_page(t):
    """--html writes one page that needs nothing else (no script, no
    reference out of it): per case its path, a row per series with the
    values and unit the table shows, the verdict against --baseline
    (regressed rows marked), the queue balances, and as many plots as
    --svg writes, inline"""
    lines, base = html_run()
    with tempfile.TemporaryDirectory() as d:
        page, plots = os.path.join(d, 'run.html'), os.path.join(d, 'svg')
        p = subprocess.run([TOOL, '--baseline', write_run(d, base, 'b'),
                            '--html', page, '--svg', plots,
                            write_run(d, lines)], text=True,
                           capture_output=True)
        t.check(p.returncode == 1, f'exit {p.returncode}: {p.stderr}')
        try:
            with open(page) as f:
                text = f.read()
        except OSError as e:
            t.check(False, f'{e}')
            return
        nr_plots = len(os.listdir(plots))
        bad = subprocess.run([TOOL, '--html', os.path.join(d, 'no', 'x'),
                              write_run(d, lines)], capture_output=True,
                             text=True)
    t.check(bad.returncode == 2 and 'No such file or directory' in
            bad.stderr, f'unwritable: exit {bad.returncode}: {bad.stderr}')
    pg = Page(text)
    t.check('script' not in pg.tags and 'link' not in pg.tags and
            'img' not in pg.tags and
            all(r.startswith('#') for r in pg.refs),
            f'not self-contained: tags {set(pg.tags)}, refs {pg.refs}')
    t.check(pg.tags.count('svg') == nr_plots == 5,
            f'{pg.tags.count("svg")} plots inline, --svg wrote {nr_plots}')
    t.check(text.count('<h2') == 2 and '>prog / first (ok)</h2>' in text
            and '>prog / second (ok)</h2>' in text, 'case headings')
    cpu = [r for r in pg.tables[0] if r[0] == 'cpu']
    t.check(cpu and cpu[0][4:6] == ['cpu0 100 cpu1 270',
                                    'Percent of one CPU'],
            f'cpu row {cpu}')
    bps = [r for r in pg.tables[0] if r[0] == 'bps']
    t.check(bps and bps[0][4] == '9.41G' and bps[0][6].startswith(
                'max 9.41G against 12G (-21.56%') and
            bps[0][6].endswith(': regressed') and
            '<tr class="regressed"><td>bps</td>' in text, f'bps row {bps}')
    bal = [r for tb in pg.tables for r in tb if r[0] == 'q']
    t.check(bal and bal[-1][2:4] == ['2', '40'], f'queue balance {bal}')


def html_in_chromium(t):
    """the page in a real browser (chromium, headless, at 1280 pixels):
    no console message, and a screenshot that is no blank page; a page
    that writes to the console is seen to"""
    if SANITIZED:
        return 'SKIP: the page is the same in a sanitizer build'
    lines, base = html_run()
    # chromium may leave its profile behind as the directory goes
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as d:
        page = os.path.join(d, 'run.html')
        p = subprocess.run([TOOL, '--baseline', write_run(d, base, 'b'),
                            '--html', page, write_run(d, lines)],
                           capture_output=True, text=True)
        t.check(p.returncode == 1, f'exit {p.returncode}: {p.stderr}')
        with open(page) as f:
            text = f.read()
        ctl = os.path.join(d, 'ctl.html')
        with open(ctl, 'w') as f:
            f.write(text.replace('</body>', '<script>console.error('
                                 '"kpm-control")</script></body>'))
        blank = os.path.join(d, 'blank.html')
        with open(blank, 'w') as f:
            f.write('<!DOCTYPE html><html><body></body></html>')
        shots = {}
        for name in (page, ctl, blank):
            png = name + '.png'
            try:
                c = subprocess.run(['chromium', '--headless', '--no-sandbox',
                                    '--disable-gpu', '--hide-scrollbars',
                                    f'--user-data-dir={d}/profile',
                                    '--window-size=1280,2000',
                                    f'--screenshot={png}',
                                    '--enable-logging=stderr',
                                    '--log-level=0', 'file://' + name],
                                   capture_output=True, text=True,
                                   timeout=600)
            except (OSError, subprocess.TimeoutExpired) as e:
                t.check(False, f'chromium: {e} (scripts/deps.sh installs '
                        'it)')
                return
            console = [x for x in c.stderr.splitlines() if ':CONSOLE' in x]
            try:
                with open(png, 'rb') as f:
                    head = f.read(24)
                    f.seek(0, os.SEEK_END)
                    size = f.tell()
            except OSError:
                head, size = b'', 0
            width = struct.unpack('>I', head[16:20])[0] if \
                head[:8] == b'\x89PNG\r\n\x1a\n' else None
            shots[name] = (c.returncode, console, width, size)
    rc, console, width, size = shots[page]
    t.check(rc == 0 and not console and width == 1280,
            f'page: exit {rc}, console {console}, {width} px wide')
    t.check(any('kpm-control' in x for x in shots[ctl][1]),
            f'the control\'s console.error was not seen: {shots[ctl]}')
    t.check(size > 5 * shots[blank][3],
            f'screenshot of {size} bytes, a blank page\'s {shots[blank][3]}')
    print(f'# screenshot {size} bytes, a blank page {shots[blank][3]}')


def svg_at_the_edges(t):
    """a plot of values or times at the edges of a double has a number
    wherever it has a coordinate or a tick, in --svg and --html: a flat
    series at 2e16 (where a double's step is 4) and at the largest
    double, a display range of -1e308 to 1e308, times 3e308 apart and at
    the largest, a per-cpu heat map, values and times a subnormal apart"""
    cases = {
        'flat': [obs('b', float(i), 2e16) for i in range(3)],
        'range': [policy('r', display_range={'min': -1e308, 'max': 1e308},
                         summarize='max')] +
                 [obs('r', float(i), i) for i in range(3)],
        'times': [obs('w', -1.5e308, 1), obs('w', 0.0, 2),
                  obs('w', 1.5e308, 3)],
        'heat': [obs('h', float(i), [2e16, 2e16]) for i in range(3)],
        'subnormal': [obs('s', float(i), v)
                      for i, v in enumerate((0.0, 5e-324, 5e-324))],
        'subnormal times': [obs('u', tm, 1)
                            for tm in (1.5e-323, 2e-323, 2.5e-323)],
        'flat at the largest': [policy('m', summarize='max')] +
                               [obs('m', float(i), 1.7976931348623157e308)
                                for i in range(3)],
        'times at the largest': [obs('n', 1.7976931348623157e308, i)
                                 for i in range(3)],
    }
    for what, lines in cases.items():
        with tempfile.TemporaryDirectory() as d:
            page = os.path.join(d, 'page.html')
            rc, _, err, _ = run(lines + ['ok 1 c'], '--svg', d,
                                '--html', page)
            text = ''
            for name in os.listdir(d):
                with open(os.path.join(d, name)) as f:
                    text += f.read()
        coords = re.findall(r' (?:points|x|y|x1|x2|y1|y2|width|height)='
                            r'"([^"%]*)"', text)
        bad = [c for c in coords
               if not all(re.fullmatch(r'-?\d+(\.\d+)?', x)
                          for x in re.split(r'[ ,]+', c.strip()))]
        bad += re.findall(r'>[^<]*\b(?:inf|nan)\b[^<]*<', text)
        t.check(rc == 0 and text and not bad,
                f'{what}: exit {rc}, {err!r}, coordinates or ticks '
                f'{bad[:3]}')


def svg_only_regular_files(t):
    """a plot is not written through a link planted in DIR where it goes
    (as the spool's file is not), nor into a FIFO, which would wait for a
    reader forever: the file behind the link stays as it was, and the
    report ends"""
    lines = [obs('tput', float(i), i) for i in range(3)] + ['ok 1 c']
    with tempfile.TemporaryDirectory() as d:
        plots, outside = os.path.join(d, 'plots'), os.path.join(d, 'keep')
        os.mkdir(plots)
        with open(outside, 'w') as f:
            f.write('keep\n')
        os.symlink(outside, os.path.join(plots, '1-tput.svg'))
        rc, _, err, _ = run(lines, '--svg', plots)
        with open(outside) as f:
            kept = f.read()
        t.check(rc == 2 and '1-tput.svg: ' in err and kept == 'keep\n',
                f'link: exit {rc}, {err!r}, the file behind it: {kept!r}')
        os.unlink(os.path.join(plots, '1-tput.svg'))
        os.mkfifo(os.path.join(plots, '1-tput.svg'))
        try:
            p = subprocess.run([TOOL, '--svg', plots, write_run(d, lines)],
                               capture_output=True, text=True, timeout=60)
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            rc, err = None, 'still waiting on the FIFO after 60 s'
        t.check(rc == 2 and '1-tput.svg: not a regular file' in err,
                f'FIFO: exit {rc}, {err!r}')


def labels_key_series(t):
    """every key but name, shape, time and value is a label: a series per
    label set, each with its metric's policy, in the table, the JSON and
    the plots' file names"""
    lines = [policy('bytes', summarize='distribution', transform='rate')]
    want = {}
    for d, per_s in (('rx', 1000), ('tx', 10)):
        series = [(i * 1.0, i * per_s + (i % 3)) for i in range(10)]
        want[d] = summary([r for _, r in rates(series)], 'distribution')
        lines += [obs('bytes', tm, v, dir=d) for tm, v in series]
    lines += [obs('q', 0.0, 1, queue=3), obs('q', 0.0, 2, queue='3'),
              obs('q', 1.0, 4, queue=3), obs('q', 0.0, 8, queue=0.5,
                                              busy=True, hw=None),
              obs('q', 0.0, 16, host='remote', queue=3)]
    lines += ['ok 1 labelled']
    rc, _, err, rows = run(lines)
    t.check(rc == 0, f'exit {rc}: {err}')
    t.check(len(rows) == 6, f'{len(rows)} rows, want 6: {rows}')
    for d in ('rx', 'tx'):
        r = row(rows, 'bytes', labels={'dir': d})
        if t.check(r is not None, f'no row of dir={d} in {rows}'):
            t.close(r['value'], want[d], f'dir={d}')
    for labels, host, total in (({'queue': 3}, 'local', 5),
                                ({'queue': '3'}, 'local', 2),
                                ({'busy': True, 'hw': None, 'queue': 0.5},
                                 'local', 8),
                                ({'queue': 3}, 'remote', 16)):
        r = row(rows, 'q', host=host, labels=labels)
        t.check(r is not None and r['value'] == total,
                f'{labels} {host}: {r}')
    r = row(rows, 'q', labels=None)
    t.check(r is None, f'a row without labels: {r}')
    with tempfile.TemporaryDirectory() as d:
        path = write_run(d, lines)
        p = subprocess.run([TOOL, '--svg', d, path], text=True,
                           capture_output=True)
        table = p.stdout
        files = sorted(os.listdir(d))
    # queue=3 and queue="3" would share a name: the later gets its number
    want_files = ['1-bytes,dir=rx.svg', '1-bytes,dir=tx.svg',
                  '1-q,busy=true,hw=null,queue=0.5.svg', '1-q,queue=3-4.svg',
                  '1-q,queue=3.svg', 'run.ktap']
    t.check(files == want_files, f'{files} != {want_files}')
    for name in ('bytes{dir="rx"}', 'bytes{dir="tx"}', 'q{queue=3}',
                 'q{queue="3"}', 'q{busy=true,hw=null,queue=0.5}'):
        t.check(f'  {name} ' in table, f'{name} not in the table: {table}')
    reg = policy('lat', summarize='last', regression=dict(
        better='lower', compare='last', relative_tolerance=0.1))
    base = [reg, obs('lat', 0.0, 10, dir='rx'), obs('lat', 0.0, 10, dir='tx'),
            'ok 1 labelled']
    cur = [reg, obs('lat', 0.0, 20, dir='rx'), obs('lat', 0.0, 5, dir='tx'),
           'ok 1 labelled']
    rc, _, err, rows = run(cur, baseline=base)
    got = {r.get('labels', {}).get('dir'): r['regression']['verdict']
           for r in rows}
    t.check(rc == 1 and got == {'rx': 'regressed', 'tx': 'improved'},
            f'exit {rc}, verdicts {got}: {err}')
    bad = obs('q', 2.0, 1, queue=[1])
    rc, _, err, _ = run(lines[:-1] + [bad, 'ok 1 labelled'])
    t.check(rc == 2 and f':{len(lines)}: label "queue": not a string' in err,
            f'exit {rc}: {err}')


def mixed_shapes_refused(t):
    """a metric is scalar or per-cpu in a case, whatever the host or
    labels: a line of the other shape is refused, the rest is read"""
    lines = [obs('m', 0.0, 1), obs('m', 1.0, 2),
             obs('m', 0.0, [1.0, 2.0], 'remote'),
             obs('m', 0.0, [3.0], dir='rx'),
             obs('c', 0.0, [1.0], dir='rx'), obs('c', 0.0, 5, dir='tx'),
             obs('c', 1.0, [2.0], dir='rx'), 'ok 1 mixed']
    rc, _, err, rows = run(lines)
    t.check(rc == 2, f'exit {rc}, want 2')
    for n, shape, first in ((3, 'per-cpu', 1), (4, 'per-cpu', 1),
                            (6, 'scalar', 5)):
        t.check(f':{n}: ' in err and f'shape {shape}, unlike its earlier '
                f'observations (line {first})' in err,
                f'line {n} not refused: {err}')
    got = sorted((r['metric'], r['host'], dumps(r.get('labels')),
                  r['value']) for r in rows)
    # a per-cpu series one CPU wide is summarized as a number
    want = [('c', 'local', '{"dir":"rx"}', 3.0), ('m', 'local', 'null', 3.0)]
    t.check(got == want, f'{got} != {want}')
    with tempfile.TemporaryDirectory() as d:
        run(lines, '--svg', d)
        files = sorted(os.listdir(d))
    t.check(files == ['1-c,dir=rx.svg', '1-m.svg'], f'{files}')


def many_names(t):
    """40,000 metric names, label sets and test cases, each with its own
    policy, value and baseline verdict (look-ups are hashed: this takes
    a second where linear ones took minutes)"""
    n = 40000
    reg = dict(better='higher', compare='last', absolute_tolerance=0.5)

    def ktap(shift):
        lines = [policy(f'm{i}', summarize=('last', 'max')[i % 2],
                        regression=reg) for i in range(n)]
        lines += [obs(f'm{i}', 0.0, i + shift(i)) for i in range(n)]
        lines += [obs(f'm{i}', 1.0, i) for i in range(n)]
        lines += [obs('q', 0.0, i, queue=i) for i in range(n)]
        lines += ['ok 1 many']
        for i in range(n):
            lines += [policy('x', regression=reg), obs('x', 0.0, i),
                      obs('x', 1.0, i + shift(i)), f'ok {i + 2} c{i}']
        return lines

    rc, _, err, rows = run(ktap(lambda i: 0),
                           baseline=ktap(lambda i: i % 3 - 1))
    t.check(rc == 1, f'exit {rc}: {err[:200]}')
    # and one balance of the queues of q, which carried nothing
    t.check(len(rows) == 3 * n + 1, f'{len(rows)} rows')
    verdicts = ['improved', 'unchanged', 'regressed']
    m, q, x = {}, {}, {}
    bal = [r['balance'] for r in rows if 'balance' in r]
    t.check(bal == [dict(cv=None, max_mean=None, queues=n, total=0.0)],
            f'{bal}')
    for r in rows:
        if 'balance' in r:
            continue
        if r['case'] == 'many' and r['metric'] == 'q':
            q[r['labels']['queue']] = r['value']
        elif r['case'] == 'many':
            m[r['metric']] = (r['summarize'], r['value'],
                              r['regression']['verdict'])
        else:
            x[r['case']] = (r['value'], r['regression']['verdict'])
    bad = [i for i in range(n)
           if m.get(f'm{i}') != (('last', 'max')[i % 2], i, 'unchanged') or
           q.get(i) != i or
           x.get(f'c{i}') != (2 * i, verdicts[i % 3])]
    t.check(not bad, f'{len(bad)} wrong, the first: {bad[:1]}')


def queue_balance(t):
    """a group per metric, host and labels but a numeric queue, of two
    queues or more, as computed here from each queue's last value less
    its first"""
    amounts = {('rx', 'local', 3): [300, 100, 0, 200],
               ('rx', 'remote', 3): [50, 50],
               ('rx', 'local', 4): [10, 0]}
    lines = [policy('rx', transform='rate')]
    for (m, host, dev), amts in amounts.items():
        for q, a in enumerate(amts):
            lines += [obs(m, 0.0, 1000, host, ifindex=dev, queue=q),
                      obs(m, 2.0, 1000 + a, host, ifindex=dev, queue=q)]
    # not balances: one queue; a string queue; per-cpu
    lines += [obs('one', 0.0, 1, queue=0), obs('one', 1.0, 5, queue=0),
              obs('s', 0.0, 1, queue='0'), obs('s', 0.0, 1, queue='1'),
              obs('c', 0.0, [1, 2], queue=0), obs('c', 0.0, [1, 2], queue=1),
              'ok 1 case']
    rc, out, err, rows = run(lines)
    got = {(r['metric'], r['host'], r['labels']['ifindex']): r['balance']
           for r in rows if 'balance' in r}
    want = {}
    for k, a in amounts.items():
        mean = sum(a) / len(a)
        sd = (sum((x - mean) ** 2 for x in a) / len(a)) ** 0.5
        want[k] = dict(cv=sd / mean, max_mean=max(a) / mean,
                       queues=len(a), total=float(sum(a)))
    t.check(rc == 0 and got.keys() == want.keys() and
            all(all(abs(got[k][f] - want[k][f]) <= 1e-12 * abs(want[k][f])
                    for f in want[k]) for k in want),
            f'exit {rc} {err}: {got} against {want}')
    with tempfile.NamedTemporaryFile('w', suffix='.ktap') as f:
        f.write('\n'.join(lines) + '\n')
        f.flush()
        out = subprocess.run([TOOL, f.name], capture_output=True,
                             text=True).stdout
    t.check('balance of rx{ifindex=3} (local): 4 queues, total 600, cv '
            '0.7454, max/mean 2\n' in out, out)


def wide_arrays_bounded(t):
    """memory in proportion to the values: one 50,001 CPUs wide array
    among 2,000 of 4 CPUs in 128 MB of address space (not 2,001 * 50,001
    doubles); one of 200,001 CPUs, more than RP_MAX_CPUS, refused"""
    series = [(i * 1.0, [float((i * 7 + k) % 13) for k in range(4)])
              for i in range(2000)]
    series[1000] = (1000.0, [float(k % 11) for k in range(50001)])
    want = [max(v[k] for _, v in series if k < len(v))
            for k in range(50001)]
    lines = [policy('u', summarize='max')]
    lines += [obs('u', tm, v) for tm, v in series]
    lines += [obs('u', 3000.0, [1.0] * 200001), 'ok 1 wide']
    rc, _, err, rows = run(lines, max_mb=128)
    t.check(rc == 2 and f':{len(lines) - 1}: value: 200001 CPUs, more '
            'than the 65536 the report takes' in err,
            f'exit {rc}: {err[:300]}')
    r = row(rows, 'u')
    if t.check(r is not None, f'no row: exit {rc}, {err[:300]}'):
        t.check(r['n'] == 2000 and r['value'] == want,
                f'n {r["n"]}, {len(r["value"])} values, the first '
                f'{r["value"][:6]}, want {want[:6]}')


def json_true_values(t):
    """--json writes names and labels of any length, and no row, but a
    message and exit 2, for a summary JSON cannot hold (a total beyond
    the largest double is inf, not null)"""
    name, key = 'n.' * 1000 + 'é\u0001"', 'k' * 300
    lines = [obs(name, 0.0, 1, **{key: 'v' * 3000}), obs(name, 1.0, 2,
             **{key: 'v' * 3000}),
             policy('big', summarize='distribution'),
             obs('big', 0.0, 1e308), obs('big', 1.0, 1e308),
             policy('sum', summarize='total'),
             obs('sum', 0.0, 1e308), obs('sum', 1.0, 1e308),
             'ok 1 ' + 'c' * 2000]
    rc, _, err, rows = run(lines)
    t.check(rc == 2, f'exit {rc}, want 2')
    r = row(rows, name, labels={key: 'v' * 3000})
    t.check(r is not None and r['value'] == 3 and r['case'] == 'c' * 2000,
            f'the long names: {[(x["metric"][:9], x["case"][:9]) for x in rows]}')
    r = row(rows, 'big')
    t.check(r is not None and r['value'] == {'max': 1e308, 'p50': 1e308,
                                             'p90': 1e308, 'p99': 1e308},
            f'big: {r}')
    t.check(row(rows, 'sum') is None, f'a row of an infinite total: {rows}')
    msg = ('series {"host":"local","name":"sum"}: total is not finite, '
           'which JSON cannot hold; row not written')
    t.check(len(err.splitlines()) == 1 and msg in err, f'{err!r}')


def names_at_the_edges(t):
    """"host": "" is no host, one series as ever; a plot of a name over a
    file name's 255 bytes is written; a case that is not UTF-8 is named in
    a message, its bytes as \\xNN"""
    lines = ['# ktap-metric-json: ' +
             dumps(dict(name='m', shape='scalar', time=0.0, value=1)),
             '# ktap-metric-json: ' +
             dumps(dict(name='m', shape='scalar', time=1.0, value=2,
                        host='')), 'ok 1 c']
    rc, _, err, rows = run(lines)
    t.check(rc == 0 and [(r['host'], r['value']) for r in rows] == [('', 3)],
            f'exit {rc}, {rows}, {err}')

    lines = [obs('m' * 300, 0.0, 1), obs('m' * 300, 1.0, 2),
             obs('m' * 300, 2.0, 3, q='3'), 'ok 1 c']
    with tempfile.TemporaryDirectory() as d:
        rc, _, err, _ = run(lines, '--svg', d)
        names = sorted(os.listdir(d))
    t.check(rc == 0 and len(names) == 2 and
            all(len(n) <= 255 and n.endswith('.svg') for n in names),
            f'exit {rc}, {err}, {names}')

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, 'run.ktap')
        with open(path, 'wb') as f:
            f.write(obs('sum', 0.0, 1e308).encode() + b'\n' +
                    obs('sum', 1.0, 1e308).encode() + b'\nok 1 \xff"b\n')
        p = subprocess.run([TOOL, '--json', path], capture_output=True)
    t.check(p.returncode == 2 and b'case "\\xff\\x22b"' in p.stderr,
            f'exit {p.returncode}, {p.stderr!r}')


def line_endings(t):
    """a line ends at LF, CRLF or a lone CR, as Python's universal
    newlines read a file: the same run from each"""
    lines = [policy('m', summarize='total'), obs('m', 0.0, 1),
             obs('m', 1.0, 2), 'ok 1 c', obs('m', 0.0, 5), 'ok 2 d']
    got = {}
    for eol in (b'\n', b'\r\n', b'\r'):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'run.ktap')
            with open(path, 'wb') as f:
                f.write(eol.join(x.encode() for x in lines) + eol)
            p = subprocess.run([TOOL, '--json', path], capture_output=True,
                               text=True)
        rows = [json.loads(x) for x in p.stdout.splitlines()]
        got[eol] = (p.returncode, sorted((r['case'], r['value'], r['n'])
                                         for r in rows))
    want = (0, [('c', 3, 2), ('d', 5, 1)])
    t.check(all(g == want for g in got.values()), f'{got}, want {want}')


def names_to_the_terminal(t):
    """a name reaches the terminal escaped: a newline in a metric, host
    or case name forges no row, and no escape sequence, bidi control or
    byte that is not UTF-8 gets through, on stdout or in a message"""
    forged = 'm\n  forged                 local    total             1  9'
    lines = [obs(forged, 0.0, 1, host='h\x1b[31m'),
             obs('q', 0.0, 1, queue=0), obs('q', 0.0, 2, queue=1),
             obs('r\u202e', 0.0, 1),
             'ok 1 c\x1b]0;title\x07',
             '# ktap-metric-policy-json: {"name":"p","x\\u001b[2J":1}',
             obs('p', 0.0, 1), 'ok 2 d']
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, 'run.ktap')
        with open(path, 'wb') as f:
            f.write('\n'.join(lines).encode() + b'\n' +
                    obs('s', 0.0, 1).encode() + b'\nok 3 e\xff\n' +
                    obs('v', 0.0, 1).encode()[:-3] + b'\xff"}\nok 4 f\n')
        for args in ([], ['--openmetrics', os.path.join(d, 'om')]):
            p = subprocess.run([TOOL, *args, path], capture_output=True)
            out = p.stdout + p.stderr
            bad = sorted({chr(b) for b in out
                          if b < 0x20 and b != 0x0a or b == 0x7f} |
                         ({'\xff'} if b'\xff' in out else set()) |
                         ({'U+202E'} if '\u202e'.encode() in out else set()))
            t.check(not bad and b'forged' not in p.stdout.split(b'\n  m')[0]
                    and not any(x.startswith(b'  forged')
                                for x in p.stdout.split(b'\n')),
                    f'{args}: exit {p.returncode}, bytes {bad}, '
                    f'{out[:300]!r}')


def per_cpu_regression_not_judged(t):
    """a regression policy on a per-cpu series without aggregation has no
    number to compare: the verdict says so, in --json and the table"""
    reg = dict(better='lower', compare='max', absolute_tolerance=1)
    lines = [policy('u', regression=reg, summarize='max'),
             policy('a', regression=reg, summarize='max',
                    aggregation='busy-core-equivalents'),
             obs('u', 0.0, [50.0, 60.0]), obs('u', 1.0, [70.0]),
             obs('a', 0.0, [50.0, 60.0]), 'ok 1 c']
    rc, _, err, rows = run(lines, baseline=lines)
    t.check(rc == 0, f'exit {rc}: {err}')
    r, a = row(rows, 'u'), row(rows, 'a')
    t.check(r is not None and r.get('regression') ==
            {'better': 'lower', 'compare': 'max',
             'verdict': 'not judged (per-cpu without aggregation)'},
            f'{r}')
    t.check(a is not None and a.get('regression', {}).get('verdict') ==
            'unchanged' and a['regression']['current'] == 1.1, f'{a}')
    with tempfile.TemporaryDirectory() as d:
        path = write_run(d, lines)
        p = subprocess.run([TOOL, '--baseline', path, path], text=True,
                           capture_output=True)
    want = ('    max (lower is better): not judged (per-cpu without '
            'aggregation)\n')
    t.check(want in p.stdout, f'{p.stdout}')


def numpy_percentile(xs, p):
    """numpy.percentile(xs, p) as numpy computes it (method 'linear' and
    its _lerp(), from the nearer end), to the bit; checked against numpy
    1.24.2 on 60,000 percentiles"""
    xs = sorted(xs)
    rank = p / 100 * (len(xs) - 1)
    lo = math.floor(rank)
    if lo + 1 >= len(xs):
        return xs[-1]
    g, a, b = rank - lo, xs[lo], xs[lo + 1]
    return b - (b - a) * (1 - g) if g >= 0.5 else a + (b - a) * g


def percentiles_as_numpy(t):
    """p50, p90 and p99 are numpy's to the bit (the man page says so)"""
    rnd = random.Random(SEED + 5)
    lines, series = [], []
    for i in range(300):
        xs = [rnd.choice([rnd.uniform(-1e3, 1e3), rnd.uniform(0, 1),
                          float(rnd.randrange(-5, 5)),
                          rnd.uniform(-1, 1) * 10 ** rnd.randrange(-5, 10)])
              for _ in range(rnd.randrange(2, 40))]
        series.append(xs)
        lines.append(policy(f's{i}', summarize='distribution'))
        lines += [obs(f's{i}', float(k), x) for k, x in enumerate(xs)]
    rc, _, err, rows = run(lines + ['ok 1 pct'])
    t.check(rc == 0, f'exit {rc}: {err}')
    bad = []
    for i, xs in enumerate(series):
        r = row(rows, f's{i}')
        want = {f'p{p}': numpy_percentile(xs, p) for p in (50, 90, 99)}
        got = {k: r['value'][k] for k in want} if r else None
        if got != want:
            bad.append((i, got, want))
    t.check(not bad, f'{len(bad)} of 300 differ, the first {bad[:1]}')


def parser_deviations(t):
    """where jansson reads otherwise than json.loads, as the man page
    says: these lines are refused, and 0 and 0.0 are not equal"""
    ok = obs('m', 0.0, 2 ** 63 - 1)
    refused = [
        (ok.replace('}', '}\0garbage'), 'a NUL byte in the line'),
        (ok.replace(str(2 ** 63 - 1), str(2 ** 63)), 'too big integer'),
        (ok.replace('{', '{"time":1,'), 'duplicate object key'),
        (ok.replace(str(2 ** 63 - 1), '1e400'), 'real number overflow'),
        (obs('m\0', 0.0, 1), '\\u0000 is not allowed'),
        (obs('m\ud800', 0.0, 1), "invalid Unicode '\\uD800'"),
        (policy('p', display_range={'min': 0.0}), 'conflicts with line 1'),
    ]
    lines = [policy('p', display_range={'min': 0})]
    lines += [line for line, _ in refused] + [ok, 'ok 1 c']
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, 'run.ktap')
        with open(path, 'w', errors='surrogatepass') as f:
            f.write('\n'.join(lines) + '\n')
        p = subprocess.run([TOOL, '--json', path], capture_output=True)
    err = p.stderr.decode()
    t.check(p.returncode == 2, f'exit {p.returncode}')
    for n, (_, why) in enumerate(refused, 2):
        t.check(f':{n}: ' in err and why in err.split(f':{n}: ')[1]
                .split('\n')[0], f'line {n} not refused for {why}: {err}')
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    t.check(rows and rows[0]['value'] == 2.0 ** 63, f'{rows}')


def svg_names_and_text(t):
    """a plot per file however names collide once made safe, text that
    XML allows whatever the names hold, and a DIR of 4095 bytes"""
    ctl = 'c\u0001\t\u001f<&\ufffe\uffff"'
    lines = [obs('a/b', 0.0, 1), obs('a_b', 0.0, 2), obs('a_b-2', 0.0, 3),
             obs('m' + ctl, 0.0, [1.0, 2.0], ctl, lab=ctl),
             obs('m' + ctl, 1.0, [2.0, 4.0], ctl, lab=ctl), 'ok 1 x' + ctl]
    safe = ''.join(chr(b) if chr(b).isalnum() and b < 0x80 else '_'
                   for b in ctl.encode())
    names = {'1-a_b.svg': 'a/b', '1-a_b-2.svg': 'a_b', '1-a_b-2-3.svg': 'a_b-2',
             f'1-m{safe},lab={safe}.svg': None}
    plots = {}
    with tempfile.TemporaryDirectory() as d:
        rc, _, err, _ = run(lines, '--svg', d)
        t.check(rc == 0, f'exit {rc}: {err}')
        files = sorted(os.listdir(d))
        t.check(len(files) == 4, f'{files}')
        for name in files:
            try:
                plots[name] = ET.parse(os.path.join(d, name)).getroot()
            except ET.ParseError as e:
                t.check(False, f'{name}: {e}')
    t.check(sorted(plots) == sorted(names), f'{sorted(plots)}')
    ns = '{http://www.w3.org/2000/svg}'
    for name, metric in names.items():
        if name in plots and metric:
            title = plots[name].find(f'{ns}text').text
            t.check(title == f'{metric} (x{esc(ctl)})',
                    f'{name}: {title!r}')
    lab = plots.get(f'1-m{safe},lab={safe}.svg')
    if lab is not None:
        title = lab.find(f'{ns}text').text
        want = f'm{esc(ctl)}{{lab={dumps(ctl)}}} (x{esc(ctl)})'
        t.check(title == want, f'{title!r} != {want!r}')
    # 4095 bytes, as PATH_MAX allows: the plots are written in it
    with tempfile.TemporaryDirectory() as d:
        long_dir = '/'.join(['d' * 254] * 17)[:4095]
        fd = os.open(d, os.O_RDONLY)
        for part in long_dir.split('/')[:-1]:   # the tool makes the last
            os.mkdir(part, dir_fd=fd)
            fd, old = os.open(part, os.O_RDONLY, dir_fd=fd), fd
            os.close(old)
        write_run(d, lines)
        p = subprocess.run([TOOL, '--svg', long_dir, 'run.ktap'], cwd=d,
                           capture_output=True, text=True)
        t.check(p.returncode == 0, f'exit {p.returncode}: {p.stderr[-300:]}')
        try:
            last = os.open(os.path.basename(long_dir), os.O_RDONLY, dir_fd=fd)
            got = sorted(os.listdir(last))
            os.close(last)
        except OSError as e:
            got = str(e)
        os.close(fd)
        t.check(got == sorted(names), f'{len(long_dir)} bytes: {got}')


def esc(s):
    """@s as the plots write it: C0 controls, U+FFFE and U+FFFF as JSON
    escapes, the rest as it is"""
    return ''.join(f'\\u{ord(c):04x}' if ord(c) < 0x20 or
                   ord(c) in (0xfffe, 0xffff) else c for c in s)


NL = os.path.join(os.path.dirname(TOOL), 'ksft-perfmon-nl')


def to_broken_output(args, stdin_text):
    """(exit status, stderr) of @args writing to /dev/full, and to a pipe
    whose reader is gone, with SIGPIPE ignored as a CI runner may leave it"""
    out = []
    with open('/dev/full', 'w') as full:
        p = subprocess.run(args, input=stdin_text, stdout=full, text=True,
                           stderr=subprocess.PIPE)
        out.append((p.returncode, p.stderr.strip()))
    r, w = os.pipe()
    os.close(r)
    p = subprocess.run(args, input=stdin_text, stdout=w, text=True,
                       stderr=subprocess.PIPE, restore_signals=False)
    os.close(w)
    out.append((p.returncode, p.stderr.strip()))
    return out


def output_errors(t):
    """output that cannot be written fails both tools, with a message;
    the commands of ksft-perfmon-nl that need no module"""
    lines = ['TAP version 13', '1..1', obs('m', 0.5, 2), 'ok 1 c']
    text = '\n'.join(lines) + '\n'
    for args, rc in (([TOOL, '--json'], 2), ([TOOL], 2),
                     ([NL, 'metric', '--time-base', '0', 'm', '1'], 1),
                     ([NL, 'clock'], 1)):
        for got, why in to_broken_output(args, text):
            t.check(got == rc and 'cannot write the output' in why,
                    f'{" ".join(args[1:]) or "report"}: exit {got}, {why!r}')
    # decimal only: no octal or hex
    for base in ('010x', '0x10', '+1', ' 1'):
        p = subprocess.run([NL, 'metric', '--time-base', base, 'm', '1'],
                           capture_output=True, text=True)
        t.check(p.returncode == 1 and 'is not a number' in p.stderr,
                f'--time-base {base!r}: exit {p.returncode} {p.stdout!r}')
    p = subprocess.run([NL, 'metric', '--time-base', '010', 'm', '1'],
                       capture_output=True, text=True)
    t.check(p.returncode == 0, f'--time-base 010: exit {p.returncode}')


def input_errors(t):
    """input that cannot be read fails with its error, as output does:
    a directory, a closed stdin, a directory as the baseline (which would
    leave every series without one, and the regression gate off)"""
    isdir, badf = os.strerror(errno.EISDIR), os.strerror(errno.EBADF)
    with tempfile.TemporaryDirectory() as d:
        cur = write_run(d, [obs('m', 0.5, 2), 'ok 1 c'])
        for args, close_stdin, why in (
                ([TOOL, d], False, f'{d}: {isdir}'),
                ([TOOL], True, f'<stdin>: {badf}'),
                ([TOOL, '--json'], True, f'<stdin>: {badf}'),
                ([TOOL, '--baseline', d, cur], False, f'{d}: {isdir}')):
            p = subprocess.run(args, capture_output=True, text=True,
                               preexec_fn=(lambda: os.close(0))
                               if close_stdin else None)
            t.check(p.returncode == 2 and why in p.stderr and
                    not p.stdout,
                    f'{" ".join(args[1:])}: exit {p.returncode}, '
                    f'{p.stdout!r} {p.stderr!r}')


def metric_time_base_and_labels(t):
    """metric: a --time-base after now is a negative time, however far
    (2^64 - 1 ns is 1.8e10 s ahead); NAME and --host take 1 to 255 bytes
    of UTF-8, and say so when they are not"""
    for base in (2**64 - 1, time.monotonic_ns() + 5 * 10**9):
        before = time.monotonic_ns()
        p = subprocess.run([NL, 'metric', '--time-base', str(base), 'm', '1'],
                           capture_output=True, text=True)
        after = time.monotonic_ns()
        try:
            got = json.loads(p.stdout.split(': ', 1)[1])['time']
        except (IndexError, ValueError, KeyError):
            got = None
        t.check(p.returncode == 0 and got is not None and
                (before - base) / 1e9 - 1e-3 <= got <=
                (after - base) / 1e9 + 1e-3,
                f'--time-base {base}: exit {p.returncode}, time {got}, '
                f'want {(before - base) / 1e9:.6f}')
    for args, ok, why in ((['m' * 255], True, ''),
                          (['\u00e9' * 127], True, ''),
                          (['m' * 256], False, 'NAME: 256 bytes'),
                          ([''], False, 'NAME: 0 bytes'),
                          (['--host', 'h' * 256, 'm'], False,
                           '--host: 256 bytes'),
                          (['m\udcff'], False, 'NAME: not UTF-8')):
        p = subprocess.run([NL, 'metric', '--time-base', '0', *args, '1'],
                           capture_output=True,
                           env=dict(os.environ, LC_ALL='C.UTF-8'))
        err = p.stderr.decode(errors='replace')
        t.check((p.returncode == 0) == ok and why in err and
                b'\xff' not in p.stderr,
                f'{[a[:20] for a in args]}: exit {p.returncode}, {err!r}')


def clock_at_the_answer(t):
    """clock -- COMMAND times an answer when its line arrives, not when
    COMMAND exits: a COMMAND that answers, then takes 2 s to end (as an
    ssh connection's teardown may), reads as one that answers and ends,
    measured beside it (the best of three answers each)"""
    offs = []
    for cmd in (f'{NL} clock', f'{NL} clock; sleep 2'):
        p = subprocess.run([NL, 'clock', '--', 'sh', '-c', cmd],
                           capture_output=True, text=True)
        try:
            offs.append(int(p.stdout))
        except ValueError:
            offs.append(None)
    t.check(None not in offs and abs(offs[1] - offs[0]) < 10**9,
            f'offsets {offs} ns: the second answer timed at its end')


def openmetrics(lines, *args):
    """(exit status, stderr, the OpenMetrics text) of --openmetrics; a
    text that promtool's OpenMetrics parser (Prometheus's backfill) does
    not take whole, with as many samples as lines, is a message instead"""
    with tempfile.TemporaryDirectory() as d:
        path, om = write_run(d, lines), os.path.join(d, 'run.om')
        p = subprocess.run([TOOL, '--openmetrics', om, *args, path],
                           text=True, capture_output=True)
        if not os.path.exists(om):
            return p.returncode, p.stderr, None
        with open(om) as f:
            text = f.read()
        n = sum(not x.startswith('#') for x in text.splitlines())
        b = subprocess.run(['promtool', 'tsdb', 'create-blocks-from',
                            'openmetrics', om, os.path.join(d, 'db')],
                           text=True, capture_output=True)
        took = sum(int(m) for m in re.findall(
            r'^\S+\s+\d+\s+\d+\s+\S+\s+(\d+)\s', b.stdout, re.M))
        if b.returncode or took != n:
            text = (f'promtool took {took} of {n} samples, exit '
                    f'{b.returncode}: {b.stderr.strip()}')
    return p.returncode, p.stderr, text


def openmetrics_balance_of_refused(t):
    """a queue balance goes into --openmetrics only with all its series:
    of series refused for their time (before 1970, --start added), none,
    and the file is one Prometheus takes"""
    lines = [obs('q', tm, v, queue=q) for q, vals in ((0, (1, 9)), (1, (1, 3)))
             for tm, v in zip((-5e9, -4999999999.5), vals)] + ['ok 1 c']
    rc, err, text = openmetrics(lines, '--start', '1000')
    samples = [x for x in (text or '').splitlines() if not x.startswith('#')]
    t.check(rc == 2 and 'a time before 1970' in err and text is not None and
            not text.startswith('promtool') and
            not any(x.startswith('ksft_report_queue_balance{')
                    for x in samples),
            f'exit {rc}, {err!r}, {text!r}')


def instructions(args):
    """the instructions @args runs, by valgrind's count: work, not time"""
    p = subprocess.run(['valgrind', '--tool=cachegrind', '--cache-sim=no',
                        '--cachegrind-out-file=/dev/null', *args],
                       capture_output=True, text=True)
    m = re.search(r'I\s+refs:\s+([\d,]+)', p.stderr)
    return int(m.group(1).replace(',', '')) if m else None


def balances_linear(t):
    """queue balances cost in proportion to the series: twice the series
    of one queue each, about twice the instructions (each series against
    every other was 2.8 times)"""
    if SANITIZED:
        return 'SKIP: valgrind does not run a sanitizer build'
    counts = []
    for n in (2000, 4000):
        lines = [obs('q', float(i % 2), 1, queue=0, x=i) for i in range(n)]
        with tempfile.TemporaryDirectory() as d:
            counts.append(instructions([TOOL, write_run(d, lines + ['ok 1 c'])]))
    t.check(None not in counts and counts[1] / counts[0] < 2.5,
            f'instructions {counts}: not in proportion to the series')


def openmetrics_linear(t):
    """--openmetrics costs in proportion to the values: twice the labels
    of a line, or twice the observations and the width of the widest,
    about twice the instructions (each label against every other, and
    each column against every observation, were 4 times)"""
    if SANITIZED:
        return 'SKIP: valgrind does not run a sanitizer build'
    shapes = {
        'labels': lambda n: [obs('m', 1.0, 1, **{f'l{i}': i
                                                 for i in range(n)})],
        'columns': lambda n: [obs('c', 0.0, [1.0] * n)] +
        [obs('c', float(i + 1), [1.0]) for i in range(n)],
    }
    for what, lines in shapes.items():
        counts = []
        for n in (4000, 8000):
            with tempfile.TemporaryDirectory() as d:
                path = write_run(d, lines(n) + ['ok 1 c'])
                counts.append(instructions([TOOL, '--openmetrics',
                                            os.path.join(d, 'om'),
                                            '--start', '1000', path]))
        t.check(None not in counts and counts[1] / counts[0] < 2.5,
                f'{what}: instructions {counts}: not in proportion')
        print(f'# {what}: {counts[1] / counts[0]:.2f}x the instructions '
              'for twice the input')


def openmetrics_written(t):
    lines = [policy('cpu.time.sys', transform='rate',
                    aggregation='busy-core-equivalents', summarize='p90'),
             policy('nic.rx.bytes', transform='rate', summarize='max'),
             policy('tput', summarize='distribution'),
             obs('cpu.time.sys', 0.0001, [1.0, None, 2.0]),
             obs('cpu.time.sys', 1.0005, [1.5, 3.0, 2.0]),
             obs('cpu.time.sys', 2.25, [2.5, 3.5, 2.25]),
             obs('nic.rx.bytes', 0.5, 10, ifindex=3),
             obs('nic.rx.bytes', 1.5, 30, ifindex=3),
             obs('tput', 1, 2.5, **{'case': 'x', '__y': True, 'a-b': None,
                                    'q': 'say "\\hi"\n', 'queue': 1}),
             obs('tput', 2, 3.5, **{'case': 'x', '__y': True, 'a-b': None,
                                    'q': 'say "\\hi"\n', 'queue': 1}),
             # out of time order, and names that only cleaning makes bad
             obs('z', 2, 2, **{'': 'e', '..n__': 1, '7': 2}),
             obs('z', 1, 1, **{'': 'e', '..n__': 1, '7': 2}),
             'ok 1 c"1']
    rc, err, text = openmetrics(lines, '--start', '1700000000.5',
                                '--run', 'r\\1', '--kernel', '7.3')
    if not t.check(rc == 0 and not err and text, f'exit {rc}: {err}'):
        return
    own = 'run="r\\\\1",kernel="7.3",case="c\\"1",host="local"'
    tput = (own + ',exported___y="true",a_b="null",exported_case="x",'
            'q="say \\"\\\\hi\\"\\n",queue="1"')
    want = [
        '# TYPE ksft_cpu_time_sys_seconds counter',
        '# UNIT ksft_cpu_time_sys_seconds seconds',
        '# HELP ksft_cpu_time_sys_seconds The KTAP metric cpu.time.sys.',
        f'ksft_cpu_time_sys_seconds_total{{{own},cpu="0"}} 1.0 1700000000.500',
        f'ksft_cpu_time_sys_seconds_total{{{own},cpu="0"}} 1.5 1700000001.501',
        f'ksft_cpu_time_sys_seconds_total{{{own},cpu="0"}} 2.5 1700000002.750',
        f'ksft_cpu_time_sys_seconds_total{{{own},cpu="1"}} 3.0 1700000001.501',
        f'ksft_cpu_time_sys_seconds_total{{{own},cpu="1"}} 3.5 1700000002.750',
        f'ksft_cpu_time_sys_seconds_total{{{own},cpu="2"}} 2.0 1700000000.500',
        f'ksft_cpu_time_sys_seconds_total{{{own},cpu="2"}} 2.0 1700000001.501',
        f'ksft_cpu_time_sys_seconds_total{{{own},cpu="2"}} 2.25 1700000002.750',
        '# TYPE ksft_nic_rx_bytes counter',
        '# UNIT ksft_nic_rx_bytes bytes',
        '# HELP ksft_nic_rx_bytes The KTAP metric nic.rx.bytes.',
        f'ksft_nic_rx_bytes_total{{{own},ifindex="3"}} 10.0 1700000001.000',
        f'ksft_nic_rx_bytes_total{{{own},ifindex="3"}} 30.0 1700000002.000',
        '# TYPE ksft_tput gauge',
        '# HELP ksft_tput The KTAP metric tput.',
        f'ksft_tput{{{tput}}} 2.5 1700000001.500',
        f'ksft_tput{{{tput}}} 3.5 1700000002.500',
        '# TYPE ksft_z gauge',
        '# HELP ksft_z The KTAP metric z.',
        f'ksft_z{{{own},exported_="e",exported___n__="1",exported_7="2"}}'
        ' 1.0 1700000001.500',
        f'ksft_z{{{own},exported_="e",exported___n__="1",exported_7="2"}}'
        ' 2.0 1700000002.500',
    ]
    got = text.splitlines()
    t.check(got[:len(want)] == want,
            f'{[x for x in got[:len(want)] if x not in want][:2]}')
    # the summaries: busy cores' p90 of the rates (0.5 + 0 over 1.0004 s,
    # CPU 1 had none; 1 + 0.5 + 0.25 over 1.2495 s), the bytes' largest
    # rate, tput's distribution; each at its series' last time
    stats = {}
    for line in got:
        if line.startswith('ksft_report_stat{'):
            labels, v, ts = line.rsplit(' ', 2)
            m = dict(x.split('=', 1) for x in
                     labels[len('ksft_report_stat{'):-1].split(',')
                     if x.startswith(('metric=', 'stat=')))
            stats[(m['metric'].strip('"'), m['stat'].strip('"'))] = \
                (float(v), ts)
    r = [0.5 / 1.0004, (1 + 0.5 + 0.25) / 1.2495]
    t.close(stats.get(('cpu.time.sys', 'p90'), (0,))[0],
            percentile(r, 90), 'cpu.time.sys p90')
    t.check(stats.get(('nic.rx.bytes', 'max')) == (20.0, '1700000002.000'),
            f'{stats}')
    t.check({k[1] for k in stats if k[0] == 'tput'} ==
            {'max', 'p50', 'p90', 'p99'}, f'{stats}')
    t.check(got[-1] == '# EOF', f'{got[-1:]}')


def openmetrics_refused(t):
    a, b = obs('a.b', 1, 1), obs('a_b', 1, 2)
    cases = [
        ([a, b, 'ok 1 c'], "case c, a_b: ksft_a_b shares a sample's name "
         'with a.b'),
        ([policy('x', transform='rate'), obs('x', 1, 1), 'ok 1 c',
          obs('x', 1, 1), 'ok 2 d'],
         'case d, x: a counter (a policy with transform rate) in one '
         'case, a gauge in another'),
        ([obs('x', 1, 1, **{'k.l': 1, 'k_l': 2}), 'ok 1 c'],
         'case c, x: two labels would have one name'),
        ([obs('x', 1, 1), 'ok 1 c', obs('x', 2, 1), 'ok 2 c'],
         'case c, x: an earlier series has the same labels'),
        # labels that are written alike, in two series
        ([obs('x', 1, 1, k=1), obs('x', 2, 1, k='1'), 'ok 1 c'],
         'case c, x: an earlier series has the same labels'),
        ([obs('x', 1, 1, **{'a.b': 1}), obs('x', 1, 1, a_b=1), 'ok 1 c'],
         'case c, x: an earlier series has the same labels'),
        ([obs('report.stat', 1, 1), 'ok 1 c'],
         "case c, report.stat: ksft_report_stat is the report's own"),
        # a counter's samples are x_total: no gauge may be
        ([policy('x', transform='rate'), obs('x', 1, 1),
          obs('x_total', 1, 1), 'ok 1 c'],
         "case c, x_total: ksft_x_total shares a sample's name with x"),
        ([policy('x', transform='rate'), obs('x', 1, -1), 'ok 1 c'],
         'case c, x: a counter (a policy with transform rate) with a '
         'negative value'),
        ([obs('x', -1.5, 1), 'ok 1 c'],
         'case c, x: a time before 1970 or after 5138, --start added'),
        ([obs('q', 1, 1, queue=0), obs('q', 2, 2, queue=0),
          obs('q', 1, 1, queue=1), obs('q', 2, 3, queue=1), 'ok 1 c',
          obs('q', 1, 1, queue=2), obs('q', 2, 2, queue=2),
          obs('q', 1, 1, queue=3), obs('q', 2, 3, queue=3), 'ok 2 c'],
         "case c, q: its queue balance is an earlier case's of the same "
         'path'),
    ]
    for lines, why in cases:
        # Unix time 0 for the negative time (promtool 2.42 leaves out
        # the last sample of a file whose samples are at 1970's first)
        start = '0' if 'a time before 1970' in why else '1700000000'
        rc, err, text = openmetrics(lines, '--start', start)
        t.check(rc == 2 and why in err and '; not written' in err and
                text and text.endswith('# EOF\n'),
                f'{why}: exit {rc}: {err} {text}')
    # a second sample in one millisecond: left out, and said
    rc, err, text = openmetrics([obs('x', 1.0001, 1), obs('x', 1.0003, 2),
                                 obs('x', 1.0011, 3), 'ok 1 c'],
                                '--start', '1700000000')
    n = sum(line.startswith('ksft_x{') for line in text.splitlines())
    t.check(rc == 0 and n == 2 and 'ksft-perfmon-report: --openmetrics: '
            '1 observations in the millisecond of an earlier one' in err,
            f'exit {rc}, {n} samples: {err}')
    for args, why in ((('--run', 'x'), '--run, --kernel and --start go '
                       'with --openmetrics'),
                      (('--openmetrics', '/dev/null', '--start', 'soon'),
                       '--start soon: not a Unix time in seconds'),
                      (('--openmetrics', '/dev/null', '--start', '1e300'),
                       '--start 1e300: not a Unix time in seconds'),
                      (('--openmetrics', '/dev/null', '--start', '0x10'),
                       '--start 0x10: not a Unix time in seconds'),
                      (('--openmetrics', '/dev/null', '--run', '\udcff'),
                       '--run and --kernel must be UTF-8'),
                      (('--openmetrics', '/nonexistent/x.om'),
                       '/nonexistent/x.om: No such file or directory')):
        p = subprocess.run([TOOL, *args, '/dev/null'], text=True,
                           capture_output=True)
        t.check(p.returncode == 2 and why in p.stderr,
                f'{args}: exit {p.returncode}: {p.stderr}')


TESTS = [rate_over_counter_reset, busy_cores_with_rate,
         busy_cores_without_transform, percentiles_short_series,
         per_cpu_without_aggregation, cases_hosts_and_depth, case_is_its_path,
         case_paths_bounded,
         table_as_policies_show,
         malformed_lines_named, baseline_verdicts, svg_plots, svg_readable,
         html_page, html_hostile, html_in_chromium,
         output_errors,
         input_errors, svg_only_regular_files, svg_at_the_edges,
         metric_time_base_and_labels,
         line_endings, names_to_the_terminal, clock_at_the_answer,
         openmetrics_balance_of_refused, balances_linear, openmetrics_linear,
         labels_key_series, mixed_shapes_refused, many_names, queue_balance,
         wide_arrays_bounded, json_true_values, svg_names_and_text,
         per_cpu_regression_not_judged, percentiles_as_numpy,
         parser_deviations, names_at_the_edges, openmetrics_written,
         openmetrics_refused]


def main():
    return run_all('report', TESTS, case=Test)


if __name__ == '__main__':
    sys.exit(main())
