#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A KTAP program of known cases, for record --ktap (record_ktap_test.py).

Its standard output is Python's own: into a pipe, block-buffered, as a
kselftest's is. It prints the same bytes on every run, so that a run
under record can be compared with one alone; what it measures goes to
SIDE.

usage: record_ktap_prog.py timing CPU SIDE
         on CPU, a program of two levels: "phases", whose three cases
         sleep, spin and sleep 0.6 s each (SIDE gets the CPU time of the
         spin, as "spin SECONDS"), then a case at the top that sleeps
       record_ktap_prog.py stream
         fast lines, a line of 1 MiB, and a result line written in parts
       record_ktap_prog.py exit
         a result, then the start of a line, and an exit with status 3
       record_ktap_prog.py undecided
         the same, the line the start of a result line's
       record_ktap_prog.py kill
         the same as exit, then SIGKILL to itself
"""

import os
import signal
import sys
import time

PHASE = 0.6


def spin(s):
    t0 = time.thread_time()
    while time.thread_time() - t0 < s:
        pass
    return time.thread_time() - t0


def timing(cpu, side):
    os.sched_setaffinity(0, {cpu})
    print('TAP version 13')
    print('1..2')
    print('# TAP version 13')
    print('# 1..3')
    time.sleep(PHASE)
    print('# ok 1 phases.sleep_before')
    spun = spin(PHASE)
    print('# ok 2 phases.spin')
    time.sleep(PHASE)
    print('# ok 3 phases.sleep_after')
    print('ok 1 phases')
    time.sleep(PHASE)
    print('ok 2 sleep_at_top')
    with open(side, 'w') as f:
        f.write(f'spin {spun}\n')


def write(s):
    os.write(1, s.encode())


def stream():
    write('TAP version 13\n1..3\n')
    write(''.join(f'# line {i} of a fast burst\n' for i in range(20000)))
    write('# ' + 'x' * (1 << 20) + '\n')
    time.sleep(0.3)
    write('ok 1 burst\n')
    time.sleep(0.3)
    # a result line in parts, each a write of its own
    for part in ('o', 'k', ' 2', ' parts', '\n'):
        write(part)
        time.sleep(0.05)
    write('# a line that looks like one: ok 3 not_a_result\n')
    time.sleep(0.3)
    write('not ok 3 last # with a comment\n')


def ending(how):
    print('TAP version 13')
    print('1..2')
    time.sleep(0.3)
    print('ok 1 before_the_end')
    print('not o' if how == 'undecided' else '# cut short, no newline',
          end='')
    sys.stdout.flush()
    time.sleep(0.3)
    if how == 'kill':
        os.kill(os.getpid(), signal.SIGKILL)
    sys.exit(3)


def main():
    mode = sys.argv[1]
    if mode == 'timing':
        timing(int(sys.argv[2]), sys.argv[3])
    elif mode == 'stream':
        stream()
    else:
        ending(mode)


if __name__ == '__main__':
    main()
