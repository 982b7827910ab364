#!/usr/bin/python3
"""Live RC traffic for the remote-flood test (pyverbs, stock librxe):
two RC QP pairs between device A (the one under attack) and device B, one
with A as requester (X: A -> B) and one with A as responder (Y: B -> A),
alternately carrying SENDs into posted receives and RDMA WRITEs of SIZE
bytes of fresh random data, each checked byte for byte at the receiver,
until the file STOP exists (and at least MIN messages went through).

All PSNs start at 100.  Once connected, A's QPs go to INFO as
"rc:QPN:100,rc:QPN:100" (roce-flood --live).  The traffic stays far
within roce-flood's LIVE_SPAN (2^20 PSNs) of its start: it stops on its
own before that.

Exit status: 0 every message byte-exact; 3 the traffic failed cleanly (a
completion with an error status: printed); 1 data corruption, a hang (no
completion within 60 s) or any other error.
usage: flood_traffic.py DEV_A GIDX_A DEV_B GIDX_B INFO STOP [MIN] [SIZE]"""
import os
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.wr import SGE, RecvWR, SendWR

from rrxe_ksft.handoff import publish
from rrxe_ksft.verbs import CompletionError, Device, connect_pair, make_qp, poll_one, send_wr

dev_a, gidx_a, dev_b, gidx_b = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
info, stop = sys.argv[5], sys.argv[6]
min_msgs = int(sys.argv[7]) if len(sys.argv) > 7 else 4
SIZE = int(sys.argv[8]) if len(sys.argv) > 8 else 16384
PSN = 100
MTU = 1024
LIVE_SPAN = 1 << 20
RW = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
HANG = 60.0  # seconds without a completion: a hang (exit 1)


class Dev(Device):
    def __init__(self, name, gidx):
        super().__init__(name, gidx)
        self.cq = CQ(self.ctx, 256)


class End:
    def __init__(self, dev):
        self.dev = dev
        self.cq = CQ(dev.ctx, 256)
        self.mr = MR(dev.pd, SIZE * 2, RW)
        self.qp = make_qp(dev.pd, self.cq, 16, 16)


def message(src, dst, i, send):
    data = os.urandom(SIZE)
    src.mr.write(data, SIZE)
    kind = "send" if send else "write"
    if send:
        dst.qp.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(dst.mr.buf, SIZE, dst.mr.lkey)]))
        src.qp.post_send(SendWR(wr_id=i, opcode=e.IBV_WR_SEND, num_sge=1,
                                sg=[SGE(src.mr.buf, SIZE, src.mr.lkey)], send_flags=e.IBV_SEND_SIGNALED))
        poll_one(src.cq, f"{kind} {i}", HANG)
        wc = poll_one(dst.cq, f"recv {i}", HANG)
        assert wc.byte_len == SIZE, f"recv {i}: byte_len {wc.byte_len}"
        assert wc.wr_id == i, f"recv {i}: completed receive {wc.wr_id}"
        got = dst.mr.read(SIZE, 0)
    else:
        src.qp.post_send(send_wr(i, e.IBV_WR_RDMA_WRITE, [SGE(src.mr.buf, SIZE, src.mr.lkey)], dst.mr.rkey,
                                 dst.mr.buf + SIZE))
        poll_one(src.cq, f"{kind} {i}", HANG)
        got = dst.mr.read(SIZE, SIZE)
    assert got == data, f"DATA CORRUPTION: {kind} {i} arrived different"


A, B = Dev(dev_a, gidx_a), Dev(dev_b, gidx_b)
xa, xb = End(A), End(B)     # X: A requester
ya, yb = End(A), End(B)     # Y: A responder
for s, d in ((xa, xb), (ya, yb)):
    connect_pair(s.qp, d.qp, s.dev, d.dev, RW, psn=PSN, peer_psn=PSN, timeout=12, retry_cnt=7)
publish(info, f"rc:{xa.qp.qp_num}:{PSN},rc:{ya.qp.qp_num}:{PSN}\n")

pkts = (SIZE + MTU - 1) // MTU
# Each QP carries every other message: stay LIVE_SPAN PSNs from the start.
limit = 2 * (LIVE_SPAN // pkts) - 64
i = 0
t0 = time.time()
try:
    while i < limit and (i < min_msgs or not os.path.exists(stop)):
        pair = (xa, xb) if i % 2 == 0 else (yb, ya)
        message(pair[0], pair[1], i, (i // 2) % 2 == 0)
        i += 1
except CompletionError as err:
    print(f"flood_traffic: failed cleanly after {i} messages: {err}")
    sys.exit(3)
print(f"flood_traffic: {i} messages of {SIZE} B byte-exact in {time.time() - t0:.1f} s "
      f"(A requester and responder)")
