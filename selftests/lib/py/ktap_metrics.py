#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check ksft-perfmon-nl record output against the format of
Documentation/metric-format.rst.

Prints one KTAP result line per check and exits non-zero when any failed.
"""

import argparse
import json
import re
import sys

import raw_samples
from ktap import Ktap

# The test vectors of Documentation/metric-format.rst (the compatibility
# set).
CPU_POLICY = ('{"aggregation":"busy-core-equivalents","display_label":'
              '"Percent of one CPU","display_range":{"max":100.0,"min":0.0},'
              '"display_scale":100.0,"name":"%s","summarize":"p90",'
              '"transform":"rate"}')
VECTORS = {
    'cpu.time.usr': CPU_POLICY.replace('%s', 'cpu.time.usr'),
    'cpu.time.sys': CPU_POLICY.replace('%s', 'cpu.time.sys'),
    'cpu.time.sirq': CPU_POLICY.replace('%s', 'cpu.time.sirq'),
    'cpu.utilization': (
        '{"aggregation":"busy-core-equivalents","display_label":'
        '"Percent of one CPU","display_range":{"max":100.0,"min":0.0},'
        '"name":"cpu.utilization","summarize":"p90"}'),
}
for nic in ('nic.rx.dropped', 'nic.rx.missed_errors', 'nic.tx.dropped'):
    VECTORS[nic] = ('{"display_range":{"min":0},"name":"%s","summarize":'
                    '"distribution","transform":"rate"}' % nic)
CPU_TIMES = ('cpu.time.usr', 'cpu.time.sys', 'cpu.time.sirq')
LINE = re.compile(r'^(?:# )+(ktap-metric-policy-json|ktap-metric-json): (.*)$')
DIAG = '# ksft-perfmon: '


def dumps(obj):
    return json.dumps(obj, allow_nan=False, separators=(',', ':'),
                      sort_keys=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('file')
    ap.add_argument('--host', required=True)
    ap.add_argument('--cpus', type=int, required=True)
    ap.add_argument('--last', action='append', default=[],
                    help='NAME=VALUE: the last observation of NAME')
    ap.add_argument('--busy', type=float, default=None,
                    help='some CPU spent at least this many seconds in '
                    'system plus softirq time')
    ap.add_argument('--max-time', type=float, default=None)
    ap.add_argument('--raw', required=True,
                    help='record --raw of the same host and time: the '
                    'kernel\'s own times, which record\'s lines clamp')
    args = ap.parse_args()

    c = Ktap(f'{args.host}')
    policies, obs, bad_lines, other = {}, [], [], []
    order_ok, reserialized = True, True
    with open(args.file) as f:
        for raw in f:
            raw = raw.rstrip('\n')
            m = LINE.match(raw)
            if not m:
                # the tool's own diagnostics (samples lost, timer periods
                # missed: a guest of 64 vCPUs on two cores misses some)
                # are KTAP comments of the format; nothing else may be
                if raw.startswith(DIAG):
                    print(f'# {raw}')
                else:
                    other.append(raw)
                continue
            tag, text = m.groups()
            try:
                obj = json.loads(text)
            except ValueError:
                bad_lines.append(raw)
                continue
            if dumps(obj) != text:
                reserialized = False
                print(f'# not as json.dumps writes it: {text}')
            if tag == 'ktap-metric-policy-json':
                if obj.get('name') in policies or any(
                        o['name'] == obj.get('name') for o in obs):
                    order_ok = False
                policies[obj.get('name')] = text
            else:
                if obj.get('name') not in policies:
                    order_ok = False
                obs.append(obj)

    c.check(not bad_lines and not other, 'only_metric_lines',
            f'other lines: {(bad_lines + other)[:3]}')
    c.check(reserialized, 'json_dumps_byte_identical')
    c.check(order_ok, 'policy_once_before_observations')
    c.check(policies == VECTORS, 'policies_equal_test_vectors',
            f'got {policies}')
    names = {o.get('name') for o in obs}
    c.check(names == set(VECTORS), 'all_metrics_observed', f'got {names}')

    shapes_ok, times_ok, monotonic, util_ok = True, True, True, True
    # each series in time order: a sample's netdevs were read before its
    # CPUs, and their lines follow the CPUs'
    prev_time = {}
    last = {}
    for o in obs:
        if set(o) != {'host', 'name', 'shape', 'time', 'value'} or \
           o['host'] != args.host:
            shapes_ok = False
        t = o['time']
        if not isinstance(t, float) or round(t, 6) != t or \
           t < prev_time.get(o.get('name'), -1e9) or \
           (args.max_time is not None and not 0 <= t <= args.max_time):
            times_ok = False
        prev_time[o.get('name')] = t
        v = o['value']
        if o['name'].startswith('cpu.'):
            if o['shape'] != 'per-cpu' or not isinstance(v, list) or \
               len(v) != args.cpus or \
               any(x is not None and not isinstance(x, float) for x in v):
                shapes_ok = False
                continue
        elif o['shape'] != 'scalar' or not isinstance(v, int) or v < 0:
            shapes_ok = False
            continue
        if o['name'] == 'cpu.utilization':
            for x in v:
                if x is not None and (not 0.0 <= x <= 100.0 or
                                      round(x, 4) != x):
                    util_ok = False
        last[o['name']] = v
    c.check(shapes_ok, 'keys_shapes_and_host')
    c.check(times_ok, 'time_rounded_and_ordered')
    # record never writes a time below the last; the kernel's are checked
    with open(args.raw) as f:
        raw, _, raw_bad = raw_samples.parse(f.read())
    monotonic, why = raw_samples.times_ok(raw, lambda m: print(f'# {m}'))
    c.check(monotonic and len(raw) > 2 and not raw_bad,
            'cpu_times_never_decrease',
            f'{len(raw)} raw samples, {raw_bad[:2]}; {why}')
    c.check(util_ok, 'utilization_within_0_100')

    for spec in args.last:
        name, want = spec.split('=')
        got = last.get(name)
        c.check(got == int(want), f'last_{name}_is_{want}', f'got {got}')
    if args.busy is not None:
        busy = [(s or 0) + (q or 0) for s, q in
                zip(last.get('cpu.time.sys', []),
                    last.get('cpu.time.sirq', []))]
        c.check(busy and max(busy) >= args.busy,
                f'some_cpu_busy_{args.busy}s_in_sys_and_softirq',
                f'sys+softirq per CPU: {busy}')
    return c.finish(plan=False)


if __name__ == '__main__':
    sys.exit(main())
