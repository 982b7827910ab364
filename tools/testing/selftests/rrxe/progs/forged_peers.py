#!/usr/bin/python3
"""Forged peers, the QP side of the forged-peers test (pyverbs, stock
librxe).  Device A is the target: an RC QP and a UC QP, each connected to
its peer on device B, with receives posted and a region open to remote
WRITE, all filled with 0x5a.  Their numbers, the PSN each expects, the
rkey and the VA of the WRITE target go to INFO (shell assignments); then
this waits for the file GO, which the scenario creates after it has
injected, from other IP addresses, packets that carry exactly those
values (valid ICRC).  Then:

* no completion on A's CQ, and A's memory still all 0x5a: nothing landed;
* B's real SEND and WRITE on each pair land byte-exact, in the first
  receive posted, with the PSNs B started from: the forged packets did
  not move the expected PSN nor consume a receive (for UC: did not leave a
  message half-open that B's packets would continue).

usage: forged_peers.py DEV_A GIDX_A DEV_B GIDX_B INFO GO"""
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.wr import SGE, RecvWR, SendWR

from rrxe_ksft.data import ramp
from rrxe_ksft.handoff import publish, wait_for_file
from rrxe_ksft.verbs import Device, connect_pair, make_qp, poll_one, send_wr

dev_a, gidx_a, dev_b, gidx_b, info, go = (sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
                                          sys.argv[5], sys.argv[6])
MRSIZE = 65536
RECV = 4096          # each posted receive; 4 per QP
WRITE_OFF = 32768    # the WRITE target in A's region
NRECV = 4
RW = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
PSNS = {e.IBV_QPT_RC: 0x1000, e.IBV_QPT_UC: 0x2000}


class Dev(Device):
    def __init__(self, name, gidx):
        super().__init__(name, gidx)
        self.cq = CQ(self.ctx, 64)
        self.mr = MR(self.pd, MRSIZE, RW)


A, B = Dev(dev_a, gidx_a), Dev(dev_b, gidx_b)
A.mr.write(b"\x5a" * MRSIZE, MRSIZE)
qps = {}
for qpt in (e.IBV_QPT_RC, e.IBV_QPT_UC):
    qa, qb = make_qp(A.pd, A.cq, 8, 8, qp_type=qpt), make_qp(B.pd, B.cq, 8, 8, qp_type=qpt)
    connect_pair(qa, qb, A, B, RW, psn=PSNS[qpt], peer_psn=PSNS[qpt], timeout=12, retry_cnt=7)
    base = 0 if qpt == e.IBV_QPT_RC else NRECV * RECV
    for k in range(NRECV):
        qa.post_recv(RecvWR(wr_id=qpt * 100 + k, num_sge=1, sg=[SGE(A.mr.buf + base + k * RECV, RECV, A.mr.lkey)]))
    qps[qpt] = (qa, qb, base)

rc, uc = qps[e.IBV_QPT_RC][0], qps[e.IBV_QPT_UC][0]
publish(info, f"RC_QPN={rc.qp_num}\nRC_PSN={PSNS[e.IBV_QPT_RC]}\nUC_QPN={uc.qp_num}\nUC_PSN={PSNS[e.IBV_QPT_UC]}\n"
        f"RKEY={A.mr.rkey}\nVA={A.mr.buf + WRITE_OFF}\nMAXLEN={MRSIZE - WRITE_OFF}\n")
wait_for_file(go, 600, 0.1)
time.sleep(0.5)

cnt, wcs = A.cq.poll(num_entries=8)
assert cnt == 0, f"forged packets completed {cnt} work requests on the target: " + \
    ", ".join(f"wr_id {w.wr_id} opcode {w.opcode} status {w.status} len {w.byte_len}" for w in wcs)
mem = A.mr.read(MRSIZE, 0)
if mem != b"\x5a" * MRSIZE:
    bad = [i for i in range(MRSIZE) if mem[i] != 0x5a]
    raise AssertionError(f"forged packets wrote {len(bad)} bytes of the target's memory, "
                         f"first at offset {bad[0]}: {mem[bad[0]:bad[0] + 16].hex()}")
print("forged_peers: no completion, target memory untouched")

# The real peer still gets through, from the PSNs it started with.
for qpt, name in ((e.IBV_QPT_RC, "RC"), (e.IBV_QPT_UC, "UC")):
    qa, qb, base = qps[qpt]
    data = ramp(512, 7, qpt)
    B.mr.write(data, len(data))
    qb.post_send(SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(B.mr.buf, len(data), B.mr.lkey)],
                        send_flags=e.IBV_SEND_SIGNALED))
    poll_one(B.cq, f"{name} send", 30)
    wc = poll_one(A.cq, f"{name} recv", 30)
    assert wc.wr_id == qpt * 100, f"{name}: the real SEND completed receive {wc.wr_id}, not the first posted"
    assert wc.byte_len == len(data), f"{name}: byte_len {wc.byte_len}"
    assert A.mr.read(len(data), base) == data, f"{name}: real SEND data differs"
    off = WRITE_OFF + (0 if qpt == e.IBV_QPT_RC else 4096)
    qb.post_send(send_wr(2, e.IBV_WR_RDMA_WRITE, [SGE(B.mr.buf, len(data), B.mr.lkey)], A.mr.rkey, A.mr.buf + off))
    poll_one(B.cq, f"{name} write", 30)
    # UC WRITE completes at the sender when sent: wait for it to land.
    for _ in range(100):
        if A.mr.read(len(data), off) == data:
            break
        time.sleep(0.05)
    assert A.mr.read(len(data), off) == data, f"{name}: real WRITE data differs"
print("forged_peers: the real peer's SEND and WRITE land byte-exact on RC and UC afterwards")
