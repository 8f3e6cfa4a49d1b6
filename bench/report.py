#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tables, CSV and SVG from the "KPM-BENCH: TABLE,KEY=VALUE,..." lines of
bench/guest_bench.py.

usage: report.py RAW OUTDIR   (writes OUTDIR/{cost,format}.csv, cost.svg;
                               prints the tables)
"""

import csv
import math
import os
import sys


def load(path):
    tables = {}
    with open(path) as f:
        for line in f:
            if not line.startswith('KPM-BENCH: '):
                continue
            table, *kv = line[len('KPM-BENCH: '):].strip().split(',')
            tables.setdefault(table, []).append(dict(x.split('=', 1)
                                                     for x in kv))
    return tables


def write_csv(path, rows):
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)


def us(ns):
    return f'{float(ns) / 1000:.1f}' if ns not in ('', None) else '-'


def table(head, rows):
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '|'.join('---:' for _ in head) + '|')
    for r in rows:
        print('| ' + ' | '.join(str(x) for x in r) + ' |')
    print()


def svg_lines(path, title, xlabel, ylabel, series):
    """a log-log line plot of {name: [(x, y)]}"""
    w, h, l, r, t, b = 640, 400, 70, 150, 40, 50
    pts = [p for s in series.values() for p in s if p[1] > 0]
    if not pts:
        return
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0 = 10 ** math.floor(math.log10(min(p[1] for p in pts)))
    y1 = 10 ** math.ceil(math.log10(max(p[1] for p in pts)))
    x1 = x1 if x1 > x0 else x0 * 2

    def sx(x):
        return l + (math.log2(x) - math.log2(x0)) / \
            (math.log2(x1) - math.log2(x0)) * (w - l - r)

    def sy(y):
        return h - b - (math.log10(y) - math.log10(y0)) / \
            (math.log10(y1) - math.log10(y0)) * (h - t - b)
    colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e']
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
         f'font-family="sans-serif" font-size="12">',
         f'<rect width="{w}" height="{h}" fill="white"/>',
         f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">'
         f'{title}</text>',
         f'<text x="{(l + w - r) / 2}" y="{h - 12}" text-anchor="middle">'
         f'{xlabel}</text>',
         f'<text transform="translate(16,{(t + h - b) / 2}) rotate(-90)" '
         f'text-anchor="middle">{ylabel}</text>']
    x = x0
    while x <= x1:
        o.append(f'<line x1="{sx(x):.1f}" y1="{t}" x2="{sx(x):.1f}" '
                 f'y2="{h - b}" stroke="#ddd"/>')
        o.append(f'<text x="{sx(x):.1f}" y="{h - b + 16}" '
                 f'text-anchor="middle">{x:g}</text>')
        x *= 2
    y = y0
    while y <= y1 * 1.0001:
        o.append(f'<line x1="{l}" y1="{sy(y):.1f}" x2="{w - r}" '
                 f'y2="{sy(y):.1f}" stroke="#ddd"/>')
        o.append(f'<text x="{l - 6}" y="{sy(y) + 4:.1f}" '
                 f'text-anchor="end">{y:g}</text>')
        y *= 10
    for i, (name, s) in enumerate(series.items()):
        s = sorted(p for p in s if p[1] > 0)
        c = colors[i % len(colors)]
        o.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" '
                 f'points="' + ' '.join(f'{sx(a):.1f},{sy(v):.1f}'
                                         for a, v in s) + '"/>')
        for a, v in s:
            o.append(f'<circle cx="{sx(a):.1f}" cy="{sy(v):.1f}" r="3" '
                     f'fill="{c}"/>')
        o.append(f'<text x="{w - r + 10}" y="{t + 16 + 18 * i}" '
                 f'fill="{c}">{name}</text>')
    o.append('</svg>')
    with open(path, 'w') as f:
        f.write('\n'.join(o) + '\n')


def slope(points):
    """the log-log slope of a series: 0 flat, 1 linear in CPUs"""
    points = [(math.log(x), math.log(y)) for x, y in points if y > 0]
    if len(points) < 2:
        return None
    mx = sum(p[0] for p in points) / len(points)
    my = sum(p[1] for p in points) / len(points)
    d = sum((p[0] - mx) ** 2 for p in points)
    return d and sum((p[0] - mx) * (p[1] - my) for p in points) / d


def main():
    raw, out = sys.argv[1], sys.argv[2]
    t = load(raw)
    cost = t.get('cost', [])
    write_csv(os.path.join(out, 'cost.csv'), cost)
    by = {}
    for r in cost:
        by.setdefault(int(r['cpus']), {})[r['method']] = r
    # record formats 7 lines a sample (6 for the first, 3 more with
    # netdevs: cost runs sample lo), at the rate the format run measured
    fmt_ns = {int(r['cpus']): 7e9 / float(r['tool_lines_per_s'])
              for r in t.get('format', [])}
    print('Cost per sample (CPU time, microseconds) against vCPUs. K read '
          'is the sampler and record\'s CPU time as it reads, in its steady '
          'state; K total adds formatting the lines, at the rate the format '
          'run measured (U2 formats none).')
    rows, series = [], {'K sampler': [], 'K read': [], 'K total': [],
                        'U2 pread': [], 'U1 shell + python': []}
    for n in sorted(by):
        k, u2, u1 = by[n].get('K'), by[n].get('U2'), by[n].get('U1')
        if not (k and u2 and u1):
            continue
        ks = float(k['sampler_ns'])
        kr = ks + float(k['read_ns'])
        kt = kr + fmt_ns.get(n, 0)
        u2n, u1n = float(u2['per_sample_ns']), float(u1['per_sample_ns'])
        rows.append([n, us(ks), us(k['traced_ns']) + ' (p50 ' +
                     us(k['traced_p50_ns']) + ')',
                     us(kr), us(kt), us(u2n), us(u1n),
                     f'{kr / ks:.1f}x', f'{u2n / ks:.1f}x',
                     f'{u2n / kr:.1f}x', f'{u1n / kt:.0f}x',
                     k['sample_bytes']])
        for name, v in zip(series, (ks, kr, kt, u2n, u1n)):
            series[name].append((n, v / 1000))
    table(['vCPUs', 'K sampler', 'K sampler (ftrace: mean, p50)',
           'K read', 'K total', 'U2', 'U1', 'K read/K sampler',
           'U2/K sampler', 'U2/K read', 'U1/K total', 'bytes/sample'], rows)
    for name, s in series.items():
        sl = slope(s)
        if sl is not None and len(s) > 1:
            print(f'{name}: x{s[-1][1] / s[0][1]:.1f} from {s[0][0]} to '
                  f'{s[-1][0]} vCPUs (log-log slope {sl:.2f})')
    print()
    svg_lines(os.path.join(out, 'cost.svg'),
              'CPU time per sample against vCPUs', 'vCPUs',
              'microseconds per sample', series)

    copy = t.get('copy', [])
    if copy:
        write_csv(os.path.join(out, 'copy.csv'), copy)
        print('The sampler against a bare copy of the same counters, in the '
              'same kernel (debugfs copy_cost: of three medians of 32 passes 10 ms apart, the fastest), '
              'nanoseconds a pass over every CPU; cpu-net adds each CPU\'s '
              'softnet and softirq counts; K sampler is the '
              'session\'s whole sample, with one netdev')
        table(['vCPUs', 'bare copy', 'bare copy + 2 clock reads a CPU',
               'sampler, CPUs', 'sampler, CPUs + cpu-net', 'K sampler',
               'CPUs/bare', 'K sampler/bare'],
              [[r['cpus'], r['bare_ns'], r.get('bare_clock_ns', '-'),
                r['cpu_read_ns'], r.get('cpu_net_read_ns', '-'),
                by[int(r['cpus'])]['K']['sampler_ns']
                if 'K' in by.get(int(r['cpus']), {}) else '-',
                f'{float(r["cpu_read_ns"]) / float(r["bare_ns"]):.1f}x'
                if float(r['bare_ns']) else '-',
                f'{float(by[int(r["cpus"])]["K"]["sampler_ns"]) / float(r["bare_ns"]):.1f}x'
                if 'K' in by.get(int(r['cpus']), {}) and float(r['bare_ns'])
                else '-'] for r in copy])
        print()

    fmt = t.get('format', [])
    write_csv(os.path.join(out, 'format.csv'), fmt)
    print('Formatting the same samples: KTAP lines a second')
    table(['vCPUs', 'samples', 'ksft-perfmon-nl', 'Python json.dumps',
           'ratio', 'byte-identical'],
          [[r['cpus'], r['samples'], f'{float(r["tool_lines_per_s"]):.0f}',
            f'{float(r["python_lines_per_s"]):.0f}',
            f'{float(r["tool_lines_per_s"]) / float(r["python_lines_per_s"]):.1f}x',
            'yes' if r['identical'] == '1' else 'NO'] for r in fmt])
    bad = [r for r in fmt if r['identical'] != '1']

    tim = t.get('timer', [])
    if tim:
        write_csv(os.path.join(out, 'timer.csv'), tim)
        print('Timer accuracy: how late samples come, microseconds '
              '(K and U2: after the earliest on the schedule; U2 absolute: '
              'after the schedule itself)')
        table(['vCPUs', 'load', 'interval', 'method', 'samples', 'p50', 'p99',
               'max'],
              [[r['cpus'], r['load'], r['interval_ms'] + ' ms', r['method'],
                r['n'], us(r['p50_ns']), us(r['p99_ns']), us(r['max_ns'])]
               for r in tim])
        for cond in ('idle', 'iperf3'):
            k = [r for r in tim if r['load'] == cond and
                 r['interval_ms'] == '10' and r['method'] == 'K']
            u = [r for r in tim if r['load'] == cond and
                 r['interval_ms'] == '10' and r['method'] == 'U2']
            if k and u and k[0]['p99_ns'] and float(k[0]['p99_ns']):
                print(f'p99 at 10 ms, {cond}: U2/K = '
                      f'{float(u[0]["p99_ns"]) / float(k[0]["p99_ns"]):.1f}x')
        print()

    per = t.get('perturb', [])
    none = next((r for r in per if r['monitor'] == 'none'), None)
    if per:
        write_csv(os.path.join(out, 'perturb.csv'), per)
    if per and none:
        print('Perturbation: the interleaved runs against no monitor; '
              'the loop by its median and its fastest run, iperf3 by its '
              'median')
        print('(paired: the median, over the rounds, of the loop under the '
              'monitor against the loop alone run next to it)')
        table(['vCPUs', 'monitor', 'interval', 'CPU-bound loop (s)',
               'slowdown', 'fastest (s)', 'slowdown', 'paired',
               'iperf3 (Gbit/s)', 'change'],
              [[r['cpus'], r['monitor'], (r['interval_ms'] + ' ms')
                if r['interval_ms'] else '-',
                f'{int(r["spin_ns"]) / 1e9:.3f}',
                f'{100 * (int(r["spin_ns"]) / int(none["spin_ns"]) - 1):+.2f}%',
                f'{int(r["spin_min_ns"]) / 1e9:.3f}',
                f'{100 * (int(r["spin_min_ns"]) / int(none["spin_min_ns"]) - 1):+.2f}%',
                f'{100 * (float(r["paired"]) - 1):+.2f}%'
                if r.get('paired') else '-',
                r['iperf3_gbps'],
                f'{100 * (float(r["iperf3_gbps"]) / float(none["iperf3_gbps"]) - 1):+.1f}%']
               for r in per])

    busy = busy_table(t.get('busy', []), out)
    rt_table(t.get('rt', []), out)

    sc = t.get('scale', [])
    if sc:
        write_csv(os.path.join(out, 'scale.csv'), sc)
        print('Scale: the sampler\'s cost a sample (its own counter), '
              'microseconds')
        table(['vCPUs', 'sessions', 'netdevs', 'sampler', 'bytes/sample'],
              [[r['cpus'], r['sessions'], r['netdevs'], us(r['sampler_ns']),
                r.get('sample_bytes', '-')] for r in sc])
    targets(by, fmt_ns, copy, fmt, per, busy)
    return 1 if bad or not rows else 0


def busy_table(rows, out):
    """cost per sample at 1 ms by the CPUs' busy time and the scheduler;
    {vCPUs: {method: row}}"""
    by = {}
    for r in rows:
        by.setdefault(int(r['cpus']), {})[r['method']] = r
    if not rows:
        return by
    write_csv(os.path.join(out, 'busy.csv'), rows)
    print('Cost per sample at 1 ms (microseconds of CPU): "busy" is the time '
          'every CPU spent out of idle by the kernel\'s NOHZ accounting '
          '(interrupts, softirqs and tasks), "sched" the run time of the '
          'kworker, ksoftirqd and ktimers threads and of the monitor\'s '
          'process by their schedstat, each less an idle window\'s of the '
          'same round (median of the rounds); "own" the module\'s cost_ns. '
          'K: the CPUs; KD: and lo every 10 ms; U2: /proc/stat and lo\'s '
          'counters every sample; U2D: lo every 10 samples; the floor '
          'under any sampler on a 1 ms timer, a bare hrtimer, a tick: H '
          'hard, HS soft, as K\'s')
    head = ['vCPUs']
    for m in ('K', 'KD', 'U2', 'U2D'):
        head += [f'{m} busy', f'{m} sched'] + \
            ([f'{m} own'] if m.startswith('K') else [])
    head += ['H busy', 'HS busy', 'U2/K busy', 'U2D/KD busy', 'U2/K sched',
             'U2D/KD sched']
    out_rows, series = [], {'K busy': [], 'KD busy': [], 'U2 busy': [],
                            'U2D busy': [], 'HS busy': []}
    for n in sorted(by):
        m = by[n]
        if not all(x in m for x in ('K', 'KD', 'U2', 'U2D')):
            continue
        r = [n]
        for x in ('K', 'KD', 'U2', 'U2D'):
            r += [us(m[x]['busy_ns']), us(m[x]['sched_ns'])] + \
                ([us(m[x]['own_ns'])] if x.startswith('K') else [])
            series[f'{x} busy'].append((n, max(float(m[x]['busy_ns']), 1) /
                                        1000))
        if 'HS' in m:
            series['HS busy'].append((n, max(float(m['HS']['busy_ns']), 1) /
                                     1000))

        def ratio(a, b, key):
            d = float(m[b][key])
            return f'{float(m[a][key]) / d:.1f}x' if d > 0 else '-'
        r += [us(m[h]['busy_ns']) if h in m else '-' for h in ('H', 'HS')]
        r += [ratio('U2', 'K', 'busy_ns'), ratio('U2D', 'KD', 'busy_ns'),
              ratio('U2', 'K', 'sched_ns'), ratio('U2D', 'KD', 'sched_ns')]
        out_rows.append(r)
    table(head, out_rows)
    svg_lines(os.path.join(out, 'busy.svg'),
              'CPU time per sample at 1 ms against vCPUs', 'vCPUs',
              'microseconds per sample (busy)', series)
    return by


def rt_table(rows, out):
    """cyclictest beside the monitors, on PREEMPT_RT"""
    if not rows:
        return
    write_csv(os.path.join(out, 'rt.csv'), rows)
    print(f'cyclictest on {rows[0]["kernel"]}, {rows[0]["cpus"]} vCPUs: a '
          'SCHED_FIFO 90 thread a CPU every 1 ms, wake-up latency in '
          'microseconds, all rounds and threads together; K at 1 ms, KD '
          'with lo every 10 ms')
    table(['monitor', 'wake-ups', 'min', 'p50', 'p99', 'p99.9', 'max',
           'mean'],
          [[r['monitor'], r['samples'], r['min_us'], r['p50_us'],
            r['p99_us'], r['p999_us'], r['max_us'], r['mean_us']]
           for r in rows])


def targets(by, fmt_ns, copy, fmt, per, busy):
    """the delivery targets, each row with what this run measured"""
    def kread(n):
        return float(by[n]['K']['sampler_ns']) + float(by[n]['K']['read_ns'])

    sizes = sorted(n for n in by if 'K' in by[n] and 'U2' in by[n])
    rows = []

    def row(what, target, values, ok):
        verdict = ok if isinstance(ok, str) else \
            ('met' if ok else 'NOT met') if values and ok is not None else '-'
        rows.append([what, target, values or '-', verdict])

    r = {n: kread(n) / float(by[n]['K']['sampler_ns']) for n in sizes}
    row('K read / K sampler', '<= 2x at every size',
        ', '.join(f'{n}: {v:.1f}x' for n, v in r.items()),
        all(v <= 2 for v in r.values()))
    u = {n: float(by[n]['U2']['per_sample_ns']) / kread(n) for n in sizes}
    row('U2 / K read', '>= 3x at 64, >= 5x at 8..32',
        ', '.join(f'{n}: {v:.1f}x' for n, v in u.items()),
        all(v >= (3 if n >= 64 else 5) for n, v in u.items() if n >= 8)
        if any(n >= 8 for n in u) else None)
    c = {int(x['cpus']): float(x['cpu_read_ns']) / float(x['bare_ns'])
         for x in copy if float(x['bare_ns'])}
    row('sampler\'s CPU read / bare copy', '<= 3x',
        ', '.join(f'{n}: {v:.1f}x' for n, v in sorted(c.items())),
        all(v <= 3 for v in c.values()))
    none = next((x for x in per if x['monitor'] == 'none'), None)

    def slowdown(monitor, ms):
        k = next((x for x in per if x['monitor'] == monitor and
                  x['interval_ms'] == ms), None)
        return 100 * (int(k['spin_min_ns']) / int(none['spin_min_ns']) -
                      1) if k and none else None

    def paired(monitor, ms):
        k = next((x for x in per if x['monitor'] == monitor and
                  x['interval_ms'] == ms), None)
        if k and k.get('paired'):
            return 100 * (float(k['paired']) - 1)
        return slowdown(monitor, ms)

    for ms, limit in (('1', 2.0), ('10', 0.5)):
        v = slowdown('K', ms)
        # what any timer-driven sampler pays at this interval (bench/floor),
        # by the paired ratios where the run has them: a fastest run of
        # its own says little of a cost of a few percent
        floor = [f'{what} {f:+.2f}%' for what, f in
                 ((w, paired(w, ms)) for w in ('H', 'HW', 'HR'))
                 if f is not None]
        # the paired ratios' median, within its 3rd and 9th of 11 (about
        # a 93% interval): where that interval holds the limit, the run
        # cannot tell, whatever the fastest run says
        k = next((x for x in per if x['monitor'] == 'K' and
                  x['interval_ms'] == ms and x.get('paired')), None)
        p = sorted(float(x) for x in k['paired_all'].split(':')) if k else []
        lo, hi = (100 * (p[2] - 1), 100 * (p[-3] - 1)) if len(p) >= 7 \
            else (None, None)
        extra = ([f'paired {100 * (float(k["paired"]) - 1):+.2f}%' +
                  (f' in [{lo:+.1f}%, {hi:+.1f}%]' if lo is not None
                   else '')] if k else []) + \
            ([f'floor (paired): {", ".join(floor)}'] if floor else [])
        if v is None:
            ok = None
        elif lo is None:
            ok = v < limit
        elif hi < limit and v < limit:
            ok = 'met'
        elif lo >= limit:
            ok = 'NOT met'
        else:
            ok = 'noise: cannot tell'
        row(f'perturbation, K at {ms} ms, fastest', f'< {limit}%',
            ' '.join(([f'{v:+.2f}%'] if v is not None else []) +
                     ([f'({"; ".join(extra)})'] if extra else [])), ok)
    f = {int(x['cpus']): float(x['tool_lines_per_s']) /
         float(x['python_lines_per_s']) for x in fmt}
    row('formatting / Python', '>= 30x at every size, byte-identical',
        ', '.join(f'{n}: {v:.1f}x' for n, v in sorted(f.items())),
        all(v >= 30 for v in f.values()) and
        all(x['identical'] == '1' for x in fmt))
    for u, k in (('U2', 'K'), ('U2D', 'KD')):
        v = {n: float(m[u]['busy_ns']) / float(m[k]['busy_ns'])
             for n, m in sorted(busy.items())
             if u in m and k in m and float(m[k]['busy_ns']) > 0}
        row(f'{u} / {k} at 1 ms, busy', '>= 3x at 64, >= 5x at 8..32',
            ', '.join(f'{n}: {x:.1f}x' for n, x in v.items()),
            all(x >= (3 if n >= 64 else 5) for n, x in v.items() if n >= 8)
            if any(n >= 8 for n in v) else None)
    h = paired('H', '1')
    for m in ('K', 'S', 'KD'):
        p = paired(m, '1')
        if p is None or h is None:
            continue
        row(f'perturbation, {m} at 1 ms, paired, against H',
            '<= 1.5x H' if m != 'KD' else '(what lo at 10 ms adds)',
            f'{p:+.2f}% against H {h:+.2f}%' +
            (f': {p / h:.1f}x' if h > 0 else ''),
            (p <= 1.5 * h if h > 0 else 'noise: cannot tell')
            if m != 'KD' else '-')
    print('Targets, as this run measured them')
    table(['what', 'target', 'measured', ''], rows)
    why_not(busy, per)


def why_not(busy, per):
    """for the sampler's targets not met, the reason in this run's
    numbers, and what would meet them"""
    lines = []
    for u, k in (('U2', 'K'), ('U2D', 'KD')):
        for n, m in sorted(busy.items()):
            fl = m.get('HS') or m.get('H')
            if n < 8 or not (u in m and k in m and fl):
                continue
            want = 3 if n >= 64 else 5
            kb, ub = float(m[k]['busy_ns']), float(m[u]['busy_ns'])
            f, own = float(fl['busy_ns']), float(m[k]['own_ns'])
            if ub >= want * kb:
                continue
            rest = kb - f - own
            # record's (and with netdevs the kworker's) by the scheduler
            tasks = max(float(m[k]['sched_ns']), 0)
            need = ub / want
            lines.append(
                f'{u}/{k} at {n} vCPUs, {ub / kb:.1f}x: {k} {kb / 1e3:.1f} us '
                f'a sample = the bare 1 ms timer\'s {f / 1e3:.1f} '
                f'(HS) + the module\'s {own / 1e3:.1f} + {rest / 1e3:.1f} '
                f'more, of which {tasks / 1e3:.1f} record' +
                (' and the kworker' if k == 'KD' else '') +
                f' (schedstat); {u} {ub / 1e3:.1f}. {want}x takes {k} at '
                f'{need / 1e3:.1f} us: ' +
                (f'below the timer and the module alone '
                 f'({(f + own) / 1e3:.1f})' if need < f + own else
                 f'the {rest / 1e3:.1f} more at {(need - f - own) / 1e3:.1f}'))

    def interval(monitor):
        x = next((r for r in per if r['monitor'] == monitor and
                  r['interval_ms'] == '1' and r.get('paired_all')), None)
        p = sorted(float(v) for v in x['paired_all'].split(':')) if x else []
        return (100 * (p[len(p) // 2] - 1), 100 * (p[2] - 1),
                100 * (p[-3] - 1)) if len(p) >= 7 else None
    h, k = interval('H'), interval('K')
    if h and k and not (h[0] > 0 and k[0] <= 1.5 * h[0]):
        lines.append(
            f'perturbation at 1 ms: the bare hardirq timer H slows the '
            f'loop by {h[0]:+.2f}% (paired median; 3rd to 9th of 11: '
            f'{h[1]:+.1f}% to {h[2]:+.1f}%), K by {k[0]:+.2f}% ({k[1]:+.1f}% '
            f'to {k[2]:+.1f}%): the rounds\' spread is wider than the '
            f'floor, so 1.5x of it cannot be told from this run; more '
            f'rounds, or a quieter host, would')
    if lines:
        print('Why a target is not met, in this run\'s numbers')
        for x in lines:
            print(f'- {x}')
        print()


if __name__ == '__main__':
    sys.exit(main())
