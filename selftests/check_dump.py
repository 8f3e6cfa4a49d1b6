#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ksft-perfmon-nl dump output: one JSON object a line, as json.dumps writes
it with sort_keys, with consecutive seqs and every netdev counter."""

import json
import sys

lines = sys.stdin.read().splitlines()
assert len(lines) >= 3, f'only {len(lines)} samples'
prev = None
for line in lines:
    obj = json.loads(line)
    assert json.dumps(obj, separators=(',', ':'), sort_keys=True) == line, line
    assert prev is None or obj['seq'] == prev + 1, (prev, obj['seq'])
    prev = obj['seq']
    assert len(obj['devs']) == 1 and len(obj['devs'][0]) == 27, obj['devs']
    assert all(c is None or c['online'] in (True, False) for c in obj['cpus'])
print(f'{len(lines)} samples checked')
