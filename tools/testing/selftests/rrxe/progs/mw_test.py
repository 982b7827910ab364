#!/usr/bin/python3
"""Memory windows through pyverbs (stock librxe), RC QPs on one device.
QP a is the remote peer; QP b owns the memory and binds windows on its
send queue.  Type 2 windows (bound with ibv_wr_bind_mw): WRITE and READ
through the window, a zero-based window, use through another QP refused,
LOCAL_INV, SEND with Invalidate (the receive completion carries the
key), SEND with Invalidate of a key that cannot be invalidated.  Type 1
windows (ibv_bind_mw): READ through the window from two QPs, the rights
of the window enforced, unbind, LOCAL_INV refused.  A region with a
bound window cannot be deregistered.  Bind errors (region without
MW_BIND, window past the region, remote write on a region without local
write) complete with MW_BIND_ERR.  Prints one line per check; the
scenario runs it on rrxe and on C rxe and compares the lines.  Named
deviations of C rxe: it bounds an access through a window by the region,
not the window, and completes a failed bind or LOCAL_INV with
WR_FLUSH_ERR rather than its own status.  usage: mw_test.py DEV GIDX"""
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBind, MWBindInfo
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.wr import SGE, RecvWR

from rrxe_ksft.data import ramp
from rrxe_ksft.verbs import (Endpoint, connect_pair, error_state, expect, make_qp_ex, next_key, poll,
                           post_ex as post)

dev, gidx = sys.argv[1], int(sys.argv[2])
c_rxe = dev.startswith("rxe")
ctx = Context(name=dev)
pd = PD(ctx)
here = Endpoint(ctx.query_gid(1, gidx), gidx)
SIZE = 16384
LW, RW, RR = e.IBV_ACCESS_LOCAL_WRITE, e.IBV_ACCESS_REMOTE_WRITE, e.IBV_ACCESS_REMOTE_READ
ALL = LW | RW | RR | e.IBV_ACCESS_REMOTE_ATOMIC
BIND = e.IBV_ACCESS_MW_BIND
OPS = (e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_RDMA_WRITE | e.IBV_QP_EX_WITH_RDMA_READ
       | e.IBV_QP_EX_WITH_LOCAL_INV | e.IBV_QP_EX_WITH_BIND_MW | e.IBV_QP_EX_WITH_SEND_WITH_INV)
pattern = ramp(SIZE, 7, 3)
mem = MR(pd, SIZE, ALL | BIND)
mem.write(pattern, SIZE)
local = MR(pd, SIZE, ALL)
WIN = 4096  # windows start 4 KiB into `mem`


def mw_pair():
    """Connected QPEx a (peer) and b (memory owner, binding windows), each
    with a CQ."""
    ca, cb = CQ(ctx, 64), CQ(ctx, 64)
    a, b = make_qp_ex(ctx, pd, ca, OPS, 16, 16), make_qp_ex(ctx, pd, cb, OPS, 16, 16)
    connect_pair(a, b, here, here, ALL, max_rd_atomic=4, max_dest_rd_atomic=4)
    return a, b, ca, cb


def local_error(wc, status, what):
    """A failed bind or LOCAL_INV: its own status (IBTA).  C rxe records
    the status on the WQE, then flushes it with the rest (WR_FLUSH_ERR): a
    named deviation; both lines carry "local op error" for the scenario."""
    if c_rxe:
        assert wc.status == e.IBV_WC_WR_FLUSH_ERR, f"{what}: status {wc.status}"
        print(f"deviation: C rxe completes a failed local operation with WR_FLUSH_ERR (local op error: {what})")
    else:
        expect(wc, status, f"{what} (local op error)")


def bind2(b, cb, mw, access, addr=None, length=4096, mr=None, status=e.IBV_WC_SUCCESS, what="bind type 2"):
    """Binds type 2 window `mw` on b's send queue; returns its new rkey."""
    key = next_key(mw.rkey)
    info = MWBindInfo(mr or mem, (mr or mem).buf + WIN if addr is None else addr, length, access)
    post(b, 90, lambda: b.wr_bind_mw(mw, key, info))
    wc = poll(cb, what)[0]
    if status == e.IBV_WC_SUCCESS:
        expect(wc, status, what, e.IBV_WC_BIND_MW, 0)
    else:
        local_error(wc, status, what)
    return key


def write(a, ca, rkey, addr, n, status, what, off=0):
    local.write(ramp(n, 5, 1), n, off)
    post(a, 1, lambda: a.wr_rdma_write(rkey, addr), SGE(local.buf + off, n, local.lkey))
    expect(poll(ca, what)[0], status, what, e.IBV_WC_RDMA_WRITE, n)


def read(a, ca, rkey, addr, n, status, what):
    local.write(bytes(n), n)
    post(a, 2, lambda: a.wr_rdma_read(rkey, addr), SGE(local.buf, n, local.lkey))
    expect(poll(ca, what)[0], status, what, e.IBV_WC_RDMA_READ, n)


def is_err(q, what):
    assert error_state(q) == e.IBV_QPS_ERR, f"{what}: QP state {error_state(q)}"
    print(f"ok: {what}: QP in the error state")


# Type 2: bind, WRITE and READ through the window.
a, b, ca, cb = mw_pair()
mw = MW(pd, e.IBV_MW_TYPE_2)
k = bind2(b, cb, mw, RW | RR)
write(a, ca, k, mem.buf + WIN + 100, 256, e.IBV_WC_SUCCESS, "WRITE 256 B through a type 2 window")
assert mem.read(256, WIN + 100) == local.read(256, 0), "WRITE through the window: data differs"
print("ok: WRITE data landed in the region")
read(a, ca, k, mem.buf + WIN, 4096, e.IBV_WC_SUCCESS, "READ the whole type 2 window")
assert local.read(4096, 0) == mem.read(4096, WIN), "READ through the window: data differs"
print("ok: READ data matches the region")

# A type 2 window serves only the QP it was bound through.
a2, b2, ca2, cb2 = mw_pair()
read(a2, ca2, k, mem.buf + WIN, 64, e.IBV_WC_REM_ACCESS_ERR, "READ through a window bound to another QP")
is_err(b2, "responder of the other QP")

# LOCAL_INV, then the key is refused.
post(b, 3, lambda: b.wr_local_inv(k))
expect(poll(cb, "local inv")[0], e.IBV_WC_SUCCESS, "LOCAL_INV of the type 2 window", e.IBV_WC_LOCAL_INV, 0)
read(a, ca, k, mem.buf + WIN, 64, e.IBV_WC_REM_ACCESS_ERR, "READ through the invalidated window")
is_err(b, "responder after the invalidated key")

# Zero-based window: addressed from 0.
a, b, ca, cb = mw_pair()
mwz = MW(pd, e.IBV_MW_TYPE_2)
kz = bind2(b, cb, mwz, RR | e.IBV_ACCESS_ZERO_BASED, what="bind zero-based type 2")
read(a, ca, kz, 128, 512, e.IBV_WC_SUCCESS, "READ at offset 128 of a zero-based window")
assert local.read(512, 0) == mem.read(512, WIN + 128), "zero-based READ: data differs"
print("ok: zero-based READ data matches the region")

# SEND with Invalidate: the receive completion names the key.
mws = MW(pd, e.IBV_MW_TYPE_2)
ks = bind2(b, cb, mws, RW | RR)
b.post_recv(RecvWR(wr_id=40, num_sge=1, sg=[SGE(local.buf + 8192, 256, local.lkey)]))
post(a, 4, lambda: a.wr_send_inv(ks), SGE(local.buf, 64, local.lkey))
expect(poll(ca, "send inv")[0], e.IBV_WC_SUCCESS, "SEND with Invalidate", e.IBV_WC_SEND, 64)
wc = poll(cb, "recv inv")[0]
expect(wc, e.IBV_WC_SUCCESS, "receive of a SEND with Invalidate", e.IBV_WC_RECV, 64)
assert wc.wc_flags & 4, f"wc_flags {wc.wc_flags:#x} without IB_WC_WITH_INVALIDATE"
assert wc.imm_data in (ks, int.from_bytes(ks.to_bytes(4, "little"), "big")), f"{wc.imm_data:#x}"
print("ok: the receive completion has IB_WC_WITH_INVALIDATE (kernel bit 2) and the invalidated rkey")
read(a, ca, ks, mem.buf + WIN, 64, e.IBV_WC_REM_ACCESS_ERR, "READ through the window a SEND invalidated")

# SEND with Invalidate of a region's key: the receive fails, the SEND is
# acknowledged (the message was received).
a, b, ca, cb = mw_pair()
b.post_recv(RecvWR(wr_id=41, num_sge=1, sg=[SGE(local.buf + 8192, 256, local.lkey)]))
post(a, 5, lambda: a.wr_send_inv(mem.rkey), SGE(local.buf, 64, local.lkey))
expect(poll(ca, "send inv bad")[0], e.IBV_WC_SUCCESS, "SEND with Invalidate of a region key", e.IBV_WC_SEND,
       64)
expect(poll(cb, "recv inv bad")[0], e.IBV_WC_REM_INV_REQ_ERR, "its receive")
is_err(b, "receiver of the bad invalidate")

# Type 1: ibv_bind_mw, PD-wide, with its own rights.
a, b, ca, cb = mw_pair()
mw1 = MW(pd, e.IBV_MW_TYPE_1)
old = mw1.rkey
b.bind_mw(mw1, MWBind(MWBindInfo(mem, mem.buf + WIN, 8192, RR), e.IBV_SEND_SIGNALED, wr_id=60))
expect(poll(cb, "bind type 1")[0], e.IBV_WC_SUCCESS, "ibv_bind_mw type 1", e.IBV_WC_BIND_MW, 0)
assert mw1.rkey == next_key(old), f"rkey {mw1.rkey:#x} after bind of {old:#x}"
read(a, ca, mw1.rkey, mem.buf + WIN + 4096, 4096, e.IBV_WC_SUCCESS, "READ through a type 1 window")
assert local.read(4096, 0) == mem.read(4096, WIN + 4096), "type 1 READ: data differs"
a3, b3, ca3, cb3 = mw_pair()
read(a3, ca3, mw1.rkey, mem.buf + WIN, 64, e.IBV_WC_SUCCESS, "READ through the type 1 window from another QP")
write(a3, ca3, mw1.rkey, mem.buf + WIN, 64, e.IBV_WC_REM_ACCESS_ERR, "WRITE through a read-only type 1 window")
is_err(b3, "responder of the refused WRITE")

# A region with a bound window cannot be deregistered.
mem2 = MR(pd, 8192, ALL | BIND)
mw1b = MW(pd, e.IBV_MW_TYPE_1)
b.bind_mw(mw1b, MWBind(MWBindInfo(mem2, mem2.buf, 8192, RR), e.IBV_SEND_SIGNALED, wr_id=61))
expect(poll(cb, "bind mem2")[0], e.IBV_WC_SUCCESS, "bind type 1 to a second region", e.IBV_WC_BIND_MW, 0)
try:
    mem2.close()
    raise AssertionError("a region with a bound window was deregistered")
except PyverbsRDMAError as err:
    print(f"ok: deregistering a region with a bound window fails (errno {err.error_code})")
mw1b.close()
mem2.close()
print("ok: after the window is deallocated the region deregisters")

# Unbind (length 0), then the key is refused.
b.bind_mw(mw1, MWBind(MWBindInfo(mem, mem.buf, 0, RR), e.IBV_SEND_SIGNALED, wr_id=62))
expect(poll(cb, "unbind")[0], e.IBV_WC_SUCCESS, "unbind type 1 (length 0)", e.IBV_WC_BIND_MW, 0)
read(a, ca, mw1.rkey, mem.buf + WIN, 64, e.IBV_WC_REM_ACCESS_ERR, "READ through the unbound type 1 window")

# LOCAL_INV of a type 1 window fails.
a, b, ca, cb = mw_pair()
post(b, 7, lambda: b.wr_local_inv(mw1.rkey))
local_error(poll(cb, "local inv type 1")[0], e.IBV_WC_LOC_QP_OP_ERR, "LOCAL_INV of a type 1 window")
is_err(b, "QP of the refused LOCAL_INV")

# Bind errors.
nobind = MR(pd, SIZE, ALL)
ro = MR(pd, SIZE, RR | BIND)
for what, kw in (("bind to a region without MW_BIND", {"mr": nobind}),
                 ("bind of a window past the region's end", {"addr": mem.buf + SIZE - 100, "length": 4096}),
                 ("bind with remote write to a region without local write", {"mr": ro})):
    a, b, ca, cb = mw_pair()
    bind2(b, cb, MW(pd, e.IBV_MW_TYPE_2), RW | RR, status=e.IBV_WC_MW_BIND_ERR, what=what, **kw)
    is_err(b, f"QP after the {what}")

# The window's bounds (C rxe checks only the region's).
a, b, ca, cb = mw_pair()
kb = bind2(b, cb, MW(pd, e.IBV_MW_TYPE_2), RW | RR)
before = mem.read(SIZE, 0)
if c_rxe:
    print("deviation: C rxe allows an access through a window outside the window (inside its region)")
else:
    write(a, ca, kb, mem.buf + WIN - 64, 128, e.IBV_WC_REM_ACCESS_ERR, "WRITE through a window, past its start")
    assert mem.read(SIZE, 0) == before, "a refused WRITE changed the region"
    print("ok: nothing written")
print("mw_test: all checks passed")
