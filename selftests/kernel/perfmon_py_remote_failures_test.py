#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What PerfMonitor does when its remote fails, as the netdev CI's remotes
do: a record there that cannot start, one that is slow to start, and a
connection lost while it samples. Each must end in a clear message, with
no record (or what a remote command started) left on either host.

Runs as perfmon_py_test.py does (drv_env.sh ssh KSFT_DIR failures): the
kernel's driver selftest library, its NETIF mode over veth, the remote an
sshd in a netns, reached with REMOTE_TYPE=ssh.
"""

import contextlib
import io
import json
import os
import shlex
import tempfile
import time

from lib.py import ksft_run, ksft_exit, ksft_eq, ksft_in, ksft_pr
from lib.py import KsftFailEx, NetDrvEpEnv, cmd
from ksft_perfmon import PerfMonitor, PerfMonitorError


def left(cfg, what):
    """the processes whose command line has @what, on each host (one
    kernel here, but asked of each as of two hosts)"""
    # pgrep -f matches its own shell's command line too: not [x]
    pat = f"[{what[0]}]{what[1:]}"
    return (cmd(["pgrep", "-af", pat], fail=False).stdout.strip(),
            cmd(f"pgrep -af {shlex.quote(pat)}", fail=False,
                host=cfg.remote).stdout.strip())


def nothing_left(cfg, what="ksft-perfmon-nl record"):
    """none, within 3 s: a record stopped takes a moment to end"""
    end = time.monotonic() + 3
    while any(found := left(cfg, what)) and time.monotonic() < end:
        time.sleep(0.2)
    ksft_eq(found, ("", ""), f"still running: {what}")


def record_cannot_start(cfg):
    """the remote's netdev is not there: record says so and exits"""
    remote_ifname = cfg.remote_ifname
    cfg.remote_ifname = "kpm-none"
    try:
        with PerfMonitor(cfg, interval_ms=100):
            raise KsftFailEx("PerfMonitor started")
    except PerfMonitorError as e:
        ksft_pr(f"PerfMonitorError: {e}")
        ksft_in("ksft-perfmon-nl record on remote did not start", str(e))
        ksft_in("kpm-none", str(e))
    finally:
        cfg.remote_ifname = remote_ifname
    nothing_left(cfg)


def record_slow_to_start(cfg):
    """a remote whose record would start after 40 s, 3 s allowed"""
    with tempfile.NamedTemporaryFile("w", suffix="-slow", delete=False) as f:
        # after its sleep, a mark that it was waited for
        f.write(f"""#!/bin/sh
case " $* " in
*" --host remote "*) sleep 40; touch "$0.waited" ;;
esac
exec {shlex.quote(os.environ["KSFT_PERFMON_NL"])} "$@"
""")
    os.chmod(f.name, 0o755)
    t0 = time.monotonic()
    try:
        with PerfMonitor(cfg, interval_ms=100, tool=f.name, ready_s=3):
            raise KsftFailEx("PerfMonitor started")
    except PerfMonitorError as e:
        took = time.monotonic() - t0
        ksft_pr(f"PerfMonitorError after {took:.1f} s: {e}")
        ksft_in("ksft-perfmon-nl record on remote not sampling after 3 s",
                str(e))
    finally:
        os.unlink(f.name)
    # the deployed copy's mark: stopped, not waited for
    waited = cmd(f"ls /tmp/*/*{os.path.basename(f.name)}.waited",
                 host=cfg.remote, fail=False).stdout.strip()
    ksft_eq(waited, "", "the remote's command was waited for")
    # the remote's shell and its sleep, and the local record
    nothing_left(cfg, "sleep 40")
    nothing_left(cfg)


def connection_lost(cfg):
    """the remote record's connection is cut while it samples"""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        with PerfMonitor(cfg, interval_ms=100) as mon:
            rpid = mon._recorders[1].pid
            # the sshd that serves it: killed, its TCP connection goes
            sshd = cmd(f"ps -o ppid= -p {rpid}",
                       host=cfg.remote).stdout.strip()
            what = cmd(f"ps -o args= -p {sshd}", host=cfg.remote).stdout
            time.sleep(0.5)
            cmd(f"kill -KILL {sshd}", host=cfg.remote)
            time.sleep(1)
    lines = out.getvalue().splitlines()
    said = [x for x in lines if x.startswith("# ksft-perfmon-nl record")]
    hosts = {json.loads(x.split(": ", 1)[1])["host"] for x in lines
             if x.startswith("# ktap-metric-json: ")}
    ksft_pr(f"killed {sshd} ({what.strip()}); then: {said}, and "
            f"observations of {sorted(hosts)}")
    ksft_in("sshd", what)
    # and ssh's own words after it
    ksft_eq([x.split(": its connection was lost")[0] for x in said],
            ["# ksft-perfmon-nl record on remote exited 255"])
    ksft_in("local", hosts)
    nothing_left(cfg)


def main() -> None:
    with NetDrvEpEnv(__file__) as cfg:
        ksft_run([record_cannot_start, record_slow_to_start,
                  connection_lost], args=(cfg,))
    ksft_exit()


if __name__ == "__main__":
    main()
