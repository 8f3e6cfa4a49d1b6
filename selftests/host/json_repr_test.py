#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""tools/lib/json.c writes numbers and strings byte for byte as Python does.

Compares against Python itself on fixed edge cases and on random values
(seeded; KPM_SEED overrides). Prints KTAP results.
"""

import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
from ktap import Ktap   # noqa: E402

driver = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      'json_repr')
seed = int(os.environ.get('KPM_SEED', '20261130'))
rng = random.Random(seed)


def run(lines, env=None):
    out = subprocess.run([driver], input=''.join(l + '\n' for l in lines),
                         capture_output=True, text=True, check=True,
                         env=env).stdout
    return out.split('\n')[:len(lines)]


def random_doubles(n):
    for _ in range(n):
        kind = rng.random()
        if kind < 0.4:
            v = struct.unpack('d', struct.pack('Q', rng.getrandbits(64)))[0]
        elif kind < 0.6:
            v = 2.0 ** rng.randint(-1074, 1023)
        elif kind < 0.8:
            v = rng.randint(0, 10 ** 12) / 1e9      # ns as seconds
        else:
            v = round(rng.uniform(0, 100), rng.randint(0, 8))
        if v == v and abs(v) != float('inf'):
            yield v


EDGES = [0.0, -0.0, 0.02, 9.0909, 100.0, 321.16499999999996, 1e-05, 1e+16,
         1e15, 0.0001, 5e-324, 1.7976931348623157e308, 0.1, 1 / 3, 1e22,
         1e23, 9007199254740993.0, 2.0 ** -1022, 123456789.123456789]

results = []

values = EDGES + list(random_doubles(100000))
got = run(['f ' + repr(v) for v in values])
bad = [(repr(v), g) for v, g in zip(values, got) if json.dumps(v) != g]
results.append(('float_repr_matches_python', not bad,
                f'{len(values)} values, seed {seed}, mismatches {bad[:5]}'))

rounds = [(rng.uniform(0, 100), 4) for _ in range(20000)] + \
         [(rng.uniform(-5, 50), 6) for _ in range(20000)] + \
         [(0.00005, 4), (2.675, 2), (1.00000049999, 6), (0.5, 0)]
got = run([f'r {v!r} {n}' for v, n in rounds])
bad = [(v, n, g) for (v, n), g in zip(rounds, got)
       if json.dumps(round(v, n)) != g]
results.append(('round_matches_python', not bad,
                f'{len(rounds)} values, mismatches {bad[:5]}'))

# the exact path of py_round_repr(), which writes round(v, n) from an
# integer: exact ties (binary fractions half way between two decimals of
# n digits), values next to them, signs, zeros, and the large and tiny
# ones it leaves to the long way
ties = [k / 2 ** 5 for k in range(0, 3200)] + \
    [k / 2 ** 11 for k in range(0, 2 ** 11 * 4)]
ties += [math.nextafter(t, d) for t in ties[::7] for d in (0, 200)]
exact = [(rng.uniform(0, 100), 4) for _ in range(40000)] + \
        [(rng.uniform(-1e6, 1e6), rng.randint(0, 9)) for _ in range(20000)] + \
        [(t * rng.choice((1, -1)), n) for t in ties for n in (4, 5)] + \
        [(s * float(m) / 10 ** n, n) for n in range(10)
         for m in (2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, 2 ** 64 - 2 ** 11,
                   2 ** 64, 2 ** 64 + 2 ** 12, 2 ** 70) for s in (1, -1)] + \
        [(v, n) for v in (0.0, -0.0, 5e-324, -5e-324, 1e-30, -1e-30,
                          0.00005, -0.00005, 2.675, 1e15, 2.0 ** 53,
                          -2.0 ** 53, 9.99999999e22, 1.7976931348623157e308,
                          4.9999999999999996e-05, 100.0, 99.99995)
         for n in list(range(10)) + [12, 17]]
got = run([f'R {v!r} {n}' for v, n in exact])
bad = [(v, n, g) for (v, n), g in zip(exact, got)
       if json.dumps(round(v, n)) != g]
results.append(('round_repr_matches_python', not bad,
                f'{len(exact)} values, mismatches {bad[:5]}'))

strings = ['local', 'remote', 'a"b\\c', 'tab\tnl\ncr\r\x01\x1f\x7f',
           'caf\u00e9', '\u2603 snow', '\U0001F600 grin', '']
# NUL cannot be in a C string, nor in a label given on the command line
strings += [''.join(chr(rng.choice([rng.randint(32, 126), rng.randint(1, 31),
                                    rng.randint(0x80, 0xd7ff),
                                    rng.randint(0x10000, 0x10ffff)]))
                    for _ in range(rng.randint(1, 20))) for _ in range(2000)]
got = run(['s ' + s.encode().hex() for s in strings])
bad = [(s, g) for s, g in zip(strings, got) if json.dumps(s)[1:-1] != g]
results.append(('string_escape_matches_python', not bad,
                f'{len(strings)} strings, mismatches {bad[:5]}'))

# numbers written from their decimal digits: the double nearest
# MANT * 10^EXP, as Python's MANT / 10**-EXP (correctly rounded) is
decs = [(rng.randint(-2 ** rng.randint(1, 53), 2 ** rng.randint(1, 53)),
         -rng.randint(0, 22)) for _ in range(20000)]
decs += [(0, -9), (1, -9), (10 ** 15 - 1, -9), (10 ** 15, -9),
         (-(10 ** 15), -6), (2 ** 53, -9), (5, 0), (1, -22)]
# where repr leaves fixed notation (1e-4), and the longest fractions
decs += [(m * s, e) for e in (0, -1, -3, -4, -5, -9, -15, -18, -19, -20)
         for m in (1, 9, 10 ** max(0, -e - 4) - 1, 10 ** max(0, -e - 4),
                   10 ** max(0, -e - 4) + 1, 10 ** 15 - 1)
         for s in (1, -1) if m <= 2 ** 53]
got = run([f'D {m} {e}' for m, e in decs] + ['D 9007199254740993 -9'])
bad = [(m, e, g) for (m, e), g in zip(decs, got)
       if json.dumps(m / 10 ** -e) != g]
if got[-1] != 'ERROR':
    bad.append(('over 2^53 not refused', got[-1]))
results.append(('decimal_repr_matches_python', not bad,
                f'{len(decs)} values, mismatches {bad[:5]}'))

# an observation's time: round(ns / 1e9, 6), ties at microseconds and
# over 2^22 s included
times = [rng.randint(-10 ** 13, 10 ** 13) for _ in range(20000)]
times += [rng.randint(-10 ** 9, 10 ** 9) // 1000 * 1000 + 500
          for _ in range(5000)]
times += [2 ** 22 * 10 ** 9 + 500, 2 ** 22 * 10 ** 9 - 500, 2 ** 52, -2 ** 52,
          0, 500, -500, 1500, 2500, 1_000_000_000_000_500,
          -1, -250, -499, -501]     # round to -0.0 in Python, but -501
got = run([f'T {t}' for t in times])
bad = [(t, g) for t, g in zip(times, got)
       if json.dumps(round(t / 1e9, 6)) != g]
results.append(('time_rounding_matches_python', not bad,
                f'{len(times)} times, mismatches {bad[:5]}'))

# the same in a program that set LC_NUMERIC to a locale whose decimal
# point is a comma: de_DE, compiled from Debian's locales package into a
# directory of our own
with tempfile.TemporaryDirectory() as locdir:
    made = subprocess.run(['localedef', '-i', 'de_DE', '-f', 'UTF-8',
                           os.path.join(locdir, 'de_DE.UTF-8')],
                          capture_output=True, text=True)
    env = dict(os.environ, LOCPATH=locdir, KPM_LC_NUMERIC='de_DE.UTF-8')
    vals = list(random_doubles(2000)) + [0.5, 1e-7, 123.456, 1e22]
    lines = [f'f {v!r}' for v in vals] + [f'r {v!r} 3' for v in vals] + \
        [f'T {t}' for t in times[:2000]]
    want = [json.dumps(v) for v in vals] + \
        [json.dumps(round(v, 3)) for v in vals] + \
        [json.dumps(round(t / 1e9, 6)) for t in times[:2000]]
    try:
        got = run(lines, env) if made.returncode == 0 else []
    except subprocess.CalledProcessError as e:
        got = [e.stderr.strip()]
    bad = [(l, w, g) for l, w, g in zip(lines, want, got) if w != g]
    results.append(('numbers_ignore_lc_numeric',
                    made.returncode == 0 and len(got) == len(want) and not bad,
                    f'{len(lines)} values under LC_NUMERIC=de_DE.UTF-8 '
                    f'{made.stderr.strip()[:80]} mismatches {bad[:3]} '
                    f'{got[:1] if len(got) != len(want) else ""}'))

invalid = [b'\xff', b'\xc0\x80', b'\xed\xa0\x80', b'abc\xe2\x82']
got = run(['s ' + b.hex() for b in invalid])
results.append(('invalid_utf8_refused', all(g == 'ERROR' for g in got),
                f'got {got}'))
got = run(['f nan', 'f inf', 'f -inf'])
results.append(('nan_and_infinity_refused', got == ['ERROR'] * 3,
                f'got {got}'))



def random_doc(depth=0):
    """a random JSON value; keys are plain, as jw_key() takes them"""
    kind = rng.randint(0, 9 if depth < 4 else 5)
    if kind <= 1:
        return rng.randint(-10 ** 12, 10 ** 12)
    if kind == 2:
        return rng.uniform(-1e3, 1e3)
    if kind == 3:
        return None
    if kind <= 5:
        return rng.random() < 0.5
    if kind <= 7:
        return [random_doc(depth + 1) for _ in range(rng.randint(0, 4))]
    return {f'k{rng.randint(0, 99)}-x': random_doc(depth + 1)
            for _ in range(rng.randint(0, 4))}


def tokens(v):
    if isinstance(v, dict):
        return ['{'] + [t for k in sorted(v) for t in ['k:' + k] + tokens(v[k])] + ['}']
    if isinstance(v, list):
        return ['['] + [t for x in v for t in tokens(x)] + [']']
    if v is None:
        return ['n']
    if isinstance(v, bool):
        return ['t' if v else 'f']
    if isinstance(v, int):
        return [f'i:{v}']
    return [f'd:{v!r}']


docs = [random_doc() for _ in range(2000)] + [[], {}, {'a': []}, [[{}]]]
bad = []
for indent in (0, 4, 2):
    out = subprocess.run([driver], input=''.join(
        f'j {indent} {" ".join(tokens(d))}\n' for d in docs),
        capture_output=True, text=True, check=True).stdout
    got = out.split('\n.\n')[:len(docs)]
    for d, g in zip(docs, got):
        want = (json.dumps(d, indent=indent, sort_keys=True) if indent else
                json.dumps(d, separators=(',', ':'), sort_keys=True))
        if want != g:
            bad.append((indent, want, g))
results.append(('documents_match_python_compact_and_indented', not bad,
                f'{len(docs)} documents at indent 0, 4, 2, mismatches {bad[:2]}'))


# ksft-perfmon-nl metric VALUE: a JSON number, written as json.dumps writes
# what json.loads reads from it; anything else refused in one line
NL = os.path.join(os.path.dirname(driver), '..', '..', 'tools',
                  'ksft-perfmon-nl')


def metric(value):
    """(exit status, the value as written, stderr)"""
    p = subprocess.run([NL, 'metric', '--time-base', '0', '--', 'm', value],
                       capture_output=True, text=True)
    obj = p.stdout.partition('ktap-metric-json: ')[2]
    return p.returncode, obj.rpartition('"value":')[2][:-2], p.stderr


def python_value(text):
    """json.dumps(json.loads(text)) as metric's output needs it, or None
    where it has none: not a JSON number, infinite, beyond 64 bits"""
    try:
        v = json.loads(text, parse_constant=lambda c: None)
    except ValueError:
        return None
    if v is None or isinstance(v, (str, list, dict, bool)) or \
            text != text.strip() or abs(v) == float('inf') or \
            (isinstance(v, int) and not -2 ** 63 <= v < 2 ** 63):
        return None
    return json.dumps(v)


texts = ['5', ' 5', '5 ', '0x1p3', '1e-310', '4.9e-324', '1e-400', '1e400',
         '-0', '-0.0', '010', '1.', '.5', '1e5', '1E+2', '1e', '-', '',
         'nan', 'NaN', 'Infinity', '+1', '9223372036854775807',
         '9223372036854775808', '-9223372036854775808', '0.1e-0', '1_0',
         '\u0661', '5\n'] + \
        [repr(v) for v in random_doubles(300)] + \
        [str(rng.randint(-2 ** 63, 2 ** 63 - 1)) for _ in range(100)]
bad = []
for text in texts:
    rc, got, err = metric(text)
    want = python_value(text)
    if want is None and (rc != 1 or
                         not err.startswith('ksft-perfmon-nl: metric: ')):
        bad.append((text, rc, got, err))
    elif want is not None and (rc != 0 or got != want):
        bad.append((text, rc, got, want, err))
results.append(('metric_value_as_python_reads_it', not bad,
                f'{len(texts)} values, mismatches {bad[:5]}'))

print('TAP version 13')
k = Ktap('json')
for name, ok, info in results:
    print(f'# {info}')
    k.check(ok, name)
sys.exit(k.finish())
