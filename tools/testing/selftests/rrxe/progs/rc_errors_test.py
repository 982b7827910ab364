#!/usr/bin/python3
"""The RC data path's error handling through pyverbs (stock librxe), two
QPs on one device talking to each other: a working RDMA WRITE and SEND with
immediate (positive controls, data compared), then a wrong rkey, a write
to a region without remote-write access, a send from a bad lkey, a send
with no receive posted (RNR retries exhausted), each with the completion
status IBTA prescribes on the requester and the responder QP moved to the
error state with its receives flushed.  usage: rc_errors_test.py DEV GIDX"""
import sys
import time

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.wr import SGE, RecvWR, SendWR

from rrxe_ksft.data import ramp
from rrxe_ksft.verbs import error_state, expect, poll, rc_pair, send_wr, state

dev, gidx = sys.argv[1], int(sys.argv[2])
c_rxe = dev.startswith("rxe")  # the C driver, where it deviates from IBTA
ctx = Context(name=dev)
pd = PD(ctx)
SIZE = 8192
RW = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ


def post_recv(qp, mr, wr_id=7):
    qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1, sg=[SGE(mr.buf, SIZE, mr.lkey)]))


src = MR(pd, SIZE, RW)
dst = MR(pd, SIZE, RW)
ro = MR(pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ)
pattern = ramp(SIZE, 7, 3)
src.write(pattern, SIZE)

# Positive controls: WRITE (2 packets at 1024 MTU... 8 of them) and SEND
# with immediate, data compared.
(a, b), (ca, cb) = rc_pair(ctx, pd, gidx, RW, sge=2)
a.post_send(send_wr(1, e.IBV_WR_RDMA_WRITE, [SGE(src.buf, SIZE, src.lkey)], dst.rkey, dst.buf))
expect(poll(ca, "write")[0], e.IBV_WC_SUCCESS, "RDMA WRITE 8 KiB")
assert dst.read(SIZE, 0) == pattern, "written data differs"
print("ok: written data matches")
post_recv(b, dst)
dst.write(bytes(SIZE), SIZE)
wr = SendWR(wr_id=2, opcode=e.IBV_WR_SEND_WITH_IMM, num_sge=1, sg=[SGE(src.buf, 3000, src.lkey)],
            send_flags=e.IBV_SEND_SIGNALED, imm_data=0x12345678)
a.post_send(wr)
expect(poll(ca, "send")[0], e.IBV_WC_SUCCESS, "SEND with immediate, 3000 B")
rwc = poll(cb, "recv")[0]
expect(rwc, e.IBV_WC_SUCCESS, "receive of it")
assert rwc.byte_len == 3000 and rwc.wr_id == 7 and rwc.wc_flags & e.IBV_WC_WITH_IMM, (rwc.byte_len, rwc.wr_id, rwc.wc_flags)
assert dst.read(3000, 0) == pattern[:3000], "received data differs"
print(f"ok: received 3000 B with imm {rwc.imm_data:#x}")


def remote_access_case(rkey, addr, what):
    (a, b), (ca, cb) = rc_pair(ctx, pd, gidx, RW, sge=2)
    post_recv(b, dst, wr_id=9)
    a.post_send(send_wr(3, e.IBV_WR_RDMA_WRITE, [SGE(src.buf, 64, src.lkey)], rkey, addr))
    expect(poll(ca, what)[0], e.IBV_WC_REM_ACCESS_ERR, what + " (requester)")
    expect(poll(cb, what + " responder flush")[0], e.IBV_WC_WR_FLUSH_ERR, what + " (responder's receive flushed)")
    assert error_state(a) == e.IBV_QPS_ERR and error_state(b) == e.IBV_QPS_ERR, (state(a), state(b))
    print(f"ok: {what}: both QPs in the error state")


remote_access_case(dst.rkey ^ 0x5a, dst.buf, "WRITE with a wrong rkey")
remote_access_case(ro.rkey, ro.buf, "WRITE to a region without remote write")
remote_access_case(dst.rkey, dst.buf + SIZE - 8, "WRITE past the end of the region")

# A bad lkey fails locally.
(a, b), (ca, cb) = rc_pair(ctx, pd, gidx, RW, sge=2)
a.post_send(SendWR(wr_id=4, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(src.buf, 64, src.lkey ^ 0x5a00)],
                   send_flags=e.IBV_SEND_SIGNALED))
wc = poll(ca, "bad lkey")[0]
if c_rxe and wc.status == e.IBV_WC_WR_FLUSH_ERR:
    # C rxe completes the failing WQE itself as flushed.
    print("ok: SEND from a bad lkey: C rxe reports WR_FLUSH_ERR (IBTA: LOC_PROT_ERR)")
else:
    expect(wc, e.IBV_WC_LOC_PROT_ERR, "SEND from a bad lkey")
a.post_send(SendWR(wr_id=5, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(src.buf, 64, src.lkey)],
                   send_flags=e.IBV_SEND_SIGNALED))
expect(poll(ca, "after error")[0], e.IBV_WC_WR_FLUSH_ERR, "SEND posted in the error state")

# No receive posted and no RNR retries: RNR retry exceeded.
(a, b), (ca, cb) = rc_pair(ctx, pd, gidx, RW, sge=2, rnr_retry=0)
a.post_send(SendWR(wr_id=6, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(src.buf, 64, src.lkey)],
                   send_flags=e.IBV_SEND_SIGNALED))
expect(poll(ca, "rnr")[0], e.IBV_WC_RNR_RETRY_EXC_ERR, "SEND without a receive, rnr_retry 0")

# RNR, then a receive shows up: the retry succeeds.
(a, b), (ca, cb) = rc_pair(ctx, pd, gidx, RW, sge=2, rnr_retry=7)
a.post_send(SendWR(wr_id=8, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(src.buf, 64, src.lkey)],
                   send_flags=e.IBV_SEND_SIGNALED))
time.sleep(0.2)
post_recv(b, dst, wr_id=10)
expect(poll(ca, "rnr then recv")[0], e.IBV_WC_SUCCESS, "SEND retried after RNR once a receive is posted")
expect(poll(cb, "rnr recv")[0], e.IBV_WC_SUCCESS, "its receive")

# A message longer than the receive buffer.
(a, b), (ca, cb) = rc_pair(ctx, pd, gidx, RW, sge=2)
b.post_recv(RecvWR(wr_id=11, num_sge=1, sg=[SGE(dst.buf, 100, dst.lkey)]))
a.post_send(SendWR(wr_id=12, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(src.buf, 200, src.lkey)],
                   send_flags=e.IBV_SEND_SIGNALED))
wc = poll(ca, "too long")[0]
if c_rxe and wc.status == e.IBV_WC_REM_OP_ERR:
    # C rxe NAKs it as a remote operational error.
    print("ok: SEND longer than the receive: C rxe reports REM_OP_ERR (IBTA: invalid request)")
else:
    expect(wc, e.IBV_WC_REM_INV_REQ_ERR, "SEND longer than the receive (requester)")
wc = poll(cb, "too long recv")[0]
if c_rxe and wc.status == e.IBV_WC_LOC_QP_OP_ERR:
    print("ok: SEND longer than the receive: C rxe's receive completes with LOC_QP_OP_ERR (IBTA: LOC_LEN_ERR)")
else:
    expect(wc, e.IBV_WC_LOC_LEN_ERR, "SEND longer than the receive (responder)")

# Destroying a QP with traffic in flight.
(a, b), (ca, cb) = rc_pair(ctx, pd, gidx, RW, sge=2)
for i in range(8):
    post_recv(b, dst, wr_id=100 + i)
for i in range(8):
    a.post_send(SendWR(wr_id=200 + i, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(src.buf, SIZE, src.lkey)],
                       send_flags=e.IBV_SEND_SIGNALED))
b.close()
time.sleep(0.5)
a.close()
print("ok: QPs destroyed with traffic in flight")
print("rc_errors_test: all passed")
