#!/usr/bin/python3
"""Hostile input on the UD and SRQ paths (rrxe only): WQEs written straight
into the rings librxe maps, as a buggy or hostile process could.
  * UD send WQEs naming address handle 0, 0xffffffff, and the number of
    an AH that was destroyed (read back from a WQE librxe wrote): each
    completes with LOC_QP_OP_ERR and the QP enters the error state;
  * an SRQ WQE claiming 1000 SGEs: the QP that takes it completes it in
    error and enters the error state; the SRQ keeps serving other QPs;
  * an SRQ producer index of 0xffffffff: taken masked (the zeroed slots
    read as empty WQEs, too short for the datagram, which is dropped),
    nothing read outside the ring, the receiving QP unharmed.
No case may crash, hang or complete successfully.
usage: ud_srq_hostile.py DEV GIDX"""
import struct
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

from rrxe_ksft.rings import new_maps, send_ring
from rrxe_ksft.verbs import error_state, make_ah, poll, state, ud_qp

QKEY = 0x1234

dev, gidx = sys.argv[1], int(sys.argv[2])
ctx = Context(name=dev)
pd = PD(ctx)
gid = ctx.query_gid(1, gidx)
mr = MR(pd, 65536, e.IBV_ACCESS_LOCAL_WRITE)


def send(q, h, dst, wr_id):
    wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(mr.buf, 16, mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_ud(h, dst.qp_num, QKEY)
    q.post_send(wr)


def ud_wqe(wr_id, dst_qpn, ah_num):
    """A zero-length UD SEND WQE as librxe would write it, but for ah_num."""
    w = bytearray(208)
    struct.pack_into("<QIII", w, 0, wr_id, 0, e.IBV_WR_SEND, e.IBV_SEND_SIGNALED)
    struct.pack_into("<IIHHI", w, 24, dst_qpn, QKEY, 0, 0, ah_num)
    return bytes(w)


# 1. UD WQEs naming no address handle.
cq = CQ(ctx, 64)
dst = ud_qp(pd, cq, QKEY)
h = make_ah(pd, gid, gidx)
for what, num in (("address handle 0", 0), ("address handle 0xffffffff", 0xffffffff),
                  ("a destroyed address handle", None)):
    q, rings = new_maps(lambda: ud_qp(pd, cq, QKEY))
    sq = send_ring(rings)
    if num is None:
        h2 = make_ah(pd, gid, gidx)
        send(q, h2, dst, 1)
        assert poll(cq, "valid send")[0].status == e.IBV_WC_SUCCESS
        num = struct.unpack_from("<I", sq.mem, sq.slot(sq.prod() - 1) + 36)[0]
        h2.close()
    sq.push(ud_wqe(2, dst.qp_num, num))
    # An empty post_send is the doorbell: post a WR pyverbs can build, on
    # the same QP, after the hostile one (it is flushed).
    send(q, h, dst, 3)
    wcs = poll(cq, what, n=2)
    got = sorted((w.wr_id, w.status) for w in wcs)
    assert got[0] == (2, e.IBV_WC_LOC_QP_OP_ERR), f"{what}: {got}"
    assert got[1] == (3, e.IBV_WC_WR_FLUSH_ERR), f"{what}: {got}"
    assert error_state(q) == e.IBV_QPS_ERR, f"{what}: QP state {error_state(q)}"
    print(f"ok: UD WQE naming {what}: LOC_QP_OP_ERR, QP in ERR")
cq_ok = CQ(ctx, 16)
q = ud_qp(pd, cq_ok, QKEY)
recv_q = ud_qp(pd, cq_ok, QKEY)
recv_q.post_recv(RecvWR(wr_id=5, num_sge=1, sg=[SGE(mr.buf + 4096, 256, mr.lkey)]))
send(q, h, recv_q, 6)
assert sorted(w.wr_id for w in poll(cq_ok, "UD after the hostile WQEs", n=2)) == [5, 6]
print("ok: UD still works after them")

# 2. SRQ WQEs with too many SGEs, and a wild producer index.
scq = CQ(ctx, 64)
srq, rings = new_maps(lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=2))))
assert len(rings) == 1, f"{len(rings)} SRQ ring mappings"
ring = rings[0]
w = bytearray(40 + 2 * 16)
struct.pack_into("<QII", w, 0, 7, 0, 0)
struct.pack_into("<IIIIII", w, 16, 256, 256, 0, 1000, 0, 0)   # dma: num_sge 1000
ring.push(bytes(w))
victim = ud_qp(pd, scq, QKEY, srq=srq)
sender = ud_qp(pd, scq, QKEY)
send(sender, h, victim, 8)
wcs = poll(scq, "datagram into a 1000-SGE SRQ WQE", n=2)
got = sorted((w.wr_id, w.status) for w in wcs)
assert got[0] == (7, e.IBV_WC_LOC_LEN_ERR) and got[1] == (8, e.IBV_WC_SUCCESS), f"{got}"
assert error_state(victim) == e.IBV_QPS_ERR, f"victim state {error_state(victim)}"
print("ok: SRQ WQE with 1000 SGEs: LOC_LEN_ERR on the QP that took it, QP in ERR")
good = ud_qp(pd, scq, QKEY, srq=srq)
srq.post_recv(RecvWR(wr_id=9, num_sge=1, sg=[SGE(mr.buf + 8192, 256, mr.lkey)]))
send(sender, h, good, 10)
assert sorted((w.wr_id, w.status) for w in poll(scq, "SRQ after it", n=2)) == [(9, 0), (10, 0)]
print("ok: the SRQ still serves another QP")
ring.set_prod(0xffffffff)
send(sender, h, good, 11)
wcs = poll(scq, "send with a wild SRQ producer index")
assert (wcs[0].wr_id, wcs[0].status) == (11, e.IBV_WC_SUCCESS), f"{wcs[0].wr_id} {wcs[0].status}"
# The ring now "holds" the zeroed slots: 0-byte WQEs, too short for the
# datagram, which is dropped (and counted); nothing is read outside it.
assert state(good) == e.IBV_QPS_RTS, f"receiver state {state(good)}"
print("ok: wild SRQ producer index: masked, the datagram dropped, the receiver still RTS")
# pyverbs does not order an SRQ before its PD at exit: close it here.
for q in (victim, good):
    q.close()
srq.close()
print("ud_srq_hostile: done")
