#!/usr/bin/python3
"""Asynchronous events through pyverbs (stock librxe, ibv_get_async_event),
two RC QPs on one device: IB_EVENT_QP_ACCESS_ERR at the responder of a
WRITE and of a READ with a wrong rkey (IBTA C9-222.1), IB_EVENT_CQ_ERR when
a send CQ overruns, IB_EVENT_SQ_DRAINED when a QP moved to SQD with
en_sqd_async_notify has nothing outstanding (also with a 1 MiB WRITE in
flight, which completes; a WQE posted in SQD waits for RTS).  Last, a QP
moved to SQD without en_sqd_async_notify: IBTA says no event, and rrxe
raises none; C rxe raises SQ_DRAINED anyway (a named deviation).  C rxe
also never executes a WQE posted in SQD (another named deviation).
usage: async_test.py DEV GIDX"""
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.wr import SGE

from rrxe_ksft.data import ramp
from rrxe_ksft.events import EVENT_NAMES, event_name, next_event
from rrxe_ksft.verbs import Endpoint, connect_pair, expect, make_qp, poll, rc_pair, send_wr, state, to_state

dev, gidx = sys.argv[1], int(sys.argv[2])
c_rxe = dev.startswith("rxe")
ctx = Context(name=dev)
pd = PD(ctx)
ALL = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
       | e.IBV_ACCESS_REMOTE_ATOMIC)
SIZE = 1 << 20
mr = MR(pd, SIZE, ALL)
dst = MR(pd, SIZE, ALL)


def expect_event(want, what):
    seen = []
    while True:
        ev = next_event(ctx)
        assert ev is not None, f"{what}: no {EVENT_NAMES[want]} within 10 s (seen: {seen})"
        if ev == want:
            break
        seen.append(event_name(ev))
    print(f"ok: {what}: {EVENT_NAMES[want]}")
    if seen:
        # How many overrun events come first depends on timing.
        print(f"note: before it: {', '.join(seen)}")


# Remote access errors: an event at the responder.
for op, name in ((e.IBV_WR_RDMA_WRITE, "WRITE"), (e.IBV_WR_RDMA_READ, "READ")):
    (a, b), (ca, cb) = rc_pair(ctx, pd, gidx, ALL)
    a.post_send(send_wr(1, op, [SGE(mr.buf, 64, mr.lkey)], dst.rkey ^ 0x5a, dst.buf))
    expect(poll(ca, name)[0], e.IBV_WC_REM_ACCESS_ERR, f"{name} with a wrong rkey (requester)")
    expect_event(e.IBV_EVENT_QP_ACCESS_ERR, f"{name} with a wrong rkey (responder)")

# CQ overrun: more signaled completions than the send CQ holds.
small = CQ(ctx, 4)
n = small.cqe + 3
big = CQ(ctx, 64)
qa = make_qp(pd, small, n + 1, 4, rcq=big)
qb = make_qp(pd, big)
here = Endpoint(ctx.query_gid(1, gidx), gidx)
connect_pair(qa, qb, here, here, ALL)
for i in range(n):
    qa.post_send(send_wr(i, e.IBV_WR_RDMA_WRITE, [SGE(mr.buf, 64, mr.lkey)], dst.rkey, dst.buf))
expect_event(e.IBV_EVENT_CQ_ERR, f"{n} completions on a CQ of {small.cqe}")

# SQ_DRAINED: idle, then with a 1 MiB WRITE in flight; a WQE posted in SQD
# waits for RTS.
(a, b), (ca, cb) = rc_pair(ctx, pd, gidx, ALL)
to_state(a, e.IBV_QPS_SQD, notify=1)
expect_event(e.IBV_EVENT_SQ_DRAINED, "SQD with nothing outstanding")
assert state(a) == e.IBV_QPS_SQD, state(a)
to_state(a, e.IBV_QPS_RTS)
mr.write(ramp(SIZE, 5), SIZE)
dst.write(bytes(SIZE), SIZE)
a.post_send(send_wr(10, e.IBV_WR_RDMA_WRITE, [SGE(mr.buf, SIZE, mr.lkey)], dst.rkey, dst.buf))
# In flight means started: C rxe drains a WQE it has not begun by never
# sending it, so wait for the first packet's bytes to land.
deadline = time.monotonic() + 10
while dst.read(64, 0) != mr.read(64, 0):
    assert time.monotonic() < deadline, "the 1 MiB WRITE did not start within 10 s"
    time.sleep(0.001)
to_state(a, e.IBV_QPS_SQD, notify=1)
expect_event(e.IBV_EVENT_SQ_DRAINED, "SQD with a 1 MiB WRITE in flight")
expect(poll(ca, "write in SQD")[0], e.IBV_WC_SUCCESS, "the WRITE in flight when SQD began", e.IBV_WC_RDMA_WRITE,
       SIZE)
assert dst.read(SIZE, 0) == mr.read(SIZE, 0), "WRITE data differs"
a.post_send(send_wr(11, e.IBV_WR_RDMA_WRITE, [SGE(mr.buf, 64, mr.lkey)], dst.rkey, dst.buf))
time.sleep(0.5)
cnt, _ = ca.poll(num_entries=1)
assert cnt == 0, "a WQE posted in SQD was executed"
to_state(a, e.IBV_QPS_RTS)
if c_rxe:
    # C rxe ignores the doorbell of a WQE posted in SQD and does not look
    # at the send queue again when the QP returns to RTS.
    print("deviation: C rxe never executes a WQE posted in SQD (not even after RTS)")
else:
    expect(poll(ca, "after SQD")[0], e.IBV_WC_SUCCESS, "the WQE posted in SQD, after RTS", e.IBV_WC_RDMA_WRITE,
           64)
    print("ok: a WQE posted in SQD waited for RTS")

# Without en_sqd_async_notify: no event.  Events arrive in order, so the
# next one must be the access error provoked afterwards.
(a, b), (ca, cb) = rc_pair(ctx, pd, gidx, ALL)
to_state(a, e.IBV_QPS_SQD)
time.sleep(0.5)
a2, b2 = rc_pair(ctx, pd, gidx, ALL)[0]
a2.post_send(send_wr(1, e.IBV_WR_RDMA_WRITE, [SGE(mr.buf, 64, mr.lkey)], dst.rkey ^ 0x5a, dst.buf))
ev = next_event(ctx)
if c_rxe:
    assert ev == e.IBV_EVENT_SQ_DRAINED, event_name(ev)
    print("deviation: C rxe raises SQ_DRAINED without en_sqd_async_notify")
else:
    assert ev == e.IBV_EVENT_QP_ACCESS_ERR, f"event {event_name(ev)} without en_sqd_async_notify"
    print("ok: no SQ_DRAINED without en_sqd_async_notify (IBTA): the next event is the access error after it")
print("async_test: all checks passed")
