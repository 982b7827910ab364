#!/usr/bin/python3
"""Queue pair verbs on an RDMA device through pyverbs (stock librxe maps the
send and receive rings): creation and caps, the IBTA state machine RESET ->
INIT -> RTR -> RTS -> SQD?/ERR -> RESET with the required attributes,
illegal transitions and bad values refused, query, UD QPs, many QPs and QPs
left for process exit.  usage: qp_test.py DEV GID_INDEX [--strict]

--strict also requires out-of-range attribute values (5-bit min_rnr_timer,
3-bit retry_cnt) to be refused: rrxe does, C rxe accepts some of them."""
import sys

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr

from rrxe_ksft.verbs import refused, to_state, ud_ready

dev, gidx = sys.argv[1], int(sys.argv[2])
strict = "--strict" in sys.argv[3:]
ctx = Context(name=dev)
pd = PD(ctx)
cq = CQ(ctx, 64)


def new_qp(qpt=e.IBV_QPT_RC, **cap):
    c = dict(max_send_wr=16, max_recv_wr=16, max_send_sge=2, max_recv_sge=2, max_inline_data=64)
    c.update(cap)
    return QP(pd, QPInitAttr(qp_type=qpt, scq=cq, rcq=cq, cap=QPCap(**c)))


qp = new_qp()
assert qp.qp_num >= 16 or dev.startswith("rxe"), qp.qp_num
attr, iattr = qp.query(e.IBV_QP_STATE | e.IBV_QP_CAP)
assert attr.qp_state == e.IBV_QPS_RESET
assert iattr.cap.max_send_wr >= 16 and iattr.cap.max_recv_wr >= 16, (iattr.cap.max_send_wr, iattr.cap.max_recv_wr)
assert iattr.cap.max_inline_data >= 64 and iattr.cap.max_send_sge >= 2
print(f"ok: RC QP {qp.qp_num:#x} created, caps sq={iattr.cap.max_send_wr} rq={iattr.cap.max_recv_wr}")

a = QPAttr()
a.qp_state = e.IBV_QPS_RTS
refused("RESET -> RTS", lambda: qp.modify(a, e.IBV_QP_STATE))

a = QPAttr()
a.qp_state = e.IBV_QPS_INIT
a.pkey_index = 0
a.port_num = 1
a.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
refused("INIT without PORT", lambda: qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_ACCESS_FLAGS))
qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
assert qp.query(e.IBV_QP_STATE)[0].qp_state == e.IBV_QPS_INIT

gr = GlobalRoute(dgid=ctx.query_gid(1, gidx), sgid_index=gidx, hop_limit=64)
a = QPAttr()
a.qp_state = e.IBV_QPS_RTR
a.path_mtu = e.IBV_MTU_1024
a.dest_qp_num = qp.qp_num
a.rq_psn = 0x123456
a.max_dest_rd_atomic = 4
a.min_rnr_timer = 12
a.ah_attr = AHAttr(gr=gr, is_global=1, port_num=1)
rtr = (e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN
       | e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
a.min_rnr_timer = 40
if strict:
    refused("min_rnr_timer 40", lambda: qp.modify(a, rtr))
a.min_rnr_timer = 12
qp.modify(a, rtr)

a = QPAttr()
a.qp_state = e.IBV_QPS_RTS
a.timeout = 14
a.retry_cnt = 7
a.rnr_retry = 7
a.sq_psn = 0x654321
a.max_rd_atomic = 4
rts = (e.IBV_QP_STATE | e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY | e.IBV_QP_SQ_PSN
       | e.IBV_QP_MAX_QP_RD_ATOMIC)
a.retry_cnt = 8
if strict:
    refused("retry_cnt 8", lambda: qp.modify(a, rts))
a.retry_cnt = 7
qp.modify(a, rts)
q, _ = qp.query(e.IBV_QP_STATE | e.IBV_QP_SQ_PSN | e.IBV_QP_RQ_PSN | e.IBV_QP_DEST_QPN | e.IBV_QP_PATH_MTU
                | e.IBV_QP_TIMEOUT | e.IBV_QP_AV)
assert q.qp_state == e.IBV_QPS_RTS
assert (q.sq_psn, q.rq_psn, q.dest_qp_num) == (0x654321, 0x123456, qp.qp_num), (q.sq_psn, q.rq_psn)
assert q.path_mtu == e.IBV_MTU_1024 and q.timeout == 14
print("ok: RESET -> INIT -> RTR -> RTS, attributes read back")

to_state(qp, e.IBV_QPS_ERR)
to_state(qp, e.IBV_QPS_RESET)
assert qp.query(e.IBV_QP_STATE)[0].qp_state == e.IBV_QPS_RESET
print("ok: RTS -> ERR -> RESET")
qp.close()

ud = ud_ready(new_qp(e.IBV_QPT_UD), 0x11111111, sq_psn=7)
print("ok: UD QP to RTS")
ud.close()

refused("max_send_sge 33", lambda: new_qp(max_send_sge=33))
refused("max_send_wr 2^21", lambda: new_qp(max_send_wr=1 << 21))

qps = [new_qp() for _ in range(100)]
nums = {q.qp_num for q in qps}
assert len(nums) == 100
for q in qps[::2]:
    q.close()
print("ok: 100 QPs with distinct numbers, 50 left open for process exit")
