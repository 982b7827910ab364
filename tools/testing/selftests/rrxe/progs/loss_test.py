#!/usr/bin/python3
"""RC over a lossy link (pyverbs, stock librxe): QP a on device A sends
messages to QP b on device B, the devices in two namespaces joined by a
veth with netem loss (and reordering, duplication, jitter).  Phases:
SENDs into posted receives, RDMA WRITEs into a region of B, RDMA READs
from a region of B, and fetch-and-adds from two QPs onto one counter in
B.  Up to
WINDOW work requests are outstanding at once; each message lands in its
own slot (message k in slot k % WINDOW) and a slot is reused only after
the message in it was checked.

Every completion must succeed and every byte of every message arrive as
sent: message k of phase p carries a pattern that depends on the offset in
the message, on k and on p (a 16-byte header with k, p and the size, then
a window into a seeded random buffer that starts at an offset chosen by k),
so a lost, stale, duplicated, misplaced or reordered message or packet
shows as a mismatch.  A SEND is checked when B's receive completes (its
byte_len too); a WRITE when A's send completion arrives (the ACK means the
data was placed in B's memory); a READ when it completes at A.  The
fetch-and-adds (one per message, adding 1) must leave the counter at
exactly their number and return every value below it exactly once: an
atomic executed twice after a retransmission shows.  Both QPs stay up until A has all its
completions, so a lost final ACK is retransmitted, not left to a peer that
has exited.

usage: loss_test.py DEV_A GIDX_A DEV_B GIDX_B [N] [options]
  N                messages in all, half SENDs then half WRITEs, one at a
                   time (the default when no --bytes: 100)
  --bytes B        bytes per phase (suffixes K, M, G: KiB, MiB, GiB)
  --size S         message size (65536)
  --window W       outstanding work requests (1)
  --phases LIST    any of send, write, read, faa, comma-separated
                   (default send,write)
  --atomics N      fetch-and-adds of the faa phase (200)
  --mtu M          path MTU, 256..4096 (1024)
  --timeout T      the QP's local ACK timeout exponent: 4.096 us * 2^T (12)
  --stall S        fail if no completion for S seconds (60)"""
import argparse
import random
import struct
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.wr import SGE, RecvWR

from rrxe_ksft.data import u64
from rrxe_ksft.verbs import MTUS, Device, atomic_wr, connect, make_qp, send_wr

RW = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
      | e.IBV_ACCESS_REMOTE_ATOMIC)
PHASE = {"send": 1, "write": 2, "read": 3, "faa": 4}


def size_arg(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:].upper(), 1)
    return int(s[:-1] if mult > 1 else s) * mult


ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1].split("\n")[0])
ap.add_argument("dev_a")
ap.add_argument("gidx_a", type=int)
ap.add_argument("dev_b")
ap.add_argument("gidx_b", type=int)
ap.add_argument("n", type=int, nargs="?")
ap.add_argument("--bytes", type=size_arg)
ap.add_argument("--size", type=size_arg, default=65536)
ap.add_argument("--window", type=int, default=1)
ap.add_argument("--phases", default="send,write")
ap.add_argument("--atomics", type=int, default=200)
ap.add_argument("--mtu", type=int, default=1024, choices=sorted(MTUS))
ap.add_argument("--timeout", type=int, default=12)
ap.add_argument("--stall", type=float, default=60.0)
args = ap.parse_args()
SIZE, WINDOW = args.size, args.window
RD_ATOMIC = min(WINDOW, 16)
assert SIZE >= 16 and WINDOW >= 1
phases = args.phases.split(",")
assert all(p in PHASE for p in phases), phases
if args.bytes is not None:
    counts = {p: -(-args.bytes // SIZE) for p in phases}
else:
    n = 100 if args.n is None else args.n
    # Legacy form: N messages, the first half SENDs, the rest WRITEs.
    counts = {p: c for p, c in zip(phases, [n - n // 2, n // 2] if len(phases) == 2 else [n])}
if "faa" in counts:
    counts["faa"] = args.atomics

# A seeded random buffer: message k is a window into it at an offset that
# depends on k, after a header naming the message.
BASE = random.Random(0x5eed).randbytes(SIZE + 4096)


def message_data(phase, k):
    """Message k of `phase`: its header, then its window into BASE."""
    off = (k * 2654435761) % 4096
    return struct.pack("<QII", k, PHASE[phase], SIZE) + BASE[off:off + SIZE - 16]


def check_data(what, phase, k, got):
    """`got`, as message k of `phase` arrived (a `what`), must be it."""
    want = message_data(phase, k)
    if got != want:
        raise AssertionError(f"{what} {k}: data differs at byte "
                             f"{next(i for i, (x, y) in enumerate(zip(got, want)) if x != y)}")


class End(Device):
    def __init__(self, dev, gidx, slots):
        super().__init__(dev, gidx)
        self.scq = CQ(self.ctx, WINDOW + 16)
        self.rcq = CQ(self.ctx, WINDOW + 16)
        self.mr = MR(self.pd, SIZE * slots, RW)
        # Two QPs (the second for the fetch-and-adds), on the same CQs.
        self.qps = [make_qp(self.pd, self.scq, WINDOW, WINDOW, rcq=self.rcq) for _ in range(2)]
        self.qp = self.qps[0]

    def connect(self, peer):
        for me, other in zip(self.qps, peer.qps):
            connect(me, other.qp_num, peer.gid, self.gidx, RW, mtu=args.mtu, psn=100, peer_psn=100,
                    timeout=args.timeout, retry_cnt=7, max_rd_atomic=RD_ATOMIC, max_dest_rd_atomic=RD_ATOMIC)


def qp_state(end):
    attr, _ = end.qp.query(e.IBV_QP_STATE)
    return attr.qp_state


class Stall(AssertionError):
    pass


def run_faa(a, b, n):
    """n fetch-and-adds of 1 onto one counter in b, alternating between
    the two QPs, at most WINDOW outstanding on each."""
    counter = b.mr.buf + 2 * WINDOW * SIZE - 8
    b.mr.write(bytes(8), 8, 2 * WINDOW * SIZE - 8)
    posted, done, seen = [0, 0], [0, 0], []
    quota = [n - n // 2, n // 2]
    last = time.time()
    while done != quota:
        for qi in (0, 1):
            while posted[qi] < quota[qi] and posted[qi] - done[qi] < WINDOW:
                k = posted[qi]
                a.qps[qi].post_send(atomic_wr(qi << 32 | k, e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                                              SGE(a.mr.buf + (qi * WINDOW + k % WINDOW) * 8, 8, a.mr.lkey),
                                              b.mr.rkey, counter, 1, 0))
                posted[qi] += 1
        cnt, wcs = a.scq.poll(num_entries=2 * WINDOW)
        for wc in wcs[:cnt]:
            qi, k = wc.wr_id >> 32, wc.wr_id & 0xffffffff
            assert wc.status == e.IBV_WC_SUCCESS, f"faa {qi}/{k}: status {wc.status}"
            assert k == done[qi], f"faa: QP {qi} completion for {k}, expected {done[qi]}"
            seen.append(u64(a.mr, (qi * WINDOW + k % WINDOW) * 8))
            done[qi] += 1
        now = time.time()
        if cnt:
            last = now
        elif now - last > args.stall:
            raise Stall(f"faa: no completion for {args.stall:.0f}s: posted {posted}, completed {done} of {quota}")
    final = u64(b.mr, 2 * WINDOW * SIZE - 8)
    assert final == n, f"faa: counter {final} after {n} fetch-and-adds"
    assert sorted(seen) == list(range(n)), "faa: the original values are not each of 0..n-1 once"


def run_phase(a, b, phase, n):
    """n messages of SIZE bytes from a to b, at most WINDOW outstanding."""
    if phase == "faa":
        return run_faa(a, b, n)
    send = phase == "send"
    read = phase == "read"
    wbase = WINDOW * SIZE  # B's WRITE slots follow its receive slots
    posted = done = recv_posted = recv_done = 0
    last = time.time()

    def post_recv():
        nonlocal recv_posted
        k = recv_posted
        b.qp.post_recv(RecvWR(wr_id=k, num_sge=1, sg=[SGE(b.mr.buf + (k % WINDOW) * SIZE, SIZE, b.mr.lkey)]))
        recv_posted += 1

    if send:
        while recv_posted < min(n, WINDOW):
            post_recv()
    while done < n or (send and recv_done < n):
        # Post while a slot is free (and, for SENDs, its receive is posted:
        # no RNR NAKs, the loss is what is under test).
        while posted < n and posted - done < WINDOW and (not send or posted < recv_posted):
            k, slot = posted, posted % WINDOW
            if read:
                # B's slot holds the message; A's is cleared first.
                b.mr.write(message_data(phase, k), SIZE, wbase + slot * SIZE)
                a.mr.write(bytes(SIZE), SIZE, slot * SIZE)
            else:
                a.mr.write(message_data(phase, k), SIZE, slot * SIZE)
            op = e.IBV_WR_SEND if send else e.IBV_WR_RDMA_READ if read else e.IBV_WR_RDMA_WRITE
            rkey, addr = (None, None) if send else (b.mr.rkey, b.mr.buf + wbase + slot * SIZE)
            a.qp.post_send(send_wr(k, op, [SGE(a.mr.buf + slot * SIZE, SIZE, a.mr.lkey)], rkey, addr))
            posted += 1
        progress = False
        cnt, wcs = a.scq.poll(num_entries=WINDOW)
        for wc in wcs[:cnt]:
            assert wc.status == e.IBV_WC_SUCCESS, f"{phase} {wc.wr_id}: status {wc.status}"
            assert wc.wr_id == done, f"{phase}: completion for {wc.wr_id}, expected {done} (out of order)"
            if read:
                check_data("read", phase, done, a.mr.read(SIZE, (done % WINDOW) * SIZE))
            elif not send:
                check_data("write", phase, done, b.mr.read(SIZE, wbase + (done % WINDOW) * SIZE))
            done += 1
            progress = True
        if send:
            cnt, wcs = b.rcq.poll(num_entries=WINDOW)
            for wc in wcs[:cnt]:
                k = recv_done
                assert wc.status == e.IBV_WC_SUCCESS, f"recv {wc.wr_id}: status {wc.status}"
                assert wc.wr_id == k, f"recv: completion for {wc.wr_id}, expected {k}"
                assert wc.byte_len == SIZE, f"recv {k}: byte_len {wc.byte_len}"
                check_data("send", phase, k, b.mr.read(SIZE, (k % WINDOW) * SIZE))
                recv_done += 1
                if recv_posted < n:
                    post_recv()
                progress = True
        now = time.time()
        if progress:
            last = now
        elif now - last > args.stall:
            raise Stall(f"{phase}: no completion for {args.stall:.0f}s: posted {posted}, completed {done}, "
                        f"receives posted {recv_posted}, completed {recv_done}, of {n}; "
                        f"QP states a={qp_state(a)} b={qp_state(b)}")


a, b = End(args.dev_a, args.gidx_a, WINDOW), End(args.dev_b, args.gidx_b, 2 * WINDOW)
a.connect(b)
b.connect(a)
for phase in phases:
    n = counts[phase]
    if not n:
        continue
    t0 = time.time()
    run_phase(a, b, phase, n)
    secs = time.time() - t0
    if phase == "faa":
        print(f"loss_test: faa: {n} fetch-and-adds from two QPs (window {WINDOW} each): counter exactly {n}, "
              f"each original value once, in {secs:.1f}s")
        sys.stdout.flush()
        continue
    print(f"loss_test: {phase}: {n} messages of {SIZE} B ({n * SIZE / 2**20:.1f} MiB, window {WINDOW}, "
          f"mtu {args.mtu}, timeout {args.timeout}) delivered byte-exact in {secs:.1f}s "
          f"({n * SIZE / 2**20 / max(secs, 1e-6):.2f} MiB/s)")
    sys.stdout.flush()
