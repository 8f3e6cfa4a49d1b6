#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A driver selftest as the kernel's library writes them, with
PerfMonitor around its traffic: iperf3 from the remote endpoint to us,
its per-second throughput recorded by the test, and what the CPUs and
NICs of both endpoints did recorded by ksft_perfmon.

Runs from tools/testing/selftests/drivers/net/ of a kernel tree (the
library is found relative to this file), with ksft_perfmon.py on
PYTHONPATH. NETIF and friends select a real or veth NIC; without them
the library makes two netdevsim devices.
"""

import json
import os
import shlex
import time

from lib.py import ksft_run, ksft_exit, ksft_ge, ksft_pr
from lib.py import NetDrvEpEnv, Iperf3Runner, cmd
from ksft_perfmon import PerfMonitor

THROUGHPUT = {
    "regression": {"better": "higher", "compare": "p50",
                   "relative_tolerance": 0.05},
    "summarize": "distribution",
}


def iperf3_monitored(cfg):
    """iperf3 for 4 s under PerfMonitor at 250 ms"""
    runner = Iperf3Runner(cfg)
    with PerfMonitor(cfg, interval_ms=250,
                     metrics=["cpu.softnet.processed"]) as mon:
        runner.start_server()
        started = mon.now()
        # the library gives a client 5 s beyond its duration; under
        # emulation a debug kernel's netdevsim took longer (past 9 s)
        client = runner.start_client(background=True, duration=4)
        client.process(terminate=False, timeout=120)
        intervals = json.loads(client.stdout)["intervals"]
        for i in intervals:
            mon.metric("throughput", i["sum"]["bits_per_second"] / 1e9,
                       policy=THROUGHPUT, time_s=started + i["sum"]["end"])
        time.sleep(0.3)     # a last sample after the traffic
        ahead = os.environ.get("KPM_REMOTE_CLOCK_AHEAD")
        if ahead:
            # the remote's clock is where the wrapper put it, so that
            # lining the hosts up is tested with an offset: read between
            # two reads of ours, it is that far ahead of one and the other
            before = time.monotonic_ns()
            remote = int(cmd(f"{shlex.quote(mon.tool)} clock",
                             host=cfg.remote).stdout)
            after = time.monotonic_ns()
            ksft_pr(f"the remote's clock is {(remote - after) / 1e9:.3f} "
                    f"to {(remote - before) / 1e9:.3f} s ahead")
            ksft_ge(remote, before + int(ahead) * 1000000000)
            ksft_ge(after + int(ahead) * 1000000000, remote)
    # on the monitor's clock, for the check that every time is inside
    ksft_pr(f"elapsed: {mon.now():.6f} s")
    # for the check that the remote stopped sampling with us
    ksft_pr(f"remote round trip: {mon.remote_trip_s:.9f} s")
    # 1 s each, but a debug kernel under emulation reports less often
    ksft_pr(f"{len(intervals)} iperf3 intervals")
    ksft_ge(len(intervals), 1)


def clock_ahead(remote, seconds):
    """Every command on @remote in a time namespace of its own, whose
    CLOCK_MONOTONIC is @seconds ahead of ours, as a remote host's is"""
    run = remote.cmd
    remote.cmd = lambda comm: run(
        f"exec unshare --time --monotonic {seconds} bash -c "
        f"{shlex.quote(comm)}")


def main() -> None:
    with NetDrvEpEnv(__file__) as cfg:
        # KPM_REMOTE_CLOCK_AHEAD=S: a netns remote on a clock of its own
        # (an ssh remote's sshd runs on one already: drv_env.sh)
        if (os.environ.get("KPM_REMOTE_CLOCK_AHEAD") and
                os.environ.get("REMOTE_TYPE") != "ssh"):
            clock_ahead(cfg.remote, int(os.environ["KPM_REMOTE_CLOCK_AHEAD"]))
        cfg.require_cmd("iperf3", local=True, remote=True)
        ksft_run([iperf3_monitored], args=(cfg,))
    ksft_exit()


if __name__ == "__main__":
    main()
