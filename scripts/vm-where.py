#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Say where a guest that does not finish is, through QEMU's human monitor:
ask the guest's kernel for its blocked tasks and every CPU's backtrace
(SysRq w and l, on the console), then print each vCPU's instruction
pointer, by symbol when a System.map is given (the guest runs nokaslr).

usage: vm-where.py MONITOR_SOCKET [SYSTEM_MAP]
"""

import bisect
import re
import socket
import sys
import time


def command(sock, line):
    """an HMP command's output, up to the next prompt"""
    sock.sendall(line.encode() + b'\n')
    out = b''
    deadline = time.monotonic() + 10
    while not out.endswith(b'(qemu) ') and time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        if not chunk:
            break
        out += chunk
    return out.decode(errors='replace')


def symbols(path):
    addrs, names = [], []
    with open(path) as f:
        for line in f:
            a, kind, name = line.split()[:3]
            if kind in 'tTwW':
                addrs.append(int(a, 16))
                names.append(name)
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


def main():
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(1)
    sock.connect(sys.argv[1])
    command(sock, '')  # the banner
    for key in ('9', 'w', 'l'):
        command(sock, f'sendkey alt-sysrq-{key}')
        time.sleep(5)
    syms = symbols(sys.argv[2]) if len(sys.argv) > 2 else None
    regs = command(sock, 'info registers -a')
    for cpu, rip in re.findall(r'CPU#(\d+).*?RIP=([0-9a-f]+)', regs, re.S):
        where = ''
        ip = int(rip, 16)
        if syms:
            i = bisect.bisect_right(syms[0], ip) - 1
            if i >= 0:
                where = f' {syms[1][i]}+{ip - syms[0][i]:#x}'
        print(f'vm.sh: vCPU {cpu} at {rip}{where}')


if __name__ == '__main__':
    main()
