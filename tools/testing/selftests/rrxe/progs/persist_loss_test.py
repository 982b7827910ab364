#!/usr/bin/python3
"""FLUSH and ATOMIC WRITE over a lossy link (pyverbs, stock librxe; the
FLUSH WQE written into the mapped send ring as rrxe_ksft.rings.post_flush
explains).  Requester QP a on DEV_A, responder QP b on DEV_B, the link
between them dropping packets (the scenario's netem).  Round k posts, all
signaled, on a's send queue:
  1. an RDMA WRITE of 4 KiB, a pattern depending on k, into slot k % 8
     of b's region;
  2. an ATOMIC WRITE of k into the region's counter word;
  3. a global FLUSH of the slot's range;
  4. an RDMA READ of the counter word into slot k % 8 of a's read buffer.
Up to WINDOW rounds are in flight.  Every completion must succeed, in
posting order, with the right opcode and byte count.  When round k's READ
completes it must return a value from k up to the last round posted: the
responder executes in order, so the READ sees round k's ATOMIC WRITE; it
may see a later round's too, when the READ was resent after a lost
response and executed again after those (IBTA lets a resent READ return
the memory as it is then).  A value below k would be an ATOMIC WRITE of an
earlier round executed again out of turn (a duplicate not recognised as
one).  When round k's FLUSH completes, slot k % 8 holds round k's pattern
(no later round writes that slot before round k completes).  At the end
the counter holds the last round's number.  Lost FLUSH and ATOMIC WRITE
acknowledgements must be answered again from the responder's saved
results.

usage: persist_loss_test.py DEV_A GIDX_A DEV_B GIDX_B [--rounds N]
       [--window W] [--timeout T] [--stall S]"""
import argparse
import struct
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.wr import SGE

from rrxe_ksft.data import ramp, u64
from rrxe_ksft.rings import post_flush, qp_with_ring
from rrxe_ksft.verbs import Device, connect_pair, make_qp

ACC_FLUSH_GLOBAL = 1 << 8
PLT_GLOBAL, SEL_RANGE = 1, 0
WC_FLUSH = 8
SLOT, SLOTS, CTR = 4096, 8, 8 * 4096
ALL = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
       | e.IBV_ACCESS_REMOTE_ATOMIC)
OPS = (e.IBV_QP_EX_WITH_RDMA_WRITE | e.IBV_QP_EX_WITH_RDMA_READ | e.IBV_QP_EX_WITH_ATOMIC_WRITE)

ap = argparse.ArgumentParser()
ap.add_argument("dev_a")
ap.add_argument("gidx_a", type=int)
ap.add_argument("dev_b")
ap.add_argument("gidx_b", type=int)
ap.add_argument("--rounds", type=int, default=200)
ap.add_argument("--window", type=int, default=4)
ap.add_argument("--timeout", type=int, default=12)
ap.add_argument("--stall", type=float, default=60)
args = ap.parse_args()
assert 1 <= args.window <= SLOTS

A = Device(args.dev_a, args.gidx_a)
B = Device(args.dev_b, args.gidx_b)
src = MR(A.pd, SLOT * SLOTS, ALL)
rbuf = MR(A.pd, 8 * SLOTS, ALL)
dst = MR(B.pd, SLOT * SLOTS + 8, ALL | ACC_FLUSH_GLOBAL)
ca, cb = CQ(A.ctx, 4 * SLOTS + 8), CQ(B.ctx, 8)
a, ring = qp_with_ring(A.ctx, A.pd, ca, OPS, 4 * SLOTS)
b = make_qp(B.pd, cb)
connect_pair(a, b, A, B, ALL, b_kw={"access": ALL | ACC_FLUSH_GLOBAL}, max_rd_atomic=16, max_dest_rd_atomic=16,
             timeout=args.timeout, retry_cnt=7)


def slot_data(k):
    """What round k WRITEs into its slot: a header naming the round, then
    a ramp that depends on k."""
    head = struct.pack("<QQ", 0x5045525349535400 | (k & 0xff), k)
    return head + ramp(SLOT - len(head), 7, k * 31)


def post_round(k):
    s = k % SLOTS
    src.write(slot_data(k), SLOT, s * SLOT)
    rbuf.write(b"\xff" * 8, 8, s * 8)
    a.wr_start()
    a.wr_id, a.wr_flags = 4 * k, e.IBV_SEND_SIGNALED
    a.wr_rdma_write(dst.rkey, dst.buf + s * SLOT)
    a.wr_set_sge(SGE(src.buf + s * SLOT, SLOT, src.lkey))
    a.wr_id, a.wr_flags = 4 * k + 1, e.IBV_SEND_SIGNALED
    a.wr_atomic_write(dst.rkey, dst.buf + CTR, struct.pack("<Q", k))
    a.wr_complete()
    post_flush(a, ring, 4 * k + 2, dst.rkey, dst.buf + s * SLOT, SLOT, PLT_GLOBAL, SEL_RANGE)
    a.wr_start()
    a.wr_id, a.wr_flags = 4 * k + 3, e.IBV_SEND_SIGNALED
    a.wr_rdma_read(dst.rkey, dst.buf + CTR)
    a.wr_set_sge(SGE(rbuf.buf + s * 8, 8, rbuf.lkey))
    a.wr_complete()


WANT = {0: (e.IBV_WC_RDMA_WRITE, SLOT), 1: (e.IBV_WC_ATOMIC_WRITE, 8), 2: (WC_FLUSH, SLOT),
        3: (e.IBV_WC_RDMA_READ, 8)}
posted = done = 0
nxt = 0  # the wr_id the next completion must carry
last = time.time()
t0 = time.time()
while done < args.rounds:
    while posted < args.rounds and posted - done < args.window:
        post_round(posted)
        posted += 1
    cnt, wcs = ca.poll(num_entries=16)
    for wc in wcs[:cnt]:
        k, op = divmod(wc.wr_id, 4)
        assert wc.wr_id == nxt, f"completion for wr_id {wc.wr_id}, expected {nxt} (status {wc.status})"
        assert wc.status == e.IBV_WC_SUCCESS, f"round {k} op {op}: status {wc.status}"
        assert (wc.opcode, wc.byte_len) == WANT[op], f"round {k} op {op}: opcode {wc.opcode} len {wc.byte_len}"
        s = k % SLOTS
        if op == 2:
            assert dst.read(SLOT, s * SLOT) == slot_data(k), f"round {k}: slot {s} differs after its FLUSH"
        if op == 3:
            got = u64(rbuf, s * 8)
            assert k <= got < posted, f"round {k}: READ after the ATOMIC WRITE returned {got} ({posted} posted)"
            done += 1
        nxt += 1
        last = time.time()
    if cnt == 0:
        if time.time() - last > args.stall:
            raise AssertionError(f"no completion for {args.stall:.0f}s: posted {posted}, done {done}")
        time.sleep(0.0005)
final = u64(dst, CTR)
assert final == args.rounds - 1, f"counter {final} at the end, want {args.rounds - 1}"
print(f"persist_loss_test: {args.rounds} rounds of WRITE + ATOMIC WRITE + FLUSH + READ (window "
      f"{args.window}) in {time.time() - t0:.1f}s: every completion in order, no READ saw an "
      f"ATOMIC WRITE older than its round's, every FLUSHed slot held its data")
