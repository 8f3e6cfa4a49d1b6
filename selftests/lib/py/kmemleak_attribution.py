#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Fail on any kmemleak report that the module allocated.

usage: kmemleak_attribution.py KMEMLEAK_FILE RANGES_FILE

KMEMLEAK_FILE is /sys/kernel/debug/kmemleak (or a copy of it). RANGES_FILE
holds the /proc/modules line of every load of ksft_perfmon. An object is
the module's when a frame of its allocation backtrace names the module or,
as kmemleak prints frames of an unloaded module as bare addresses, when a
frame lies inside one of the module's loads. Prints every unreferenced
object and says which are the module's; exits 1 if any is.
"""

import re
import sys

MODULE = "ksft_perfmon"


def module_ranges(path):
    """(start, end) of every load, from /proc/modules lines:
    name size refcount deps state address [taints]"""
    ranges = []
    with open(path, encoding="ascii") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and fields[0] == MODULE:
                start = int(fields[5], 16)
                if start == 0:
                    sys.exit("kmemleak_attribution: /proc/modules hides "
                             "addresses (kptr_restrict)")
                ranges.append((start, start + int(fields[1])))
    return ranges


def objects(text):
    """Each report: the lines from one 'unreferenced object' to the next."""
    return [m.group(0) for m in
            re.finditer(r"^unreferenced object .*?(?=^unreferenced object |\Z)",
                        text, re.M | re.S)]


def is_module_frame(line, ranges):
    if f"[{MODULE}]" in line:
        return True
    m = re.fullmatch(r"\s*(?:\[<[0-9a-f]+>\]\s*)?0x([0-9a-f]+)\s*", line)
    if not m:
        return False
    addr = int(m.group(1), 16)
    return any(start <= addr < end for start, end in ranges)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    ranges = module_ranges(sys.argv[2])
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        reports = objects(f.read())
    ours = 0
    for report in reports:
        lines = report.splitlines()
        bt = next((i for i, l in enumerate(lines) if "backtrace" in l),
                  len(lines))
        mine = any(is_module_frame(l, ranges) for l in lines[bt + 1:])
        ours += mine
        print(("# the module's: " if mine else "# not the module's: ")
              + lines[0])
        for line in lines[1:]:
            print("#   " + line)
    print(f"kmemleak: {len(reports)} unreferenced objects, {ours} the "
          f"module's ({len(ranges)} loads)")
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())
