# SPDX-License-Identifier: GPL-2.0
"""The ksft_perfmon family from Python with no library but the spec: its
attribute and operation numbers as YNL gives them, a generic netlink
socket, and the decoding of sessions and samples. The tests that check the
kernel's raw values decode them here, apart from the tool's C decoder.
"""

import os
import socket
import struct

import yaml

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')
SPEC = os.path.join(TOP, 'Documentation', 'netlink', 'specs',
                    'ksft_perfmon.yaml')


def spec_ids():
    """{set: {attribute: id}}, {operation: id}, as YNL numbers them"""
    spec = yaml.safe_load(open(SPEC))
    sets = {}
    for s in spec['attribute-sets']:
        n, ids = 0, {}
        for a in s['attributes']:
            n = a.get('value', n + 1)
            ids[a['name']] = n
        sets[s['name']] = ids
    ops = {o['name']: i + 1 for i, o in enumerate(spec['operations']['list'])}
    return sets, ops


A, OPS = spec_ids()


def attrs(buf):
    """(type, payload) of the attributes in @buf"""
    off = 0
    while off + 4 <= len(buf):
        alen, atype = struct.unpack_from('=HH', buf, off)
        yield atype & 0x3fff, buf[off + 4:off + alen]
        off += (alen + 3) & ~3


def uint(b):
    return struct.unpack('=Q' if len(b) == 8 else '=I', b)[0]


def nest(buf, aset):
    """the attributes of @buf in attribute set @aset: {name: value}, a
    flag True, every other one an integer"""
    names = {v: k for k, v in A[aset].items()}
    return {names[t]: (True if not p else uint(p))
            for t, p in attrs(buf) if t in names}


class Genl:
    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
        self.sock.bind((0, 0))
        self.seq = 0
        self.family = 0x10      # GENL_ID_CTRL
        # CTRL_CMD_GETFAMILY by CTRL_ATTR_FAMILY_NAME: CTRL_ATTR_FAMILY_ID
        (reply,) = self.request(3, [(2, b'ksft_perfmon\0')])
        self.family = struct.unpack('=H', dict(attrs(reply))[1][:2])[0]

    def request(self, cmd, req, dump=False, ack=False):
        """the payloads of the replies; OSError for an error. With @ack,
        for a request with no reply, until its ACK"""
        body = b''
        for typ, data in req:
            body += struct.pack('=HH', 4 + len(data), typ) + data
            body += b'\0' * (-len(body) % 4)
        self.seq += 1
        # NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP
        flags = 1 | (4 if ack else 0) | (0x300 if dump else 0)
        msg = struct.pack('=BBH', cmd, 1, 0) + body
        self.sock.send(struct.pack('=IHHII', 16 + len(msg), self.family,
                                   flags, self.seq, 0) + msg)
        out = []
        while True:
            buf, off = self.sock.recv(1 << 20), 0
            while off < len(buf):
                length, mtype = struct.unpack_from('=IH', buf, off)
                if mtype == 2:              # NLMSG_ERROR
                    err = -struct.unpack_from('=i', buf, off + 16)[0]
                    if err:
                        raise OSError(err, os.strerror(err))
                    return out
                if mtype == 3:              # NLMSG_DONE
                    return out
                out.append(buf[off + 20:off + length])
                off += (length + 3) & ~3
            if not dump and not ack:
                return out


def session_new(g, interval_ns, ring, cpu_net=False, ifindex=(), queues=0,
                dev_interval_ns=0):
    s = A['session']
    req = [(s['interval'], struct.pack('=Q', interval_ns)),
           (s['ring-size'], struct.pack('=I', ring))]
    req += [(s['ifindex'], struct.pack('=I', i)) for i in ifindex]
    if cpu_net:
        req.append((s['cpu-net'], b''))
    if queues:
        req.append((s['queues'], struct.pack('=I', queues)))
    if dev_interval_ns:
        req.append((s['dev-interval'], struct.pack('=Q', dev_interval_ns)))
    (reply,) = g.request(OPS['session-new'], req)
    return uint(dict(attrs(reply))[s['id']])


def session_get(g, sid):
    s = A['session']
    (reply,) = g.request(OPS['session-get'], [(s['id'], struct.pack('=I', sid))])
    names = {v: k for k, v in s.items()}
    return {names[t]: (True if not p else uint(p) if len(p) in (4, 8) else p)
            for t, p in attrs(reply) if t in names}


def session_del(g, sid):
    g.request(OPS['session-del'], [(A['session']['id'], struct.pack('=I', sid))],
              ack=True)


def samples(g, sid):
    """{seq: {'time': ns, 'cost': ns, 'delay': ns, 'dev-read': n,
    'cpu': {id: {...}},
    'dev': [{...}], 'qstats': [{...}], 'queue': [{...}]}}, whole samples,
    their parts put together; times in CLOCK_MONOTONIC ns, as
    time.monotonic_ns()"""
    smp = A['sample']
    nests = {smp['dev']: ('dev', 'dev-stats'),
             smp['qstats']: ('qstats', 'qstats'),
             smp['queue']: ('queue', 'qstats')}
    out = {}
    for reply in g.request(OPS['sample-get'],
                           [(smp['session-id'], struct.pack('=I', sid))],
                           dump=True):
        top = list(attrs(reply))
        seq = next(uint(p) for t, p in top if t == smp['seq'])
        s = out.setdefault(seq, {'cpu': {}, 'dev': [], 'qstats': [],
                                 'queue': []})
        for t, p in top:
            if t in (smp['time'], smp['cost'], smp['delay'],
                     smp['dev-read']):
                s[next(k for k in ('time', 'cost', 'delay', 'dev-read')
                       if smp[k] == t)] = uint(p)
            elif t == smp['cpu']:
                cpu = nest(p, 'cpu-stats')
                s['cpu'][cpu['id']] = cpu
            elif t in nests:
                key, aset = nests[t]
                s[key].append(nest(p, aset))
    return out
