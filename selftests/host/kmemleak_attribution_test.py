#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""kmemleak_attribution.py on reports as 6.12 and 7.3 print them: a frame
of a loaded module, a bare address in and out of the module's loads, and no
backtrace at all. KTAP output."""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib', 'py'))
from ktap import Ktap   # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RANGES = ("ksft_perfmon 45056 0 - Live 0xffffffffc0a00000 (OE)\n"
          "ksft_perfmon 45056 0 - Live 0xffffffffc0c00000 (OE)\n")


def obj(*frames, addr="ffff888003b2c000"):
    return (f"unreferenced object 0x{addr} (size 64):\n"
            '  comm "insmod", pid 123, jiffies 4294892296\n'
            "  backtrace (crc 1234abcd):\n"
            + "".join(f"    {f}\n" for f in frames))


CASES = [
    ("named_frame", obj("__kmalloc_noprof+0x2b0/0x3c0",
                        "kpm_session_new+0x1b2/0x4a0 [ksft_perfmon]"), 1),
    ("bare_address_in_second_load",
     obj("__kmalloc_noprof+0x2b0/0x3c0", "0xffffffffc0c0afff"), 1),
    ("bare_address_6_12_style",
     obj("[<ffffffff8133c2a0>] __kmalloc_noprof+0x2b0/0x3c0",
         "[<ffffffffc0a01234>] 0xffffffffc0a01234"), 1),
    ("address_past_the_module",
     obj("__kmalloc_noprof+0x2b0/0x3c0", "0xffffffffc0a0b000"), 0),
    ("another_module", obj("veth_newlink+0x10/0x200 [veth]"), 0),
    ("no_backtrace", "unreferenced object 0xffff888003b2c000 (size 64):\n", 0),
    ("mixed", obj("0xffffffffc0b00000") +
     obj("0xffffffffc0a00010", addr="ffff888003b2d000"), 1),
    ("empty", "", 0),
]


def main():
    print("TAP version 13")
    k = Ktap("kmemleak")
    k.plan(len(CASES))
    with tempfile.TemporaryDirectory() as tmp:
        ranges = os.path.join(tmp, "ranges")
        with open(ranges, "w", encoding="ascii") as f:
            f.write(RANGES)
        for name, report, want in CASES:
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="ascii") as f:
                f.write(report)
            got = subprocess.run([sys.executable,
                                  os.path.join(HERE, "..", "lib", "py",
                                               "kmemleak_attribution.py"),
                                  path, ranges], capture_output=True,
                                 check=False).returncode
            k.check(got == want, name, f"{name}: exit {got}, want {want}")
    return k.finish()


if __name__ == "__main__":
    sys.exit(main())
