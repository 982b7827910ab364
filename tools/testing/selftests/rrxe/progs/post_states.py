#!/usr/bin/python3
"""ibv_post_send in each QP state (pyverbs, stock librxe): librxe writes
the WQE into the mapped send queue and rings the doorbell (a POST_SEND
command without work requests), whose error ibv_post_send returns.  C
rxe refuses the doorbell with EINVAL while the QP is below RTS (RESET,
INIT, RTR) and takes it in RTS and ERR (rrxe once took
it in every state).  Then the QP reaches RTS and one more SEND shows
which of the WQEs written before run; in ERR a SEND is taken and
flushed.  An RC QP talks to a second one on the same device.  Prints a
line per check and exits 1 unless each is what C rxe does (the lines are
also compared with C rxe's where the C rxe half runs).

usage: post_states.py DEV GIDX"""
import errno
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.wr import SGE, RecvWR, SendWR

from rrxe_ksft.verbs import Device, connect, make_qp, to_init, to_rtr, to_rts, to_state

D = Device(sys.argv[1], int(sys.argv[2]))
cq = CQ(D.ctx, 32)
mr = MR(D.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
ACC = e.IBV_ACCESS_LOCAL_WRITE


def post(qp, wr_id):
    """ibv_post_send of a signalled 16-byte SEND: 0 or the errno name."""
    wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(mr.buf, 16, mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    try:
        qp.post_send(wr)
        return "0"
    except PyverbsRDMAError as err:
        return errno.errorcode.get(err.error_code, str(err.error_code))


FAILURES = []


def check(what, got, want):
    """Prints `what: got`; records a failure unless got == want."""
    print(f"{what}: {got}")
    if got != want:
        FAILURES.append(f"{what}: {got} (want {want})")


def completions(wait=1.0):
    time.sleep(wait)
    cnt, wcs = cq.poll(num_entries=16)
    return " ".join(sorted(f"{w.wr_id}:{w.status}" for w in wcs[:cnt])) or "none"


peer = make_qp(D.pd, cq, 8, 8)
qp = make_qp(D.pd, cq, 8, 8)
# RESET: a QP of its own (its ring is reset on the way back anyway).
lone = make_qp(D.pd, cq, 8, 8)
check("post_send in RESET", post(lone, 1), "EINVAL")
lone.close()
connect(peer, qp.qp_num, D.gid, D.gidx, ACC)
for k in range(8):
    peer.post_recv(RecvWR(wr_id=100 + k, num_sge=1, sg=[SGE(mr.buf + 1024, 64, mr.lkey)]))

to_init(qp, ACC)
check("post_send in INIT", post(qp, 2), "EINVAL")
to_rtr(qp, peer.qp_num, D.gid, D.gidx)
check("post_send in RTR", post(qp, 3), "EINVAL")
check("completions before RTS", completions(0.5), "none")
to_rts(qp)
check("post_send in RTS", post(qp, 4), "0")
# The WQEs written below RTS were refused only as doorbells: they sit in
# the ring and run with the first one rung in RTS.
check("completions in RTS (wr_id:status)", completions(), "100:0 101:0 102:0 2:0 3:0 4:0")
to_state(qp, e.IBV_QPS_ERR)
check("post_send in ERR", post(qp, 5), "0")
check("completions in ERR (wr_id:status)", completions(), f"5:{e.IBV_WC_WR_FLUSH_ERR}")
if FAILURES:
    print("FAIL: " + "; ".join(FAILURES), file=sys.stderr)
    sys.exit(1)
