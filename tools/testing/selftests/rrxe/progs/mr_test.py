#!/usr/bin/python3
"""Memory registration on an RDMA device through pyverbs (stock librxe):
keys, access flags, bad ranges, many registrations, re-registration keys,
MRs left for process exit to clean up.  usage: mr_test.py DEV"""
import sys

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD

from rrxe_ksft.verbs import refused

dev = sys.argv[1]
ctx = Context(name=dev)
pd = PD(ctx)
LW, RW, RR = e.IBV_ACCESS_LOCAL_WRITE, e.IBV_ACCESS_REMOTE_WRITE, e.IBV_ACCESS_REMOTE_READ

mr = MR(pd, 4096, LW | RW | RR)
assert mr.lkey == mr.rkey and mr.lkey != 0, (mr.lkey, mr.rkey)
mr.write(b"rrxe", 4)
assert mr.read(4, 0) == b"rrxe"
print(f"ok: 4 KiB MR, lkey=rkey={mr.lkey:#x}")

big = MR(pd, 8 << 20, LW)
print(f"ok: 8 MiB MR, key {big.lkey:#x}")
big.close()

ro = MR(pd, 4096, RR)
print(f"ok: read-only MR, key {ro.lkey:#x}")
ro.close()

# IBTA: remote write needs local write (ib_core enforces it for every device).
refused("REMOTE_WRITE without LOCAL_WRITE", lambda: MR(pd, 4096, RW))

keys = set()
mrs = []
for _ in range(500):
    m = MR(pd, 4096, LW)
    assert m.lkey not in keys, f"duplicate key {m.lkey:#x}"
    keys.add(m.lkey)
    mrs.append(m)
for m in mrs[::2]:
    m.close()
again = [MR(pd, 4096, LW) for _ in range(50)]
live = [m.lkey for m in mrs[1::2]] + [m.lkey for m in again]
assert len(set(live)) == len(live), "two live MRs share a key"
# The key byte is random (as in C rxe), so a re-registration at a freed
# index repeats that index's old key with probability 1/256: a few of 50
# may; a dozen would mean the byte is not random.
stale = sum(m.lkey in keys for m in again)
assert stale <= 5, f"{stale} of 50 re-registrations repeated a stale key"
print(f"ok: 550 registrations, live keys unique, {stale}/50 stale keys repeated, 250 left open for process exit")
mr.close()
