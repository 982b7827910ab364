#!/usr/bin/python3
"""Object churn and background traffic for 24-churn.sh (pyverbs, stock
librxe).

churn.py objects DEV GIDX CYCLES [--seed S] [--until-gone]
    CYCLES create/destroy cycles on DEV: a user context (a new one every
    few cycles), a PD, a CQ and an MR of random sizes and access flags, two
    RC QPs connected to each other through DEV's own GID, one SEND between
    them checked byte for byte, then the objects destroyed in a random
    order: QPs first, MR first, CQ last, or the whole context closed at
    once with everything in it (ib_uverbs' cleanup), or nothing destroyed
    before a child process exits (every 16th cycle).  Several of these run
    in parallel against one device.

churn.py traffic DEV_A GIDX_A DEV_B GIDX_B [--seconds S] [--stop-file F]
                 [--until-gone]
    RC SENDs and WRITEs of 16 KiB from a QP on DEV_A to one on DEV_B, 16 in
    flight, checked byte for byte, until S seconds have passed (0: no
    limit) or file F exists.

--poll-timeout S: how long a completion may take (20 s); the error that
ends a run whose device vanished, whose completions never come.
--until-gone: a verbs error (the device was removed, the netdev or the
namespace deleted, the module unloaded) ends the run with status 0 and a
"stopped:" line instead of a failure; wrong data always fails.  Prints one
summary line."""
import argparse
import os
import random
import struct
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

import verbs_util  # noqa: E402 (tools/testing/vm, the script's directory)

RW = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE


class DataError(Exception):
    pass


def connect(qp, gidx, dgid, dqpn):
    verbs_util.connect(qp, dqpn, dgid, gidx, RW, retry_cnt=7)


POLL_TIMEOUT = 20.0


def poll(cq, what, timeout=None):
    timeout = timeout or POLL_TIMEOUT
    end = time.time() + timeout
    while True:
        cnt, wcs = cq.poll(num_entries=1)
        if cnt:
            wc = wcs[0]
            if wc.status != e.IBV_WC_SUCCESS:
                raise PyverbsError(f"{what}: completion status {wc.status}")
            return wc
        if time.time() > end:
            raise PyverbsError(f"{what}: no completion in {timeout:.0f}s")


def cycle(rng, state, dev, gidx, i):
    """One create/use/destroy cycle; state["ctx"] is the context, reused
    for a few cycles."""
    if i % 16 == 15:
        # A process that exits with its objects alive (ib_uverbs cleans
        # up): a child, forked while this process has no open context (so
        # none of its registered memory is shared with the child).
        if state.get("ctx") is not None:
            state["ctx"].close()
            state["ctx"] = None
        pid = os.fork()
        if pid == 0:
            try:
                c = Context(name=dev)
                p = PD(c)
                c2 = CQ(c, 8)
                MR(p, 65536, RW)
                QP(p, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=c2, rcq=c2, cap=QPCap(max_send_wr=4, max_recv_wr=4)))
            except BaseException as err:  # never return into the parent's code
                print(f"cycle {i}: child: {err}", file=sys.stderr, flush=True)
                os._exit(3)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        if status:
            raise PyverbsError(f"cycle {i}: child exited with status {status:#x}")
    if state.get("ctx") is None:
        state["ctx"] = Context(name=dev)
        state["gid"] = state["ctx"].query_gid(1, gidx)
    ctx = state["ctx"]
    pd = PD(ctx)
    cq = CQ(ctx, rng.choice([4, 16, 64, 256, 1024]))
    size = rng.choice([1, 4096, 65536, 1 << 20])
    mr = MR(pd, size, rng.choice([e.IBV_ACCESS_LOCAL_WRITE, RW, RW | e.IBV_ACCESS_REMOTE_READ]))
    cap = QPCap(max_send_wr=rng.choice([1, 8, 64]), max_recv_wr=rng.choice([1, 8, 64]),
                max_send_sge=rng.choice([1, 2]), max_recv_sge=rng.choice([1, 2]),
                max_inline_data=rng.choice([0, 64]))
    qps = [QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)) for _ in range(2)]
    if rng.random() < 0.75:
        # Connected to each other on the same device (loopback), one SEND.
        connect(qps[0], gidx, state["gid"], qps[1].qp_num)
        connect(qps[1], gidx, state["gid"], qps[0].qp_num)
        rx = min(size, 4096) // 2
        n = max(rx, 1)
        data = struct.pack("<I", i)[:n] + bytes((i + j) & 0xff for j in range(n - min(n, 4)))
        mr2 = MR(pd, max(2 * n, 2), RW)
        mr2.write(data, n, 0)
        qps[1].post_recv(RecvWR(wr_id=1, num_sge=1, sg=[SGE(mr2.buf + n, n, mr2.lkey)]))
        qps[0].post_send(SendWR(wr_id=2, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(mr2.buf, n, mr2.lkey)],
                                send_flags=e.IBV_SEND_SIGNALED))
        poll(cq, f"cycle {i} send")
        poll(cq, f"cycle {i} recv")
        if mr2.read(n, n) != data:
            raise DataError(f"cycle {i}: loopback SEND data differs")
        if rng.random() < 0.5:
            # More sends left in flight for the destroy to find.
            for k in range(min(4, cap.max_send_wr)):
                qps[0].post_send(SendWR(wr_id=10 + k, opcode=e.IBV_WR_SEND, num_sge=1,
                                        sg=[SGE(mr2.buf, n, mr2.lkey)]))
        objs = [qps[0], qps[1], mr2, mr, cq, pd]
    else:
        objs = [qps[0], qps[1], mr, cq, pd]
    how = rng.random()
    if how < 0.15:
        ctx.close()  # everything inside goes with the context
        state["ctx"] = None
        return
    if how < 0.4:
        # The MRs first, while the QPs may still hold WQEs that use them.
        objs = objs[2:-2] + objs[:2] + objs[-2:]
    elif how < 0.55:
        objs = [pd, cq]  # the PD takes its QPs and MRs with it
    for o in objs:
        o.close()
    if rng.random() < 0.2:
        ctx.close()
        state["ctx"] = None


def objects(args):
    rng = random.Random(args.seed)
    state = {}
    i = 0
    try:
        for i in range(args.cycles):
            cycle(rng, state, args.dev, args.gidx, i)
            if i == 0:
                print(f"churn objects {args.dev} seed {args.seed}: ready", flush=True)
        if state.get("ctx") is not None:
            state["ctx"].close()
    except PyverbsError as err:
        if not args.until_gone:
            raise
        print(f"churn objects {args.dev} seed {args.seed}: stopped: cycle {i}: {err}")
        return
    print(f"churn objects {args.dev} seed {args.seed}: {args.cycles} cycles")


def traffic(args):
    SIZE, W = 16384, 8
    sent = 0
    t0 = time.time()
    try:
        ends = []
        for dev, gidx in ((args.dev_a, args.gidx_a), (args.dev_b, args.gidx_b)):
            ctx = Context(name=dev)
            pd = PD(ctx)
            cq = CQ(ctx, 4 * W)
            mr = MR(pd, SIZE * W * 2, RW)
            qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                                   cap=QPCap(max_send_wr=2 * W, max_recv_wr=W, max_send_sge=1, max_recv_sge=1)))
            ends.append((ctx, pd, cq, mr, qp, gidx, ctx.query_gid(1, gidx)))
        (ca, _, cqa, mra, qpa, ga, gida), (cb, _, cqb, mrb, qpb, gb, gidb) = ends
        connect(qpa, ga, gidb, qpb.qp_num)
        connect(qpb, gb, gida, qpa.qp_num)

        def pat(k):
            return struct.pack("<Q", k) * (SIZE // 8)

        while ((not args.seconds or time.time() - t0 < args.seconds)
               and not (args.stop_file and os.path.exists(args.stop_file))):
            # W SENDs and W WRITEs, all in flight together, then checked.
            for k in range(W):
                qpb.post_recv(RecvWR(wr_id=k, num_sge=1, sg=[SGE(mrb.buf + k * SIZE, SIZE, mrb.lkey)]))
            for k in range(2 * W):
                mra.write(pat(sent + k), SIZE, k * SIZE)
            for k in range(W):
                qpa.post_send(SendWR(wr_id=k, opcode=e.IBV_WR_SEND, num_sge=1,
                                     sg=[SGE(mra.buf + k * SIZE, SIZE, mra.lkey)], send_flags=e.IBV_SEND_SIGNALED))
                wr = SendWR(wr_id=W + k, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                            sg=[SGE(mra.buf + (W + k) * SIZE, SIZE, mra.lkey)], send_flags=e.IBV_SEND_SIGNALED)
                wr.set_wr_rdma(mrb.rkey, mrb.buf + (W + k) * SIZE)
                qpa.post_send(wr)
            for k in range(2 * W):
                poll(cqa, f"message {sent + k}")
            for k in range(W):
                poll(cqb, f"receive {sent + k}")
            for k in range(2 * W):
                if mrb.read(SIZE, k * SIZE) != pat(sent + k):
                    raise DataError(f"traffic: message {sent + k} differs")
            sent += 2 * W
    except PyverbsError as err:
        if not args.until_gone:
            raise
        print(f"churn traffic {args.dev_a}->{args.dev_b}: stopped after {sent} messages "
              f"({sent * SIZE >> 20} MiB, {time.time() - t0:.1f}s): {err}")
        sys.stdout.flush()
        # The objects die with the process (their destroy may fail with EIO
        # once the device is gone: that is not what is tested here).
        os._exit(0)
    print(f"churn traffic {args.dev_a}->{args.dev_b}: {sent} messages of {SIZE} B "
          f"({sent * SIZE >> 20} MiB) byte-exact in {time.time() - t0:.1f}s")


ap = argparse.ArgumentParser()
sub = ap.add_subparsers(dest="mode", required=True)
o = sub.add_parser("objects")
o.add_argument("dev")
o.add_argument("gidx", type=int)
o.add_argument("cycles", type=int)
o.add_argument("--seed", type=int, default=1)
o.add_argument("--until-gone", action="store_true")
t = sub.add_parser("traffic")
t.add_argument("dev_a")
t.add_argument("gidx_a", type=int)
t.add_argument("dev_b")
t.add_argument("gidx_b", type=int)
t.add_argument("--seconds", type=float, default=0)
t.add_argument("--stop-file")
t.add_argument("--until-gone", action="store_true")
for p in (o, t):
    p.add_argument("--poll-timeout", type=float, default=20.0)
args = ap.parse_args()
POLL_TIMEOUT = args.poll_timeout
objects(args) if args.mode == "objects" else traffic(args)
