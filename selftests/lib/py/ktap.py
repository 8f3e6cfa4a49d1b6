# SPDX-License-Identifier: GPL-2.0
"""KTAP output of the suite's Python tests, written one way.

A program makes one Ktap with the prefix of its results' names (or
none, ''), checks
as it goes (each check is a result line at once, numbered in order),
and returns finish()'s exit status, which prints the plan last::

    k = Ktap('worker')
    k.check(busy >= 0.8, 'softirq_load_kept_the_cpu_busy', f'{busy}')
    k.skip('nsim', 'no netdevsim in this kernel')
    return k.finish()

prints "ok 1 worker.softirq_load_kept_the_cpu_busy", "ok 2 worker.nsim #
SKIP no netdevsim in this kernel", "1..2", and returns 1 if a check
failed. A test case made of several checks runs with a Case of its own
(run_cases()), whose failures are diagnostics and whose result is one
line. On the host, selftests/run.sh names each result as its line does;
in a guest, guest.sh puts the step's name before it.
"""


class Case:
    """The checks of one test case: it fails if any of them fails."""

    def __init__(self, name):
        self.name = name
        self.failed = False

    def check(self, ok, what):
        if not ok:
            self.failed = True
            print(f'# {self.name}: {what}')
        return ok


class Ktap:
    """The results of one program, each printed as it is known."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.n = 0
        self.failed = 0
        self.planned = False

    def _result(self, ok, name, directive=''):
        self.n += 1
        if self.prefix:
            name = f'{self.prefix}.{name}'
        print(f'{"ok" if ok else "not ok"} {self.n} {name}{directive}')

    def check(self, ok, name, why=''):
        """One result; @why, a diagnostic line before it when it failed."""
        if not ok:
            self.failed += 1
            if why:
                print(f'# {why}')
        self._result(ok, name)
        return ok

    def skip(self, name, why):
        self._result(True, name, f' # SKIP {why}')

    def run_cases(self, funcs, case=Case, announce=False):
        """Each of @funcs called with a @case of its name, a result each;
        one that returns a string "SKIP: why" is skipped. @announce says
        when each starts, for a log of long cases."""
        for f in funcs:
            c = case(f.__name__)
            if announce:
                print(f'# {f.__name__}: start')
            why = f(c)
            if isinstance(why, str) and why.startswith('SKIP: '):
                self.skip(f.__name__, why[6:])
            else:
                self.check(not c.failed, f.__name__)

    def plan(self, n):
        """The plan first, for a program whose cases take long."""
        print(f'1..{n}')
        self.planned = True

    def finish(self, plan=True):
        """The plan, unless @plan is False or it came first, and the
        program's exit status."""
        if plan and not self.planned:
            print(f'1..{self.n}')
        return 1 if self.failed else 0


def run_all(prefix, funcs, case=Case, announce=False):
    """A program of test cases, @funcs (see Ktap.run_cases()): the
    header and the plan first, as the cases may take long, then a result
    each; returns the exit status."""
    print('TAP version 13')
    k = Ktap(prefix)
    k.plan(len(funcs))
    k.run_cases(funcs, case, announce)
    return k.finish()


def skip_all(why):
    """A program that cannot run its checks here: a plan of none."""
    print(f'1..0 # SKIP {why}')
    return 0
