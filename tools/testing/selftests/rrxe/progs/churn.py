#!/usr/bin/python3
"""Object churn and background traffic for the churn test (pyverbs, stock
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

from rrxe_ksft.data import ramp
from rrxe_ksft.verbs import CompletionError, Endpoint, NoCompletion, connect_pair, make_qp, poll_one, send_wr

RW = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE


class DataError(Exception):
    pass


# What ends a run whose device went (--until-gone): a verbs error, a
# completion in error, none within --poll-timeout.
GONE = (PyverbsError, CompletionError, NoCompletion)
POLL_TIMEOUT = 20.0


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
                make_qp(p, c2)
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
        here = Endpoint(state["gid"], gidx)
        connect_pair(qps[0], qps[1], here, here, RW, retry_cnt=7)
        rx = min(size, 4096) // 2
        n = max(rx, 1)
        data = struct.pack("<I", i)[:n] + ramp(n - min(n, 4), 1, i)
        mr2 = MR(pd, max(2 * n, 2), RW)
        mr2.write(data, n, 0)
        qps[1].post_recv(RecvWR(wr_id=1, num_sge=1, sg=[SGE(mr2.buf + n, n, mr2.lkey)]))
        qps[0].post_send(SendWR(wr_id=2, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(mr2.buf, n, mr2.lkey)],
                                send_flags=e.IBV_SEND_SIGNALED))
        poll_one(cq, f"cycle {i} send", POLL_TIMEOUT)
        poll_one(cq, f"cycle {i} recv", POLL_TIMEOUT)
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
    except GONE as err:
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
            qp = make_qp(pd, cq, 2 * W, W)
            ends.append((ctx, pd, cq, mr, qp, Endpoint(ctx.query_gid(1, gidx), gidx)))
        (ca, _, cqa, mra, qpa, ea), (cb, _, cqb, mrb, qpb, eb) = ends
        connect_pair(qpa, qpb, ea, eb, RW, retry_cnt=7)

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
                qpa.post_send(send_wr(W + k, e.IBV_WR_RDMA_WRITE, [SGE(mra.buf + (W + k) * SIZE, SIZE, mra.lkey)],
                                      mrb.rkey, mrb.buf + (W + k) * SIZE))
            for k in range(2 * W):
                poll_one(cqa, f"message {sent + k}", POLL_TIMEOUT)
            for k in range(W):
                poll_one(cqb, f"receive {sent + k}", POLL_TIMEOUT)
            for k in range(2 * W):
                if mrb.read(SIZE, k * SIZE) != pat(sent + k):
                    raise DataError(f"traffic: message {sent + k} differs")
            sent += 2 * W
    except GONE as err:
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
