#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ksft-perfmon-nl replay on spools this test writes byte by byte, with
the layout lib/spool_layout prints for the build of the tools: a good
one replays to the values written into it; one whose bool bytes, host
label or sequence numbers are wrong is refused with a message naming
what, and no line is made of it. KTAP output; non-zero exit when a test
failed.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'lib', 'py'))
from ktap import run_all   # noqa: E402

TOOLS = os.path.abspath(os.environ.get('KPM_TOOLS',
                                      os.path.join(HERE, '..', '..', 'tools')))
TOOL = os.path.join(TOOLS, 'ksft-perfmon-nl')
LAYOUT = json.loads(subprocess.run([os.path.join(HERE, '..', 'lib',
                                                 'spool_layout')],
                                   capture_output=True, text=True,
                                   check=True).stdout)
U64_MAX = (1 << 64) - 1
CPUS = 2
NS = 1000000000


def put(buf, off, fmt, *v):
    struct.pack_into('<' + fmt, buf, off, *v)


def head(host=b'local', cpu_net=1, **over):
    """the spool's head for a session of CPUS CPUs, one netdev of one
    queue, with cpu-net and queue metrics"""
    L, S = LAYOUT['head'], LAYOUT['session']
    b = bytearray(L['size'])
    b[:8] = b'KPMSPOL1'
    put(b, L['sizes'], '5I', *LAYOUT['sizes'])
    put(b, L['host_len'], 'I', over.get('host_len', len(host)))
    put(b, L['metrics'], 'I', LAYOUT['M_CPU_NET'] | LAYOUT['M_QUEUE'])
    s = L['s']
    put(b, s + S['id'], 'I', 1)
    put(b, s + S['interval'], 'Q', NS)
    put(b, s + S['cpus'], 'I', CPUS)
    b[s + S['cpu_net']] = cpu_net
    put(b, s + S['queues'], 'I', 1)
    put(b, s + S['ndevs'], 'I', 1)
    put(b, s + S['ifindex'], 'I', 7)
    return bytes(b) + host


def sample(seq, i, bad=None):
    """sample @seq, the @i-th, its counters i seconds of CPU time and i
    packets; @bad: (struct, field) whose bool byte is 2"""
    smp, cs, ds, qs = (LAYOUT[k] for k in ('sample', 'cpu_stats',
                                           'dev_stats', 'dev_qstats'))

    def flag(b, name, field):
        b[cs[field] if name == 'cpu_stats' else
          ds[field] if name == 'dev_stats' else qs[field]] = \
            2 if bad == (name, field) else 1

    h = bytearray(smp['size'] + smp['ndevs_size'])
    put(h, smp['seq'], 'Q', seq)
    put(h, smp['time'], 'Q', (i + 1) * NS)
    put(h, smp['size'], {4: 'I', 8: 'Q'}[smp['ndevs_size']], 1)
    d = bytearray(ds['size'])
    for f in ('present',):
        flag(d, 'dev_stats', f)
    d[ds['gone']] = 2 if bad == ('dev_stats', 'gone') else 0
    put(d, ds['ifindex'], 'I', 7)
    put(d, ds['time'], 'Q', (i + 1) * NS)
    put(d, ds['v'], 'Q', i * 100)
    cpus = b''
    for _ in range(CPUS):
        c = bytearray(cs['size'])
        flag(c, 'cpu_stats', 'present')
        flag(c, 'cpu_stats', 'online')
        for t in range(LAYOUT['T_NR']):
            put(c, cs['t'] + 8 * t, 'Q', i * NS)
        cpus += bytes(c)
    q = bytearray(qs['size'])
    flag(q, 'dev_qstats', 'read')
    for f in ('skipped', 'over_budget', 'mapped', 'map_skipped'):
        q[qs[f]] = 2 if bad == ('dev_qstats', f) else 0
    put(q, qs['time'], 'Q', (i + 1) * NS)
    put(q, qs['rx_queues'], 'I', 1)
    put(q, qs['tx_queues'], 'I', 1)
    queues = bytes(2 * LAYOUT['queue_stats']['size'])
    return bytes(h) + bytes(d) + cpus + bytes(q) + queues


def replay(data, *args):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, 'spool')
        with open(path, 'wb') as f:
            f.write(data)
        return subprocess.run([TOOL, 'replay', *args, path],
                              capture_output=True, text=True)


def obs_lines(out):
    """the observations in @out, None for one cut short"""
    tag, rows = '# ktap-metric-json: ', []
    for x in out.splitlines():
        if x.startswith(tag):
            try:
                rows.append(json.loads(x[len(tag):]))
            except ValueError:
                rows.append(None)
    return rows


def a_good_spool_replays(t):
    """the control: the values written come out, so the layout is the
    tool's, and each bad spool below differs from it in one thing"""
    p = replay(head() + b''.join(sample(i, i) for i in range(3)))
    rows = obs_lines(p.stdout)
    sys_ = [(r['time'], r['value']) for r in rows
            if r and r['name'] == 'cpu.time.sys']
    host = {r and r.get('host') for r in rows}
    t.check(p.returncode == 0 and p.stderr == '' and host == {'local'} and
            sys_ == [(1, [0, 0]), (2, [1, 1]), (3, [2, 2])],
            f'exit {p.returncode}: {p.stderr!r} cpu.time.sys {sys_} '
            f'hosts {host}')
    raw = replay(head() + sample(0, 0), '--raw')
    t.check(raw.returncode == 0 and '"seq":0' in raw.stdout,
            f'--raw: exit {raw.returncode}: {raw.stderr!r} {raw.stdout!r}')


def bools_checked_as_read(t):
    """a bool byte of 2 in any struct of the spool is refused, naming
    the field, and no observation is written after the sample before"""
    fields = [('cpu_stats', 'present'), ('cpu_stats', 'online'),
              ('dev_stats', 'present'), ('dev_stats', 'gone'),
              ('dev_qstats', 'read'), ('dev_qstats', 'skipped'),
              ('dev_qstats', 'over_budget'), ('dev_qstats', 'mapped'),
              ('dev_qstats', 'map_skipped')]
    for bad in fields:
        for args in ((), ('--raw',)):
            p = replay(head() + sample(0, 0) + sample(1, 1, bad), *args)
            made = ('"seq":1' in p.stdout if args else
                    any(not r or r['time'] >= 2 for r in obs_lines(p.stdout)))
            t.check(p.returncode == 1 and not made and
                    f'{bad[1]} is neither true nor false' in p.stderr,
                    f'{bad} {args}: exit {p.returncode}: {p.stderr!r}, '
                    f'lines of the sample: {made}')
    p = replay(head(cpu_net=2) + sample(0, 0))
    t.check(p.returncode == 1 and 'cpu_net is neither true nor false'
            in p.stderr and p.stdout == '',
            f'session.cpu_net: exit {p.returncode}: {p.stderr!r}')


def host_label_checked(t):
    """the head's host label is what --host takes, 1 to 255 bytes of
    UTF-8 with no NUL, or the spool is refused saying so"""
    for host, why in ((b'\xff\xfe', 'not UTF-8'),
                      (b'lo\0cal', 'a NUL byte'),
                      (b'x' * 256, '256 bytes; a label has 1 to 255')):
        p = replay(head(host) + sample(0, 0))
        t.check(p.returncode == 1 and why in p.stderr and
                'out of memory' not in p.stderr and p.stdout == '',
                f'{host[:8]!r}: exit {p.returncode}: {p.stderr!r}')
    p = replay(head('ünï'.encode()) + sample(0, 0))
    t.check(p.returncode == 0 and
            {r and r['host'] for r in obs_lines(p.stdout)} == {'ünï'},
            f'UTF-8: exit {p.returncode}: {p.stderr!r}')


def sequence_numbers(t):
    """gaps are counted from each sample to the next, not from where
    the counting would wrap: 0, 2^64-1 loses 2^64-2 samples, and 2 after
    it does not increase"""
    p = replay(head() + sample(0, 0) + sample(U64_MAX, 1) + sample(2, 2))
    t.check(p.returncode == 1 and 'which does not increase' in p.stderr,
            f'0, 2^64-1, 2: exit {p.returncode}: {p.stderr!r}')
    p = replay(head() + sample(0, 0) + sample(U64_MAX, 1))
    lost = f'{U64_MAX - 1} samples lost between the spooled ones'
    t.check(p.returncode == 3 and lost in p.stdout,
            f'0, 2^64-1: exit {p.returncode}: {p.stderr!r} '
            f'{p.stdout.splitlines()[-3:]}')
    p = replay(head() + sample(0, 0) + sample(5, 1) + sample(6, 2))
    t.check(p.returncode == 3 and
            '4 samples lost between the spooled ones' in p.stdout,
            f'0, 5, 6: exit {p.returncode}: {p.stderr!r}')
    p = replay(head() + sample(3, 0) + sample(3, 1))
    t.check(p.returncode == 1 and 'which does not increase' in p.stderr,
            f'3, 3: exit {p.returncode}: {p.stderr!r}')


TESTS = [a_good_spool_replays, bools_checked_as_read, host_label_checked,
         sequence_numbers]


def main():
    return run_all('replay', TESTS)


if __name__ == '__main__':
    sys.exit(main())
