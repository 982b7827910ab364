#!/usr/bin/python3
"""RDMA READ through pyverbs (stock librxe), two RC QPs on one device: a
READ of 8 KiB at path MTU 1024 (8 response packets), a READ scattered
into three local SGEs, a pipeline of READs limited by max_rd_atomic, a
READ after a SEND on the same QP; then the errors, each with IBTA's
completion status on the requester, the responder QP in the error state
and nothing written: wrong rkey, region without remote read, range past
the region's end, QP without remote-read access, responder without
resources (max_dest_rd_atomic 0), local buffer without local write.
Prints one line per check; the scenario runs it on rrxe and on C rxe and
compares the lines.  usage: read_test.py DEV GIDX"""
import sys

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.wr import SGE, RecvWR, SendWR

from rrxe_ksft.data import ramp
from rrxe_ksft.verbs import error_state, expect, poll, rc_pair, send_wr

dev, gidx = sys.argv[1], int(sys.argv[2])
ctx = Context(name=dev)
pd = PD(ctx)
SIZE = 8192
LW = e.IBV_ACCESS_LOCAL_WRITE
ALL = LW | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC
pattern = ramp(SIZE, 13, 5)
remote = MR(pd, SIZE, ALL)
remote.write(pattern, SIZE)
local = MR(pd, SIZE, ALL)
wo = MR(pd, SIZE, LW | e.IBV_ACCESS_REMOTE_WRITE)
ro_local = MR(pd, SIZE, e.IBV_ACCESS_REMOTE_READ)


def clear(mr):
    mr.write(bytes(SIZE), SIZE)


# 8 KiB in 8 response packets.
(a, b), (ca, cb) = rc_pair(ctx, pd, gidx, ALL)
clear(local)
a.post_send(send_wr(1, e.IBV_WR_RDMA_READ, [SGE(local.buf, SIZE, local.lkey)], remote.rkey, remote.buf))
expect(poll(ca, "read")[0], e.IBV_WC_SUCCESS, "READ 8 KiB", e.IBV_WC_RDMA_READ, SIZE)
assert local.read(SIZE, 0) == pattern, "read data differs"
print("ok: read data matches")

# Three local SGEs, from an offset in the remote region.
clear(local)
sges = [SGE(local.buf, 100, local.lkey), SGE(local.buf + 1000, 3000, local.lkey),
        SGE(local.buf + 5000, 1900, local.lkey)]
a.post_send(send_wr(2, e.IBV_WR_RDMA_READ, sges, remote.rkey, remote.buf + 77))
expect(poll(ca, "read sges")[0], e.IBV_WC_SUCCESS, "READ 5000 B into 3 SGEs", e.IBV_WC_RDMA_READ, 5000)
got = local.read(100, 0) + local.read(3000, 1000) + local.read(1900, 5000)
assert got == pattern[77:77 + 5000], "scattered read data differs"
assert local.read(900, 100) == bytes(900), "bytes between the SGEs were written"
print("ok: scattered read data matches, nothing between the SGEs")

# Sixteen READs of 512 B posted at once, max_rd_atomic 1: one at a time,
# completed in order.
clear(local)
for i in range(16):
    a.post_send(send_wr(100 + i, e.IBV_WR_RDMA_READ, [SGE(local.buf + i * 512, 512, local.lkey)], remote.rkey,
                        remote.buf + (15 - i) * 512))
wcs = poll(ca, "16 reads", 16)
assert [w.wr_id for w in wcs] == list(range(100, 116)), [w.wr_id for w in wcs]
for w in wcs:
    assert w.status == e.IBV_WC_SUCCESS, w.status
for i in range(16):
    assert local.read(512, i * 512) == pattern[(15 - i) * 512:(16 - i) * 512], f"read {i} differs"
print("ok: 16 pipelined READs completed in order, data matches")

# A SEND then a READ on the same QP: both complete, in order.
b.post_recv(RecvWR(wr_id=9, num_sge=1, sg=[SGE(remote.buf + 4096, 64, remote.lkey)]))
a.post_send(SendWR(wr_id=3, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(local.buf, 64, local.lkey)],
                   send_flags=e.IBV_SEND_SIGNALED))
a.post_send(send_wr(4, e.IBV_WR_RDMA_READ, [SGE(local.buf, 64, local.lkey)], remote.rkey, remote.buf))
sw, rw = poll(ca, "send+read", 2)
expect(sw, e.IBV_WC_SUCCESS, "SEND before a READ", e.IBV_WC_SEND, 64)
expect(rw, e.IBV_WC_SUCCESS, "READ after a SEND", e.IBV_WC_RDMA_READ, 64)
expect(poll(cb, "recv")[0], e.IBV_WC_SUCCESS, "its SEND received", e.IBV_WC_RECV, 64)
remote.write(pattern, SIZE)


def error_case(what, status, rkey=None, addr=None, lmr=None, **kw):
    """A READ that must fail with `status`; the responder QP must end in
    the error state (remote errors) and the local buffer stay untouched."""
    (a, b), (ca, cb) = rc_pair(ctx, pd, gidx, ALL, **kw)
    lmr = lmr or local
    if lmr is local:
        clear(local)
    a.post_send(send_wr(5, e.IBV_WR_RDMA_READ, [SGE(lmr.buf, 256, lmr.lkey)], remote.rkey if rkey is None else rkey,
                        remote.buf if addr is None else addr))
    expect(poll(ca, what)[0], status, what + " (requester)")
    assert error_state(a) == e.IBV_QPS_ERR, error_state(a)
    if status != e.IBV_WC_LOC_PROT_ERR:
        assert error_state(b) == e.IBV_QPS_ERR, f"{what}: responder state {error_state(b)}"
        print(f"ok: {what}: both QPs in the error state")
    if lmr is local:
        assert local.read(SIZE, 0) == bytes(SIZE), f"{what}: local buffer written"


error_case("READ with a wrong rkey", e.IBV_WC_REM_ACCESS_ERR, rkey=remote.rkey ^ 0x5a)
error_case("READ from a region without remote read", e.IBV_WC_REM_ACCESS_ERR, rkey=wo.rkey, addr=wo.buf)
error_case("READ past the end of the region", e.IBV_WC_REM_ACCESS_ERR, addr=remote.buf + SIZE - 128)
error_case("READ to a QP without remote-read access", e.IBV_WC_REM_INV_REQ_ERR,
           b_kw={"access": LW | e.IBV_ACCESS_REMOTE_WRITE})
error_case("READ to a QP with max_dest_rd_atomic 0", e.IBV_WC_REM_INV_REQ_ERR,
           b_kw={"max_dest_rd_atomic": 0})
error_case("READ into a local region without local write", e.IBV_WC_LOC_PROT_ERR, lmr=ro_local)
print("read_test: all checks passed")
