#!/usr/bin/python3
"""RC over a lossy link (pyverbs, stock librxe): QP a on device A sends N
messages (SENDs of 64 KiB into posted receives, and RDMA WRITEs) to QP b on
device B, the devices in two namespaces joined by a veth with netem loss.
Every completion must succeed and the data arrive byte-exact; both QPs stay
up until the sender has all its completions (so a lost final ACK is
retransmitted, not left to a peer that has exited).
usage: loss_test.py DEV_A GIDX_A DEV_B GIDX_B [N]"""
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

dev_a, gidx_a, dev_b, gidx_b = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
n = int(sys.argv[5]) if len(sys.argv) > 5 else 100
SIZE = 65536
RW = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE


class End:
    def __init__(self, dev, gidx):
        self.ctx = Context(name=dev)
        self.gidx = gidx
        self.gid = self.ctx.query_gid(1, gidx)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 256)
        self.mr = MR(self.pd, SIZE * 2, RW)
        self.qp = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq,
                                         cap=QPCap(max_send_wr=64, max_recv_wr=64, max_send_sge=1, max_recv_sge=1)))

    def connect(self, peer):
        a = QPAttr()
        a.qp_state = e.IBV_QPS_INIT
        a.pkey_index = 0
        a.port_num = 1
        a.qp_access_flags = RW
        self.qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
        a = QPAttr()
        a.qp_state = e.IBV_QPS_RTR
        a.path_mtu = e.IBV_MTU_1024
        a.dest_qp_num = peer.qp.qp_num
        a.rq_psn = 100
        a.max_dest_rd_atomic = 1
        a.min_rnr_timer = 1
        a.ah_attr = AHAttr(gr=GlobalRoute(dgid=peer.gid, sgid_index=self.gidx, hop_limit=64), is_global=1, port_num=1)
        self.qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN
                       | e.IBV_QP_RQ_PSN | e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
        a = QPAttr()
        a.qp_state = e.IBV_QPS_RTS
        a.timeout = 12
        a.retry_cnt = 7
        a.rnr_retry = 7
        a.sq_psn = 100
        a.max_rd_atomic = 1
        self.qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY
                       | e.IBV_QP_SQ_PSN | e.IBV_QP_MAX_QP_RD_ATOMIC)


def poll(cq, what, timeout=60.0):
    end = time.time() + timeout
    while True:
        cnt, wcs = cq.poll(num_entries=1)
        if cnt:
            wc = wcs[0]
            assert wc.status == e.IBV_WC_SUCCESS, f"{what}: status {wc.status}"
            return wc
        if time.time() > end:
            raise AssertionError(f"{what}: no completion in {timeout}s")


a, b = End(dev_a, gidx_a), End(dev_b, gidx_b)
a.connect(b)
b.connect(a)
for i in range(n):
    pattern = bytes(((i + j * 13) & 0xff) for j in range(SIZE))
    a.mr.write(pattern, SIZE)
    if i % 2 == 0:
        b.qp.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(b.mr.buf, SIZE, b.mr.lkey)]))
        wr = SendWR(wr_id=i, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(a.mr.buf, SIZE, a.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        a.qp.post_send(wr)
        poll(a.cq, f"send {i}")
        wc = poll(b.cq, f"recv {i}")
        assert wc.byte_len == SIZE, wc.byte_len
        got = b.mr.read(SIZE, 0)
    else:
        wr = SendWR(wr_id=i, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(a.mr.buf, SIZE, a.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(b.mr.rkey, b.mr.buf + SIZE)
        a.qp.post_send(wr)
        poll(a.cq, f"write {i}")
        got = b.mr.read(SIZE, SIZE)
    assert got == pattern, f"message {i}: data differs"
print(f"loss_test: {n} messages of {SIZE} B delivered byte-exact")
