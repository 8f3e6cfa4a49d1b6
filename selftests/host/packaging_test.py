#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make install into a DESTDIR, then check what it installed against the
tools themselves: every option of every command's --help is in its man
page (as man renders it) and in the bash completion of that command, the
completion offers nothing --help does not know, and the installed tools
run. Builds the docs on the way (make docs, warnings being errors).
Prints KTAP.
"""

import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
from ktap import Ktap   # noqa: E402

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
NL_CMDS = ('record', 'show', 'dump', 'metric', 'replay', 'clock', 'link', 'top')
LONG = re.compile(r'(?<![\w-])--[a-z][a-z-]*')
# an option's line in --help: "  -i, --ifname NAME  ..."
OPTION_LINE = re.compile(r'^ +(?:-\w, )?(--[a-z][a-z-]*)', re.M)


def run(*args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def long_opts(text):
    """the options a --help lists, one a line"""
    return set(OPTION_LINE.findall(text))


def man_text(path):
    p = run('man', '-l', path, env=dict(os.environ, MANWIDTH='200'))
    return re.sub(r'.\x08', '', p.stdout)


def complete(completion, words):
    """COMPREPLY of the completion function for @words (the last one the
    word being completed)"""
    script = (f'source {completion}\n'
              f'COMP_WORDS=({" ".join(words)})\n'
              f'COMP_CWORD={len(words) - 1}\n'
              '_ksft_perfmon_nl\n'
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    return set(run('bash', '-c', script).stdout.split())


def main():
    print('TAP version 13')
    c = Ktap('install')
    dest = tempfile.mkdtemp()
    p = run('make', '-s', 'install', f'DESTDIR={dest}', 'PREFIX=/usr',
            cwd=TOP)
    print(f'# make install: exit {p.returncode} {p.stderr.strip()[-300:]}')
    want = ['usr/sbin/ksft-perfmon-nl', 'usr/bin/ksft-perfmon-report',
            'usr/share/man/man8/ksft-perfmon-nl.8',
            'usr/share/man/man1/ksft-perfmon-report.1',
            'usr/share/ynl/specs/ksft_perfmon.yaml',
            'usr/share/bash-completion/completions/ksft-perfmon-nl']
    got = sorted(os.path.relpath(os.path.join(d, f), dest)
                 for d, _, fs in os.walk(dest) for f in fs)
    c.check(p.returncode == 0 and got == sorted(want), 'destdir_has_all',
            f'{got}')
    nl = os.path.join(dest, want[0])
    report = os.path.join(dest, want[1])

    helps = {cmd: run(nl, cmd, '--help').stdout for cmd in NL_CMDS}
    c.check(all(long_opts(h) for h in helps.values()), 'installed_tool_runs',
            f'{helps}')
    man = man_text(os.path.join(dest, want[2]))
    missing = {cmd: long_opts(h) - set(LONG.findall(man))
               for cmd, h in helps.items()}
    c.check(man and not any(missing.values()), 'nl_man_page_has_every_option',
            f'not in ksft-perfmon-nl(8): {missing}')
    rhelp = run(report, '--help').stdout
    rman = man_text(os.path.join(dest, want[3]))
    rmissing = long_opts(rhelp) - set(LONG.findall(rman))
    c.check(long_opts(rhelp) and rman and not rmissing,
            'report_man_page_has_every_option',
            f'not in ksft-perfmon-report(1): {rmissing}')
    print('# ' + next((line.strip() for line in man.splitlines()
                      if 'ksft-perfmon-nl -' in line), 'no NAME line'))

    comp = os.path.join(dest, want[5])
    cmds = complete(comp, ['ksft-perfmon-nl', "''"])
    c.check(cmds == set(NL_CMDS) | {'--help'}, 'completion_commands',
            f'{cmds}')
    diff = {}
    for cmd, h in helps.items():
        offered = {w for w in complete(comp, ['ksft-perfmon-nl', cmd, '-'])
                   if w != '--'}
        if offered != long_opts(h):
            diff[cmd] = (sorted(offered), sorted(long_opts(h)))
    c.check(not diff, 'completion_options_equal_help', f'{diff}')
    ifs = complete(comp, ['ksft-perfmon-nl', 'record', '--ifname', "''"])
    c.check(ifs == set(os.listdir('/sys/class/net')), 'completion_ifnames',
            f'{ifs}')
    subprocess.run(['rm', '-rf', dest])
    return c.finish()


if __name__ == '__main__':
    sys.exit(main())
