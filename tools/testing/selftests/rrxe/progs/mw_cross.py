#!/usr/bin/python3
"""Memory windows across two devices (pyverbs, stock librxe): QP a on
DEV_A is the remote peer, QP b on DEV_B owns the memory and binds a
type 2 window on its send queue.  a WRITEs and READs through the window,
then sends a SEND with Invalidate naming it (IETH on the wire): b's
receive completion carries the key, and a's next READ through the window
is refused.  The scenario runs it rrxe -> C rxe and C rxe -> rrxe.
usage: mw_cross.py DEV_A GIDX_A DEV_B GIDX_B"""
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR, MW, MWBindInfo
from pyverbs.wr import SGE, RecvWR

from rrxe_ksft.data import ramp
from rrxe_ksft.verbs import (Device, connect_pair, error_state, expect, make_qp_ex, next_key, poll,
                           post_ex as post)

SIZE = 16384
WIN = 4096
ALL = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
       | e.IBV_ACCESS_REMOTE_ATOMIC)
OPS = (e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_RDMA_WRITE | e.IBV_QP_EX_WITH_RDMA_READ
       | e.IBV_QP_EX_WITH_LOCAL_INV | e.IBV_QP_EX_WITH_BIND_MW | e.IBV_QP_EX_WITH_SEND_WITH_INV)


class Side(Device):
    def __init__(self, name, gidx):
        super().__init__(name, gidx)
        self.cq = CQ(self.ctx, 64)
        self.mr = MR(self.pd, SIZE, ALL | e.IBV_ACCESS_MW_BIND)
        self.qp = make_qp_ex(self.ctx, self.pd, self.cq, OPS, 16, 16)


A = Side(sys.argv[1], int(sys.argv[2]))
B = Side(sys.argv[3], int(sys.argv[4]))
connect_pair(A.qp, B.qp, A, B, ALL, max_rd_atomic=4, max_dest_rd_atomic=4)
a, b = A.qp, B.qp
pattern = ramp(SIZE, 3, 11)
B.mr.write(pattern, SIZE)
mw = MW(B.pd, e.IBV_MW_TYPE_2)
key = next_key(mw.rkey)
info = MWBindInfo(B.mr, B.mr.buf + WIN, 4096, e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ)
post(b, 1, lambda: b.wr_bind_mw(mw, key, info))
expect(poll(B.cq, "bind")[0], e.IBV_WC_SUCCESS, "bind type 2 on the memory owner", e.IBV_WC_BIND_MW, 0)

data = ramp(1024, 5, 1)
A.mr.write(data, 1024)
post(a, 2, lambda: a.wr_rdma_write(key, B.mr.buf + WIN + 512), SGE(A.mr.buf, 1024, A.mr.lkey))
expect(poll(A.cq, "write")[0], e.IBV_WC_SUCCESS, "WRITE 1 KiB through the window", e.IBV_WC_RDMA_WRITE, 1024)
assert B.mr.read(1024, WIN + 512) == data, "WRITE through the window: data differs"
post(a, 3, lambda: a.wr_rdma_read(key, B.mr.buf + WIN), SGE(A.mr.buf + 8192, 4096, A.mr.lkey))
expect(poll(A.cq, "read")[0], e.IBV_WC_SUCCESS, "READ the window", e.IBV_WC_RDMA_READ, 4096)
assert A.mr.read(4096, 8192) == B.mr.read(4096, WIN), "READ through the window: data differs"
print("ok: WRITE and READ data through the window byte-exact")

b.post_recv(RecvWR(wr_id=4, num_sge=1, sg=[SGE(B.mr.buf + 12288, 2048, B.mr.lkey)]))
post(a, 5, lambda: a.wr_send_inv(key), SGE(A.mr.buf, 1500, A.mr.lkey))
expect(poll(A.cq, "send inv")[0], e.IBV_WC_SUCCESS, "SEND with Invalidate (2 packets at MTU 1024)",
       e.IBV_WC_SEND, 1500)
wc = poll(B.cq, "recv")[0]
expect(wc, e.IBV_WC_SUCCESS, "its receive", e.IBV_WC_RECV, 1500)
assert wc.wc_flags & 4, f"wc_flags {wc.wc_flags:#x}"
assert wc.imm_data in (key, int.from_bytes(key.to_bytes(4, "little"), "big")), f"{wc.imm_data:#x}"
assert B.mr.read(1500, 12288) == data + A.mr.read(476, 1024), "SEND payload differs"
print("ok: the receive carries IB_WC_WITH_INVALIDATE and the key; payload byte-exact")
post(a, 6, lambda: a.wr_rdma_read(key, B.mr.buf + WIN), SGE(A.mr.buf, 64, A.mr.lkey))
expect(poll(A.cq, "read after inv")[0], e.IBV_WC_REM_ACCESS_ERR, "READ through the invalidated window")
assert error_state(b) == e.IBV_QPS_ERR, error_state(b)
print("ok: the owner's QP is in the error state")
print("mw_cross: all checks passed")
