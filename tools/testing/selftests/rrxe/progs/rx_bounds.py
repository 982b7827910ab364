#!/usr/bin/python3
"""Receive bounds, the QP side of the receive-bounds test (pyverbs, stock
librxe).  Device A holds the targets: a UD QP whose receives (64 KiB + 64
bytes each) would take even the largest datagram, and a UD QP attached to
the multicast group 239.1.2.3; device B holds a UD sender.  The QP
numbers and the Q_Key go to INFO (shell assignments); then this waits for
the file GO, which the scenario creates after it has injected datagrams
longer than any MTU at the first QP and garbage at the multicast QPN.
Then:

* it prints TARGET_COMPLETIONS=N: how many of the oversized datagrams the
  first QP received (the scenario decides what N must be: 0 on rrxe);
* B sends 20 datagrams to the group, and the member receives each once,
  intact: the garbage did not starve real multicast.

usage: rx_bounds.py DEV_A GIDX_A DEV_B GIDX_B INFO GO"""
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import GID
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.wr import RecvWR, SGE, SendWR

from rrxe_ksft.data import ramp
from rrxe_ksft.handoff import publish, wait_for_file
from rrxe_ksft.verbs import Device, attach_mcast, make_ah, poll, ud_qp

dev_a, gidx_a, dev_b, gidx_b, info, go = (sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
                                          sys.argv[5], sys.argv[6])
QKEY = 0x5eed
MCAST_QPN = 0xffffff
GROUP = "0000:0000:0000:0000:0000:ffff:ef01:0203"   # 239.1.2.3
BIG = 65536 + 64     # one receive of the target: the largest datagram and its GRH fit
NBIG = 8
N = 20
LEN = 512
SLOT = 1024

A, B = Device(dev_a, gidx_a), Device(dev_b, gidx_b)
amr = MR(A.pd, NBIG * BIG + N * SLOT, e.IBV_ACCESS_LOCAL_WRITE)
bmr = MR(B.pd, N * LEN, e.IBV_ACCESS_LOCAL_WRITE)
tcq, mcq, scq = CQ(A.ctx, 64), CQ(A.ctx, 64), CQ(B.ctx, 64)
target = ud_qp(A.pd, tcq, QKEY, NBIG)
member = ud_qp(A.pd, mcq, QKEY, N)
sender = ud_qp(B.pd, scq, QKEY, N)
for k in range(NBIG):
    target.post_recv(RecvWR(wr_id=k, num_sge=1, sg=[SGE(amr.buf + k * BIG, BIG, amr.lkey)]))
mbase = NBIG * BIG
for k in range(N):
    member.post_recv(RecvWR(wr_id=k, num_sge=1, sg=[SGE(amr.buf + mbase + k * SLOT, SLOT, amr.lkey)]))
attach_mcast(member, GROUP)
publish(info, f"TARGET_QPN={target.qp_num}\nMEMBER_QPN={member.qp_num}\nQKEY={QKEY}\n")
wait_for_file(go, 600, 0.1)
time.sleep(0.3)

cnt, _ = tcq.poll(num_entries=NBIG)
print(f"TARGET_COMPLETIONS={cnt}")

ah = make_ah(B.pd, GID(GROUP), gidx_b, hop_limit=8)
for i in range(N):
    bmr.write(bytes([i]) + ramp(LEN - 1, 3, i), LEN, i * LEN)
    wr = SendWR(wr_id=i, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(bmr.buf + i * LEN, LEN, bmr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_ud(ah, MCAST_QPN, QKEY)
    sender.post_send(wr)
for wc in poll(scq, "multicast sends", n=N):
    assert wc.status == e.IBV_WC_SUCCESS, f"send status {wc.status}"
seen = []
for wc in poll(mcq, "multicast receives", n=N, timeout=30):
    assert wc.status == e.IBV_WC_SUCCESS and wc.byte_len == 40 + LEN, \
        f"member: status {wc.status} byte_len {wc.byte_len}"
    data = amr.read(LEN, mbase + wc.wr_id * SLOT + 40)
    seq = data[0]
    assert data == bytes([seq]) + ramp(LEN - 1, 3, seq), f"member: datagram {seq} corrupted"
    seen.append(seq)
assert sorted(seen) == list(range(N)), f"member received {sorted(seen)}"
time.sleep(0.2)
cnt, _ = mcq.poll(num_entries=1)
assert cnt == 0, "member: a datagram twice"
attach_mcast(member, GROUP, False)
print(f"rx_bounds: the group member received all {N} datagrams once, intact")
