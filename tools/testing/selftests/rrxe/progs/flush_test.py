#!/usr/bin/python3
"""FLUSH (IBTA 1.5) through pyverbs and stock librxe, requester QP a on
DEV_A, responder QP b on DEV_B (the same device or not).  Debian 12's
librxe (rdma-core 44) has no ibv_wr_flush, so this writes the FLUSH WQE
into a's mapped send ring itself, in the layout later librxe versions
write (struct rxe_send_wqe: opcode 14, wr.flush.rkey/type/level, iova and
dma.length), publishes it with the ring's producer index and rings the
doorbell with an empty ibv_wr_start/ibv_wr_complete batch, exactly as
librxe does.  Checks: a global FLUSH of a range and of a whole region
after a WRITE (opcode IBV_WC_FLUSH, byte_len the range's length), FLUSH
without the region's or the QP's FLUSH right, past the region's end,
persistent FLUSH (no region can have the right: rrxe does not claim it,
C rxe refuses it on ordinary memory), a classic ibv_post_send with opcode
14 (librxe sends rkey 0).  Prints one line per check; the scenario runs
it on rrxe and on C rxe, and across drivers, and compares the lines.
usage: flush_test.py DEV_A GIDX_A DEV_B GIDX_B"""
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.wr import SGE, SendWR

from rrxe_ksft.data import ramp
from rrxe_ksft.rings import WR_FLUSH, post_flush, qp_with_ring
from rrxe_ksft.verbs import Device, connect_pair, error_state, expect, make_qp, poll, post_ex

WC_FLUSH = 8
ACC_FLUSH_GLOBAL, ACC_FLUSH_PERSISTENT = 1 << 8, 1 << 9
PLT_GLOBAL, PLT_PERSISTENT = 1, 2
SEL_RANGE, SEL_MR = 0, 1
SIZE = 16384
ALL = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
       | e.IBV_ACCESS_REMOTE_ATOMIC)
OPS = e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_RDMA_WRITE | e.IBV_QP_EX_WITH_RDMA_READ


def flush_pair(b_access=ALL | ACC_FLUSH_GLOBAL):
    """Requester a on A, an ibv_qp_ex with its send ring (FLUSH WQEs go
    there), connected to a plain RC QP b on B with access `b_access`;
    returns a, the ring, b and a's CQ."""
    ca, cb = CQ(A.ctx, 32), CQ(B.ctx, 32)
    a, ring = qp_with_ring(A.ctx, A.pd, ca, OPS, 16)
    b = make_qp(B.pd, cb)
    connect_pair(a, b, A, B, ALL, b_kw={"access": b_access}, max_rd_atomic=4, max_dest_rd_atomic=4)
    return a, ring, b, ca


A = Device(sys.argv[1], int(sys.argv[2]))
B = Device(sys.argv[3], int(sys.argv[4]))
src = MR(A.pd, SIZE, ALL)
dst = MR(B.pd, SIZE, ALL | ACC_FLUSH_GLOBAL)
plain = MR(B.pd, SIZE, ALL)

# WRITE, then a global FLUSH of its range and of the whole region.
a, ring, b, ca = flush_pair()
data = ramp(4096, 9, 4)
src.write(data, 4096)
post_ex(a, 1, lambda: a.wr_rdma_write(dst.rkey, dst.buf + 1024), SGE(src.buf, 4096, src.lkey))
post_flush(a, ring, 2, dst.rkey, dst.buf + 1024, 4096, PLT_GLOBAL, SEL_RANGE)
post_flush(a, ring, 3, dst.rkey, dst.buf, 0, PLT_GLOBAL, SEL_MR)
wcs = poll(ca, "write + flushes", 3)
expect(wcs[0], e.IBV_WC_SUCCESS, "WRITE 4 KiB", e.IBV_WC_RDMA_WRITE, 4096)
expect(wcs[1], e.IBV_WC_SUCCESS, "global FLUSH of the written range", WC_FLUSH, 4096)
expect(wcs[2], e.IBV_WC_SUCCESS, "global FLUSH of the whole region", WC_FLUSH, 0)
assert [w.wr_id for w in wcs] == [1, 2, 3], [w.wr_id for w in wcs]
assert dst.read(4096, 1024) == data, "WRITE data differs"
print("ok: completions in order, WRITE data in place")

# A FLUSH that is not answered keeps nothing else from completing: 8 in a row.
for i in range(8):
    post_flush(a, ring, 10 + i, dst.rkey, dst.buf + i * 512, 512, PLT_GLOBAL, SEL_RANGE)
wcs = poll(ca, "8 flushes", 8)
assert [w.wr_id for w in wcs] == list(range(10, 18)) and all(w.status == 0 for w in wcs), \
    [(w.wr_id, w.status) for w in wcs]
print("ok: 8 FLUSHes in a row (max_rd_atomic 4) completed in order")

# Errors.
for what, rkey, va, length, plt, b_access, status in (
        ("FLUSH of a region without the FLUSH right", plain.rkey, plain.buf, 64, PLT_GLOBAL,
         ALL | ACC_FLUSH_GLOBAL, e.IBV_WC_REM_ACCESS_ERR),
        ("FLUSH past the region's end", dst.rkey, dst.buf + SIZE - 32, 64, PLT_GLOBAL,
         ALL | ACC_FLUSH_GLOBAL, e.IBV_WC_REM_ACCESS_ERR),
        ("FLUSH with a wrong rkey", dst.rkey ^ 0x80, dst.buf, 64, PLT_GLOBAL, ALL | ACC_FLUSH_GLOBAL,
         e.IBV_WC_REM_ACCESS_ERR),
        ("global FLUSH to a QP without the FLUSH right", dst.rkey, dst.buf, 64, PLT_GLOBAL, ALL,
         e.IBV_WC_REM_INV_REQ_ERR),
        ("persistent FLUSH (no region has the right)", dst.rkey, dst.buf, 64, PLT_PERSISTENT,
         ALL | ACC_FLUSH_GLOBAL | ACC_FLUSH_PERSISTENT, e.IBV_WC_REM_ACCESS_ERR)):
    a, ring, b, ca = flush_pair(b_access)
    post_flush(a, ring, 20, rkey, va, length, plt, SEL_RANGE)
    expect(poll(ca, what)[0], status, what)
    assert error_state(b) == e.IBV_QPS_ERR, f"{what}: responder state {error_state(b)}"
    print(f"ok: {what}: responder in the error state")

try:
    MR(B.pd, SIZE, ALL | ACC_FLUSH_PERSISTENT)
    raise AssertionError("a region with the persistent FLUSH right was registered")
except PyverbsRDMAError:
    print("ok: registration with IB_ACCESS_FLUSH_PERSISTENT refused")

# The classic ibv_post_send cannot express FLUSH: librxe 44 sends rkey 0.
a, ring, b, ca = flush_pair()
a.post_send(SendWR(wr_id=30, opcode=WR_FLUSH, num_sge=1, sg=[SGE(src.buf, 64, src.lkey)],
                   send_flags=e.IBV_SEND_SIGNALED))
expect(poll(ca, "post_send flush")[0], e.IBV_WC_REM_ACCESS_ERR, "FLUSH through ibv_post_send (rkey 0)")
print("flush_test: all checks passed")
