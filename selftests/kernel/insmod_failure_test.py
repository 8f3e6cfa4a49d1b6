#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A load that fails leaves nothing a user could have reached.

insmod with ifindex= of a netdev that does not exist must fail, and while
it runs the generic netlink family must never have existed: a family
registered before the failure would let a dump start in a module about to
be freed. genetlink announces every family it registers and unregisters
to nlctrl's "notify" group, so listening there sees even a family that
lived for a microsecond.

usage: insmod_failure_test.py MODULE    (KTAP; the module must not be loaded)
"""

import os
import socket
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
from ktap import Ktap   # noqa: E402

NETLINK_GENERIC = 16
SOL_NETLINK = 270
NETLINK_ADD_MEMBERSHIP = 1
GENL_ID_CTRL = 16          # nlctrl, and the id of its "notify" group
CTRL_CMD_NEWFAMILY, CTRL_CMD_DELFAMILY = 1, 2
CTRL_ATTR_FAMILY_NAME = 2
FAMILY = 'ksft_perfmon'


def events(sock):
    """(cmd, family name) of every nlctrl notification queued on @sock"""
    out = []
    while True:
        try:
            buf = sock.recv(65536, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return out
        off = 0
        while off + 16 <= len(buf):
            length, mtype = struct.unpack_from('=IH', buf, off)
            if mtype == GENL_ID_CTRL:
                cmd = buf[off + 16]
                a = off + 20
                while a + 4 <= off + length:
                    alen, atype = struct.unpack_from('=HH', buf, a)
                    if atype == CTRL_ATTR_FAMILY_NAME:
                        name = buf[a + 4:a + alen].rstrip(b'\0').decode()
                        out.append((cmd, name))
                    a += (alen + 3) & ~3
            off += (length + 3) & ~3


def main():
    module = sys.argv[1]
    results = []
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    sock.bind((0, 0))
    sock.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, GENL_ID_CTRL)

    rounds, seen = 20, []
    for _ in range(rounds):
        r = subprocess.run(['insmod', module, 'ifindex=999999'],
                           capture_output=True, text=True)
        if r.returncode == 0:
            subprocess.run(['rmmod', 'ksft_perfmon'])
            results.append(('insmod_with_absent_ifindex_fails', False,
                            'insmod succeeded'))
            break
        seen += [e for e in events(sock) if e[1] == FAMILY]
    else:
        results.append(('insmod_with_absent_ifindex_fails', True, ''))
    results.append(('family_never_registered', not seen,
                    f'{len(seen)} nlctrl events: {seen[:4]}'))
    loaded = any(line.split()[0] == FAMILY
                 for line in open('/proc/modules'))
    results.append(('module_not_left_loaded', not loaded, ''))

    # a load-time session over a limit says which, in the kernel log
    r = subprocess.run(['insmod', module, 'interval_ms=1', 'read_budget=1'],
                       capture_output=True, text=True)
    if r.returncode == 0:
        subprocess.run(['rmmod', 'ksft_perfmon'])
    log = subprocess.run(['dmesg'], capture_output=True, text=True).stdout
    line = [x for x in log.splitlines()
            if 'cannot start the session' in x][-1:]
    results.append(('load_time_session_refusal_names_the_limit',
                    r.returncode != 0 and line and
                    'reads/s is over the 1 left of read_budget=1' in line[0],
                    f'insmod {r.returncode}; {line}'))
    if line:
        print(f'# {line[0]}')

    # the listener itself works: a load that succeeds is announced
    r = subprocess.run(['insmod', module], capture_output=True, text=True)
    ok = r.returncode == 0
    if ok:
        subprocess.run(['rmmod', 'ksft_perfmon'])
    got = [e for e in events(sock) if e[1] == FAMILY]
    results.append(('listener_hears_a_load_that_succeeds',
                    ok and (CTRL_CMD_NEWFAMILY, FAMILY) in got and
                    (CTRL_CMD_DELFAMILY, FAMILY) in got,
                    f'insmod {r.returncode} {r.stderr.strip()}; {got}'))

    print(f'# {rounds} failed loads watched')
    k = Ktap('')
    for name, ok, why in results:
        k.check(ok, name, why)
    return k.finish()


if __name__ == '__main__':
    sys.exit(main())
