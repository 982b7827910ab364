#!/usr/bin/python3
"""Atomics through pyverbs (stock librxe), two RC QPs on one device:
fetch-and-add and compare-and-swap (a swap that happens and one that does
not, a fetch-and-add across 2^64), the original value returned into the local buffer in host byte
order, 500 fetch-and-adds pipelined from two QPs onto one counter (every
original value seen exactly once, the counter exact); then the errors,
each with IBTA's completion status, the responder QP in the error state
and the target unchanged: wrong rkey, region without
remote atomic, QP without remote-atomic access, responder without
resources, local buffer without local write; a misaligned address is
refused by librxe's post_send.  Prints one line per check;
the scenario runs it on rrxe and on C rxe and compares the lines.
usage: atomic_test.py DEV GIDX"""
import struct
import sys

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.wr import SGE

from rrxe_ksft.data import u64
from rrxe_ksft.verbs import atomic_wr, error_state, expect, poll, rc_pair

dev, gidx = sys.argv[1], int(sys.argv[2])
ctx = Context(name=dev)
pd = PD(ctx)
LW = e.IBV_ACCESS_LOCAL_WRITE
ALL = LW | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC
remote = MR(pd, 4096, ALL)
local = MR(pd, 4096, ALL)
no_atomic = MR(pd, 4096, LW | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ)
ro_local = MR(pd, 4096, e.IBV_ACCESS_REMOTE_READ)


def put(mr, off, v):
    mr.write(struct.pack("<Q", v), 8, off)


def word(mr, off):
    """The 8-byte SGE at offset `off` of `mr`: where an atomic's original
    value goes."""
    return SGE(mr.buf + off, 8, mr.lkey)


FAA, CAS = e.IBV_WR_ATOMIC_FETCH_AND_ADD, e.IBV_WR_ATOMIC_CMP_AND_SWP
(a, b), (ca, cb) = rc_pair(ctx, pd, gidx, ALL)
put(remote, 0, 0x1122334455667788)
a.post_send(atomic_wr(1, FAA, word(local, 0), remote.rkey, remote.buf, 0x10))
expect(poll(ca, "faa")[0], e.IBV_WC_SUCCESS, "fetch-and-add", e.IBV_WC_FETCH_ADD, 8)
assert u64(local, 0) == 0x1122334455667788, hex(u64(local, 0))
assert u64(remote, 0) == 0x1122334455667798, hex(u64(remote, 0))
print("ok: fetch-and-add returned the old value, added")
# Wraps around 2^64.
put(remote, 8, 0xffffffffffffffff)
a.post_send(atomic_wr(2, FAA, word(local, 8), remote.rkey, remote.buf + 8, 2))
expect(poll(ca, "faa wrap")[0], e.IBV_WC_SUCCESS, "fetch-and-add across 2^64", e.IBV_WC_FETCH_ADD, 8)
assert u64(remote, 8) == 1 and u64(local, 8) == 0xffffffffffffffff
print("ok: fetch-and-add wraps")
a.post_send(atomic_wr(3, CAS, word(local, 16), remote.rkey, remote.buf, 0x1122334455667798, 0xabcd))
expect(poll(ca, "cas")[0], e.IBV_WC_SUCCESS, "compare-and-swap (equal)", e.IBV_WC_COMP_SWAP, 8)
assert u64(local, 16) == 0x1122334455667798 and u64(remote, 0) == 0xabcd
a.post_send(atomic_wr(4, CAS, word(local, 24), remote.rkey, remote.buf, 0x1234, 0x9999))
expect(poll(ca, "cas2")[0], e.IBV_WC_SUCCESS, "compare-and-swap (different)", e.IBV_WC_COMP_SWAP, 8)
assert u64(local, 24) == 0xabcd and u64(remote, 0) == 0xabcd
print("ok: compare-and-swap swaps only on equality, returns the old value")

# 500 fetch-and-adds of 1 from two QPs onto one counter, 16 outstanding
# on each (max_rd_atomic 16).
N = 250
(a1, b1), (ca1, _) = rc_pair(ctx, pd, gidx, ALL, depth=32, max_rd_atomic=16, max_dest_rd_atomic=16)
(a2, b2), (ca2, _) = rc_pair(ctx, pd, gidx, ALL, depth=32, max_rd_atomic=16, max_dest_rd_atomic=16)
put(remote, 64, 0)
results = MR(pd, 2 * N * 8, ALL)
posted, seen = [0, 0], []
for qi, (qp, cq) in enumerate(((a1, ca1), (a2, ca2))):
    for _ in range(16):
        qp.post_send(atomic_wr(posted[qi], FAA, word(results, (qi * N + posted[qi]) * 8), remote.rkey,
                               remote.buf + 64, 1))
        posted[qi] += 1
done = [0, 0]
while done != [N, N]:
    for qi, (qp, cq) in enumerate(((a1, ca1), (a2, ca2))):
        cnt, wcs = cq.poll(num_entries=16)
        for w in wcs[:cnt]:
            assert w.status == e.IBV_WC_SUCCESS and w.wr_id == done[qi], (w.status, w.wr_id, done[qi])
            seen.append(u64(results, (qi * N + w.wr_id) * 8))
            done[qi] += 1
            if posted[qi] < N:
                qp.post_send(atomic_wr(posted[qi], FAA, word(results, (qi * N + posted[qi]) * 8), remote.rkey,
                                       remote.buf + 64, 1))
                posted[qi] += 1
assert u64(remote, 64) == 2 * N, u64(remote, 64)
assert sorted(seen) == list(range(2 * N)), "original values not each seen once"
print(f"ok: {2 * N} fetch-and-adds from two QPs: counter {2 * N}, every original value once")


def error_case(what, status, op=FAA, rkey=None, addr=None, lmr=None, **kw):
    (a, b), (ca, cb) = rc_pair(ctx, pd, gidx, ALL, **kw)
    put(remote, 128, 7)
    put(remote, 136, 7)
    lmr = lmr or local
    put(local, 256, 0x55)
    a.post_send(atomic_wr(5, op, word(lmr, 256), remote.rkey if rkey is None else rkey,
                          remote.buf + 128 if addr is None else addr, 7, 1))
    expect(poll(ca, what)[0], status, what + " (requester)")
    assert error_state(a) == e.IBV_QPS_ERR, error_state(a)
    if status != e.IBV_WC_LOC_PROT_ERR:
        assert error_state(b) == e.IBV_QPS_ERR, f"{what}: responder state {error_state(b)}"
        assert u64(remote, 128) == 7 and u64(remote, 136) == 7, f"{what}: target changed"
        assert u64(local, 256) == 0x55, f"{what}: local buffer written"
        print(f"ok: {what}: both QPs in the error state, nothing written")


# librxe refuses a misaligned remote address in post_send (EINVAL), so
# no such request reaches either driver from here (the responder's check
# is covered by the protocol core's tests).
(a, b), (ca, cb) = rc_pair(ctx, pd, gidx, ALL)
for off in (4, 1):
    try:
        a.post_send(atomic_wr(6, FAA, word(local, 0), remote.rkey, remote.buf + 128 + off, 1))
        raise AssertionError(f"atomic at remote address +{off} was posted")
    except PyverbsRDMAError as err:
        assert err.error_code == 22, err
print("ok: atomics at misaligned remote addresses refused by post_send (EINVAL)")
error_case("atomic with a wrong rkey", e.IBV_WC_REM_ACCESS_ERR, rkey=remote.rkey ^ 0x5a)
error_case("atomic on a region without remote atomic", e.IBV_WC_REM_ACCESS_ERR, rkey=no_atomic.rkey,
           addr=no_atomic.buf)
error_case("atomic past the end of the region", e.IBV_WC_REM_ACCESS_ERR, addr=remote.buf + 4096)
error_case("atomic to a QP without remote-atomic access", e.IBV_WC_REM_INV_REQ_ERR,
           b_kw={"access": LW | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ})
error_case("atomic to a QP with max_dest_rd_atomic 0", e.IBV_WC_REM_INV_REQ_ERR,
           b_kw={"max_dest_rd_atomic": 0})
error_case("atomic into a local region without local write", e.IBV_WC_LOC_PROT_ERR, lmr=ro_local)
print("atomic_test: all checks passed")
