#!/usr/bin/python3
"""Forged peers, the QP side of scenario 21-forged-peers (pyverbs, stock
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
import os
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

import verbs_util  # noqa: E402 (tools/testing/vm, the script's directory)

dev_a, gidx_a, dev_b, gidx_b, info, go = (sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
                                          sys.argv[5], sys.argv[6])
MRSIZE = 65536
RECV = 4096          # each posted receive; 4 per QP
WRITE_OFF = 32768    # the WRITE target in A's region
NRECV = 4
RW = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
PSNS = {e.IBV_QPT_RC: 0x1000, e.IBV_QPT_UC: 0x2000}


class Dev(verbs_util.Device):
    def __init__(self, name, gidx):
        super().__init__(name, gidx)
        self.cq = CQ(self.ctx, 64)
        self.mr = MR(self.pd, MRSIZE, RW)


def make_qp(d, qpt):
    return QP(d.pd, QPInitAttr(qp_type=qpt, scq=d.cq, rcq=d.cq,
                               cap=QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1, max_recv_sge=1)))


def connect(me, qp, peer, peer_qp, qpt):
    psn = PSNS[qpt]
    verbs_util.connect(qp, peer_qp.qp_num, peer.gid, me.gidx, RW, psn=psn, peer_psn=psn, timeout=12,
                       retry_cnt=7)


def poll(cq, what, timeout=30.0):
    end = time.time() + timeout
    while True:
        cnt, wcs = cq.poll(num_entries=1)
        if cnt:
            wc = wcs[0]
            assert wc.status == e.IBV_WC_SUCCESS, f"{what}: status {wc.status}"
            return wc
        if time.time() > end:
            raise AssertionError(f"{what}: no completion in {timeout}s")


A, B = Dev(dev_a, gidx_a), Dev(dev_b, gidx_b)
A.mr.write(b"\x5a" * MRSIZE, MRSIZE)
qps = {}
for qpt in (e.IBV_QPT_RC, e.IBV_QPT_UC):
    qa, qb = make_qp(A, qpt), make_qp(B, qpt)
    connect(A, qa, B, qb, qpt)
    connect(B, qb, A, qa, qpt)
    base = 0 if qpt == e.IBV_QPT_RC else NRECV * RECV
    for k in range(NRECV):
        qa.post_recv(RecvWR(wr_id=qpt * 100 + k, num_sge=1, sg=[SGE(A.mr.buf + base + k * RECV, RECV, A.mr.lkey)]))
    qps[qpt] = (qa, qb, base)

rc, uc = qps[e.IBV_QPT_RC][0], qps[e.IBV_QPT_UC][0]
with open(info + ".tmp", "w") as f:
    f.write(f"RC_QPN={rc.qp_num}\nRC_PSN={PSNS[e.IBV_QPT_RC]}\nUC_QPN={uc.qp_num}\nUC_PSN={PSNS[e.IBV_QPT_UC]}\n"
            f"RKEY={A.mr.rkey}\nVA={A.mr.buf + WRITE_OFF}\nMAXLEN={MRSIZE - WRITE_OFF}\n")
os.rename(info + ".tmp", info)

end = time.time() + 600
while not os.path.exists(go):
    assert time.time() < end, "no go file in 600 s"
    time.sleep(0.1)
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
    data = bytes((i * 7 + qpt) & 0xff for i in range(512))
    B.mr.write(data, len(data))
    qb.post_send(SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(B.mr.buf, len(data), B.mr.lkey)],
                        send_flags=e.IBV_SEND_SIGNALED))
    poll(B.cq, f"{name} send")
    wc = poll(A.cq, f"{name} recv")
    assert wc.wr_id == qpt * 100, f"{name}: the real SEND completed receive {wc.wr_id}, not the first posted"
    assert wc.byte_len == len(data), f"{name}: byte_len {wc.byte_len}"
    assert A.mr.read(len(data), base) == data, f"{name}: real SEND data differs"
    wr = SendWR(wr_id=2, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(B.mr.buf, len(data), B.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    off = WRITE_OFF + (0 if qpt == e.IBV_QPT_RC else 4096)
    wr.set_wr_rdma(A.mr.rkey, A.mr.buf + off)
    qb.post_send(wr)
    poll(B.cq, f"{name} write")
    # UC WRITE completes at the sender when sent: wait for it to land.
    for _ in range(100):
        if A.mr.read(len(data), off) == data:
            break
        time.sleep(0.05)
    assert A.mr.read(len(data), off) == data, f"{name}: real WRITE data differs"
print("forged_peers: the real peer's SEND and WRITE land byte-exact on RC and UC afterwards")
