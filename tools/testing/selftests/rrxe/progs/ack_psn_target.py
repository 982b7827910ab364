#!/usr/bin/python3
"""The target QP of the ack-psn test (pyverbs, stock librxe): an RC QP
on DEV_A connected to one on DEV_B, two receives posted, and a region of
8 KiB open to remote READ.  Its number, the PSN it expects, the rkey and
the VA go to INFO (shell assignments); after the file GO appears (the
scenario has injected its requests, as if from the peer QP), exactly one
receive must have completed, byte_len 64: the duplicate SEND was
acknowledged, not delivered again.

usage: ack_psn_target.py DEV_A GIDX_A DEV_B GIDX_B INFO GO"""
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.wr import SGE, RecvWR

from rrxe_ksft.handoff import publish, wait_for_file
from rrxe_ksft.verbs import Device, connect_pair, make_qp

dev_a, gidx_a, dev_b, gidx_b, info, go = (sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
                                          sys.argv[5], sys.argv[6])
ACC = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ
PSN = 0x3000
A, B = Device(dev_a, gidx_a), Device(dev_b, gidx_b)
cqa, cqb = CQ(A.ctx, 8), CQ(B.ctx, 8)
mr = MR(A.pd, 8192, ACC)
mr.write(bytes(range(256)) * 32, 8192)
qa, qb = make_qp(A.pd, cqa), make_qp(B.pd, cqb)
connect_pair(qa, qb, A, B, ACC, a_kw={"max_dest_rd_atomic": 4}, b_kw={"max_rd_atomic": 4}, psn=PSN, peer_psn=PSN)
for k in range(2):
    qa.post_recv(RecvWR(wr_id=k, num_sge=1, sg=[SGE(mr.buf + 4096 + k * 1024, 1024, mr.lkey)]))
publish(info, f"QPN={qa.qp_num}\nPSN={PSN}\nRKEY={mr.rkey}\nVA={mr.buf}\n")
wait_for_file(go, 120, 0.05)
time.sleep(0.5)
cnt, wcs = cqa.poll(num_entries=4)
assert cnt == 1, f"{cnt} completions on the target, want the one SEND's receive"
assert wcs[0].status == e.IBV_WC_SUCCESS and wcs[0].byte_len == 64, (wcs[0].status, wcs[0].byte_len)
print("ack_psn_target: one receive completed (64 bytes); the duplicate SEND was not delivered again")
