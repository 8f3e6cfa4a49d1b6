#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The family driven by the kernel's YNL CLI from our spec alone, and the
JSON of ksft-perfmon-nl's -j and -p. Needs the module loaded with a
load-time session (ifindex=1 interval_ms=10), which this test deletes,
and root.

usage: ynl_cli_test.py KERNEL_SOURCE   (tools/net/ynl/pyynl/cli.py in it)
"""

import functools
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
from ktap import Ktap   # noqa: E402
from softnet_test import Genl, session_get, session_new   # noqa: E402

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
SPEC = os.path.join(TOP, 'Documentation', 'netlink', 'specs',
                    'ksft_perfmon.yaml')
TOOL = os.path.join(TOP, 'tools', 'ksft-perfmon-nl')


@functools.cache
def cli_module(ksrc):
    """the kernel's cli.py, imported: with it the YNL library and YAML"""
    pyynl = os.path.join(ksrc, 'tools', 'net', 'ynl', 'pyynl')
    # its "from lib import": the YNL library's lib, not selftests/lib
    sys.path.insert(0, pyynl)
    spec = importlib.util.spec_from_file_location(
        'ynl_cli', os.path.join(pyynl, 'cli.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cli(ksrc, op, name, attrs=None, spec=SPEC):
    """(exit status, the reply as JSON or None, stderr)

    cli.py's main() runs in a child forked from this process, as it would
    from a shell but for the interpreter's start and the imports, done once
    here: they were 4 s of each of the eight runs on the debug kernel under
    TCG. The child's exit closes its socket, and the sessions on it.

    Without the schema: ynl-gen-c.py validates the spec against it on the
    host (make check-generated), and jsonschema, in pure Python, took half
    of each run of cli.py."""
    mod = cli_module(ksrc)
    argv = ['cli.py', '--spec', spec, '--no-schema', '--output-json',
            f'--{op}', name]
    if attrs is not None:
        argv += ['--json', json.dumps(attrs)]
    with tempfile.TemporaryFile('w+') as out, \
            tempfile.TemporaryFile('w+') as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.argv = argv
                mod.main()
                status = 0
            except SystemExit as e:
                if e.code is None or isinstance(e.code, int):
                    status = e.code or 0
                else:
                    print(e.code, file=sys.stderr)
            except BaseException:
                traceback.print_exc()
            finally:
                # never back into the test's own code
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(status)
        _, wstatus = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    try:
        reply = json.loads(stdout) if stdout.strip() else None
    except json.JSONDecodeError:
        reply = None
    # cli.py prints a netlink error, with its extack, on stdout
    return (os.waitstatus_to_exitcode(wstatus), reply,
            (stderr + (stdout if reply is None else '')).strip())


def tool(*args, prefix=()):
    p = subprocess.run([*prefix, TOOL, *args], capture_output=True, text=True)
    return p.returncode, p.stdout


def tool_err(*args, prefix=()):
    """(exit status, stderr) of the tool run after @prefix"""
    p = subprocess.run([*prefix, TOOL, *args], capture_output=True, text=True)
    return p.returncode, p.stderr.strip()


def reassemble(parts):
    """({seq: {'cpu': {id: attrs}, 'dev': [attrs]}}, counters carried,
    error) of the parts of a sample-get dump as cli.py decodes them. A
    sample with a base-seq starts from that sample, which must be the one
    before it in the dump; a netdev that is gone has no counters."""
    samples, prev, cur, counters = {}, None, None, 0
    for p in parts:
        seq = p['seq']
        if cur is None:
            base = None
            if 'base-seq' in p:
                if not prev or p['base-seq'] != prev['seq']:
                    return None, 0, (f'sample {seq} on {p["base-seq"]}, '
                                     f'after {prev and prev["seq"]}')
                base = prev
            cur = {'seq': seq, 'dev': [],
                   'cpu': {k: dict(v) for k, v in base['cpu'].items()}
                   if base else {}}
        elif cur['seq'] != seq:
            return None, 0, f'sample {seq} within {cur["seq"]}'
        for x in p.get('dev', []):
            counters += sum(k not in ('ifindex', 'gone') for k in x)
            d = dict(base['dev'][len(cur['dev'])]) if base else {}
            if d and d['ifindex'] != x['ifindex']:
                return None, 0, f'sample {seq}: netdev {x} on {d}'
            d = {} if x.get('gone') or d.get('gone') else d
            d.update(x)
            d['gone'] = bool(x.get('gone'))
            cur['dev'].append(d)
        for x in p.get('cpu', []):
            counters += sum(k not in ('id', 'online') for k in x)
            c = cur['cpu'].setdefault(x['id'], {})
            c.update(x)
            c['online'] = bool(x.get('online'))
        if p.get('last-part'):
            samples[seq] = prev = cur
            cur = None
    return samples, counters, ''


def changed_only(ksrc, c):
    """sample-get with changed-only, put together again, against the same
    samples whole; and the tool's dump, which asks for changed-only,
    against them too. A session of the tool's own at 10 ms into a ring of
    4096: 40 s of samples, which both dumps share."""
    rec = subprocess.Popen([TOOL, 'record', '--interval', '10', '--ring',
                            '4096', '--duration', '600', '--ifname', 'lo'],
                           stdout=subprocess.DEVNULL)
    try:
        sid = None
        for _ in range(300):
            rc, sessions, _ = cli(ksrc, 'dump', 'session-get')
            mine = [x for x in sessions or [] if x.get('ring-size') == 4096]
            if mine and mine[0]['samples'] >= 20:
                sid = mine[0]['id']
                break
            time.sleep(0.1)
        rc1, delta, err1 = cli(ksrc, 'dump', 'sample-get',
                               {'session-id': sid, 'changed-only': True})
        rc2, whole, err2 = cli(ksrc, 'dump', 'sample-get',
                               {'session-id': sid})
        rc3, lines = tool('dump', '--id', str(sid))
    finally:
        rec.terminate()
        rec.wait()
    d, nd, errd = reassemble(delta or [])
    w, nw, errw = reassemble(whole or [])
    both = sorted(set(d or {}) & set(w or {}))
    bad = [x for x in both if d[x] != w[x]]
    c.check(sid and rc1 == 0 and rc2 == 0 and not errd and not errw and
            len(both) >= 10 and not bad and
            any('base-seq' in p for p in delta) and
            nd < nw * len(d) / len(w),
            'sample_get_changed_only_matches_whole',
            f'session {sid}, exit {rc1} {rc2} {err1} {err2} {errd} {errw}, '
            f'{len(both)} samples in both, {len(bad)} differ: '
            f'{[(d[x], w[x]) for x in bad[:1]]}')
    print(f'# changed-only: {nd} counters in {len(d or {})} samples, '
          f'whole: {nw} in {len(w or {})}; {len(both)} in both')

    # the tool's JSON names: guest_nice for guest-nice, and so on
    def ours(attrs):
        return {k.replace('-', '_'): v for k, v in attrs.items()
                if k != 'id'}
    t = {o['seq']: o for o in map(json.loads, lines.splitlines())} \
        if rc3 == 0 else {}
    both = sorted(set(t) & set(w or {}))
    bad = [x for x in both
           if [ours(v) for _, v in sorted(w[x]['cpu'].items())] !=
           [y for y in t[x]['cpus'] if y is not None] or
           [ours(v) for v in w[x]['dev']] != t[x]['devs']]
    c.check(rc3 == 0 and len(both) >= 10 and not bad,
            'tool_dump_matches_whole_samples',
            f'exit {rc3}, {len(both)} samples in both, {len(bad)} differ: '
            f'{[(t[x], w[x]) for x in bad[:1]]}')


def cpu_net(ksrc, c):
    """cli.py decodes a cpu-net session and its samples by the spec's
    names; the session is this process's, so that it outlives cli.py"""
    g = Genl()
    sid = session_new(g, 10_000_000, 64, True)
    time.sleep(0.1)
    rc, sessions, err = cli(ksrc, 'do', 'session-get', {'id': sid})
    rc2, parts, err2 = cli(ksrc, 'dump', 'sample-get', {'session-id': sid})
    g.sock.close()
    names = {k for p in parts or [] for x in p.get('cpu', []) for k in x}
    want = {'softnet-processed', 'softnet-dropped', 'softnet-time-squeeze',
            'softnet-received-rps', 'softirq-net-rx', 'softirq-net-tx'}
    c.check(rc == 0 and rc2 == 0 and sessions.get('cpu-net') is True and
            want <= names, 'cpu_net_decoded',
            f'exit {rc} {rc2}, session {sessions}, cpu attributes {names} '
            f'{err} {err2}')


def admin_ops(ksrc):
    """The family's commands that CTRL_GETFAMILY says need CAP_NET_ADMIN,
    by name, and every command it lists, read with the kernel's own nlctrl
    spec; the ids are the spec's order of operations from 1."""
    with open(SPEC) as f:
        names = [op['name'] for op in yaml.safe_load(f)['operations']['list']]
    nlctrl = os.path.join(ksrc, 'Documentation', 'netlink', 'specs',
                          'nlctrl.yaml')
    rc, fam, err = cli(ksrc, 'do', 'getfamily',
                       {'family-name': 'ksft_perfmon'}, spec=nlctrl)
    if rc or not fam:
        return None, None, err
    # an indexed-array: a list of {index: op}
    ops = {names[op['id'] - 1]: op.get('flags', [])
           for entry in fam['ops'] for op in entry.values()}
    return {n for n, fl in ops.items() if 'admin-perm' in fl}, set(ops), err


NOBODY = ('setpriv', '--reuid=65534', '--regid=65534', '--clear-groups')
READ_BUDGET = '/sys/module/ksft_perfmon/parameters/read_budget'


def self_pretty(text):
    """@text is exactly json.dumps(its own content, indent=4) and more
    than one line"""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return False
    return text == json.dumps(obj, indent=4, sort_keys=True) + '\n' and \
        text.count('\n') > 1


def main():
    ksrc = sys.argv[1]
    print('TAP version 13')
    c = Ktap('cli')

    rc, new, err = cli(ksrc, 'do', 'session-new',
                       {'ifindex': [1], 'interval': 5000000, 'ring-size': 16})
    c.check(rc == 0 and isinstance(new, dict) and new.get('id', 0) > 1,
            'session_new_replies_id', f'exit {rc} {new} {err}')
    rc, sessions, err = cli(ksrc, 'dump', 'session-get')
    ids = [s.get('id') for s in sessions or []]
    # cli.py's socket closed when it exited, and its session with it
    c.check(rc == 0 and ids == [1] and sessions[0]['interval'] == 10000000 and
            sessions[0]['ifindex'] == [1], 'session_get_dump',
            f'exit {rc} {sessions} {err}')

    # the dump below must miss samples for lost to tell anything: wait,
    # while the session takes samples, until its ring has turned over
    g = Genl()
    s1, taken = session_get(g, 1), -1
    while taken < s1['samples'] <= s1['ring-size']:
        taken = s1['samples']
        time.sleep(0.2)
        s1 = session_get(g, 1)
    g.sock.close()
    rc, samples, err = cli(ksrc, 'dump', 'sample-get', {'session-id': 1})
    # a sample that does not fit in the dump's skb goes on in the next
    # message, with the same seq: cli.py shows each message
    merged = {}
    for s in samples or []:
        m = merged.setdefault(s['seq'], {'cpu': [], 'dev': []})
        m['cpu'] += s.get('cpu', [])
        m['dev'] += s.get('dev', [])
    seqs = sorted(merged)
    cpus = {tuple(x['id'] for x in m['cpu']) for m in merged.values()}
    devs = {tuple(d['ifindex'] for d in m['dev']) for m in merged.values()}
    ncpus = sessions[0]['cpus'] if sessions else 0
    # The ring (10 ms into 128 slots) may overwrite a sample before a slow
    # cli.py reads it: a gap in seq. The kernel counts as lost what this
    # reader missed: the samples before the first one it got (its dump
    # began at 0) and the gaps between those it got, whatever was
    # overwritten after it read them.
    lost0 = sessions[0].get('lost', 0) if sessions else 0
    gaps = seqs[-1] + 1 - len(seqs) if seqs else 0     # of 0..seqs[-1]
    rc2, after, _ = cli(ksrc, 'dump', 'session-get')
    a = next((x for x in after or [] if x.get('id') == 1), {})
    c.check(rc == 0 and rc2 == 0 and len(seqs) >= 2 and seqs[0] > 0 and a and
            a.get('lost') == lost0 + gaps and
            cpus == {tuple(range(ncpus))} and devs == {(1,)},
            'sample_get_dump',
            f'exit {rc}, seqs {seqs[:3]}..{seqs[-3:]}, {gaps} not read; '
            f'lost {lost0} before the dump, {a.get("lost")} after; '
            f'CPUs {cpus}, devs {devs} {err}')
    print(f'# cli.py dumped {len(seqs)} samples of {ncpus} CPUs in '
          f'{len(samples or [])} messages')

    rc, out, err = cli(ksrc, 'do', 'session-new', {'interval': 1})
    c.check(rc != 0 and "'bad-attr': '.interval'" in err and
            'out of range' in err, 'bad_interval_refused',
            f'exit {rc} {out} {err}')
    print(f'# {err.splitlines()[-1] if err else "no error"}')

    # -j and -p of show and dump, while the load-time session lives
    rc, lines = tool('show')
    rcj, j = tool('show', '-j')
    rcp, p = tool('-p', 'show')
    arr = json.loads(j) if rcj == 0 else None
    c.check(rc == 0 and rcj == 0 and rcp == 0 and isinstance(arr, list) and
            [s['id'] for s in arr] == [1] and arr[0]['ifindex'] == [1] and
            j.count('\n') == 1 and self_pretty(p) and
            lines.startswith('session 1 '), 'tool_show_json_and_pretty',
            f'{lines!r} {j!r} {p!r}')
    # The session samples every 10 ms into a ring of 128: two dumps more
    # than 1.28 s apart, as a debug kernel beside another guest can be,
    # share no sample. Up to five pairs, for one that shares some.
    for tries in range(1, 6):
        rcl, lines = tool('dump', '--id', '1')
        rcj, j = tool('dump', '--id', '1', '--json')
        by_seq = {o['seq']: o for o in map(json.loads, lines.splitlines())}
        arr = json.loads(j) if rcj == 0 else []
        both = [o for o in arr if o['seq'] in by_seq]
        # only a gap in time, the JSON dump starting past the other's
        # end, is worth another pair; anything else is the answer
        gap = arr and by_seq and min(o['seq'] for o in arr) > max(by_seq)
        if len(both) >= 2 or not gap:
            break
    print(f'# {len(both)} samples in both dumps of pair {tries}')
    rcp, p = tool('dump', '--id', '1', '--pretty')
    c.check(rcl == 0 and rcj == 0 and rcp == 0 and len(both) >= 2 and
            all(o == by_seq[o['seq']] for o in both) and self_pretty(p),
            'tool_dump_json_and_pretty',
            f'exit {rcl} {rcj} {rcp}, {len(both)} samples in both')
    rc, _ = tool('-j', 'clock')
    c.check(rc == 2, 'tool_json_refused_elsewhere', f'exit {rc}')

    admin, ops, err = admin_ops(ksrc)
    c.check(admin == {'session-new', 'session-del'} and
            ops == {'session-new', 'session-get', 'session-del', 'sample-get'},
            'admin_perm_advertised', f'admin-perm on {admin} of {ops} {err}')

    # the refusals as the tool prints them: privilege, then the read budget
    rc, err = tool_err('record', '--duration', '0.1', prefix=NOBODY)
    c.check(rc == 1 and err == 'ksft-perfmon-nl: session-new: Operation not '
            'permitted: needs CAP_NET_ADMIN in the initial user namespace',
            'tool_refused_unprivileged', f'exit {rc} {err!r}')
    print(f'# as nobody: {err}')
    rc2, err2 = tool_err('record', '--duration', '0.1',
                         prefix=('unshare', '--map-root-user', '--net'))
    c.check(rc2 == 1 and err2 == err, 'tool_refused_userns_root',
            f'exit {rc2} {err2!r}')
    with open(READ_BUDGET) as f:
        budget = f.read().strip()
    with open(READ_BUDGET, 'w') as f:
        f.write('1\n')
    try:
        rc, err = tool_err('record', '--interval', '1', '--duration', '0.1')
    finally:
        with open(READ_BUDGET, 'w') as f:
            f.write(budget + '\n')
    c.check(rc == 1 and err.startswith('ksft-perfmon-nl: session-new: No space '
                                       'left on device: kernel reports: ') and
            err.endswith(' reads/s is over the 0 left of read_budget=1 '
                         '(attribute interval)'),
            'tool_refused_over_budget', f'exit {rc} {err!r}')
    print(f'# over the budget: {err}')

    changed_only(ksrc, c)
    cpu_net(ksrc, c)

    rc, out, err = cli(ksrc, 'do', 'session-del', {'id': 1})
    rc2, sessions, err2 = cli(ksrc, 'dump', 'session-get')
    c.check(rc == 0 and rc2 == 0 and sessions == [], 'session_del',
            f'exit {rc} {rc2} {sessions} {err} {err2}')
    return c.finish()


if __name__ == '__main__':
    sys.exit(main())
