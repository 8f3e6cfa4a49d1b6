#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""What the module's requests call in the kernel, counted by kprobes
(tracefs's kprobe_profile, its hits of each probe):

- a session-get dump by a reader without CAP_NET_ADMIN, while 208
  sessions of other sockets exist, none of which it may see: the
  capability check (cap_capable()) once for the dump, in its start,
  not once for every session it passes over in every part. A check that
  fails may be audited: one record a session would flood the audit log of
  the host being measured.
- 200 sample-get dumps of a session, one after another: their copies of
  the samples come from the session's readers' buffer, so no dump
  allocates (kvmalloc()) a buffer of its own, as each used to, which
  churns vmalloc on the host being measured once a sample is larger than
  a few pages.

Other tasks of the guest may hit the probes meanwhile: the bounds leave
them 20, where the calls counted would be 200 or more.

Needs the module loaded, root, and kprobe events (CONFIG_KPROBE_EVENTS),
on one CPU: a probe is an int3 written into the kernel's text, which
other vCPUs that run it meanwhile may execute from a stale translation
under TCG (an "Oops: int3" in the guest); the suite runs it in its guest
of one vCPU.

usage: calls_test.py
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
import kpm_genl   # noqa: E402
from kpm_genl import Genl, session_del, session_new  # noqa: E402
from ktap import Ktap, skip_all   # noqa: E402

TRACING = '/sys/kernel/tracing'
SOCKETS = 13		# of 16 sessions each, a socket's most
NOISE = 20


def tracefs():
    if not os.path.exists(os.path.join(TRACING, 'kprobe_events')):
        subprocess.run(['mount', '-t', 'tracefs', 'nodev', TRACING])
    return os.path.exists(os.path.join(TRACING, 'kprobe_events'))


class Probe:
    """a kprobe on @func, enabled, its hits so far"""

    def __init__(self, name, func):
        self.name = name
        self._events(f'p:{name} {func}\n')
        self._enable('1')

    @staticmethod
    def _events(line):
        # appended as echo >> does: tracefs refuses the seek of 'a'
        fd = os.open(os.path.join(TRACING, 'kprobe_events'),
                     os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    def _enable(self, v):
        with open(os.path.join(TRACING, 'events', 'kprobes', self.name,
                               'enable'), 'w') as f:
            f.write(v)

    def hits(self):
        for line in open(os.path.join(TRACING, 'kprobe_profile')):
            f = line.split()
            if f and f[0] == self.name:
                return int(f[1])
        raise LookupError(self.name)

    def remove(self):
        self._enable('0')
        self._events(f'-:{self.name}\n')


def unprivileged_dump_count(probe):
    """(sessions seen, probe hits) of a session-get dump by nobody: the
    hits counted here, between the child's word that it is nobody now
    (setresuid() checks capabilities too) and its word that the dump is
    over"""
    to_parent, to_child = os.pipe(), os.pipe()
    pid = os.fork()
    if not pid:
        seen = -1
        try:
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            g = Genl()
            os.write(to_parent[1], b'r')
            os.read(to_child[0], 1)
            seen = len(g.request(kpm_genl.OPS['session-get'], [], dump=True))
        except Exception as e:   # noqa: BLE001: said, and the test fails
            print(f'# the unprivileged reader: {e!r}', flush=True)
        finally:
            os.write(to_parent[1], f'{seen}'.encode())
            os._exit(0)
    ready = os.read(to_parent[0], 1)
    before = probe.hits()
    os.write(to_child[1], b'g')
    out = os.read(to_parent[0], 64).decode()
    hits = probe.hits() - before
    os.waitpid(pid, 0)
    if ready != b'r' or not out.lstrip('-').isdigit() or int(out) < 0:
        return None, None
    return int(out), hits


def capability_once(c):
    socks = [Genl() for _ in range(SOCKETS)]
    ids = [(g, session_new(g, 60_000_000_000, 2)) for g in socks
           for _ in range(16)]
    probe = Probe('kpm_cap', 'cap_capable')
    try:
        seen, hits = unprivileged_dump_count(probe)
    finally:
        probe.remove()
        for g, sid in ids:
            session_del(g, sid)
    print(f'# a dump by nobody among {len(ids)} sessions: saw {seen}, '
          f'cap_capable() {hits} times')
    c.check(seen == 0 and hits is not None and hits < NOISE,
            'capability_checked_once_a_dump',
            f'saw {seen}, {hits} checks for {len(ids)} sessions')


def no_buffer_a_dump(c):
    g = Genl()
    sid = session_new(g, 10_000_000, 64)
    smp = kpm_genl.A['sample']
    req = [(smp['session-id'], sid.to_bytes(4, sys.byteorder))]
    g.request(kpm_genl.OPS['sample-get'], req, dump=True)
    probe = Probe('kpm_kvmalloc', '__kvmalloc_node_noprof')
    try:
        before = probe.hits()
        n = sum(len(g.request(kpm_genl.OPS['sample-get'], req, dump=True))
                for _ in range(200))
        hits = probe.hits() - before
    finally:
        probe.remove()
        session_del(g, sid)
    print(f'# 200 sample-get dumps, {n} messages: kvmalloc() {hits} times')
    c.check(n >= 200 and hits < NOISE, 'no_buffer_allocated_a_dump',
            f'{hits} kvmalloc() in 200 dumps')


def main():
    c = Ktap('calls')
    if not tracefs() or not os.path.exists(
            os.path.join(TRACING, 'kprobe_profile')):
        return skip_all('no kprobe events (CONFIG_KPROBE_EVENTS)')
    capability_once(c)
    no_buffer_a_dump(c)
    return c.finish()


if __name__ == '__main__':
    sys.exit(main())
