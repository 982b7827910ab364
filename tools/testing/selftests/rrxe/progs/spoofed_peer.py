#!/usr/bin/python3
"""Spoofed peers, the QP side (pyverbs, stock librxe): packets that come
from a live QP's own peer address, as anyone who can spoof it can send
them, must not kill the QP or an innocent work request.  Device A holds the targets, device B
their peers; the packets are injected by the test on request
(`Injector`: roce-flood --mode sequence, replayed from B's namespace).

1. Stale NAKs: to an idle RC QP, NAKs (invalid
   request, remote access, remote operational, PSN sequence) and an RNR
   NAK (the QP has rnr_retry 0) at the last PSN it had acknowledged and
   older; to a busy RC QP (its SEND RNR-NAKed by a peer with no receive),
   the same NAKs at that last acknowledged PSN.  Both QPs stay in RTS and
   nothing completes; the idle QP's next SEND and the busy QP's SEND
   (once the peer posts its receive) complete with success.
2. UC remote errors: to a UC QP without and one with an SRQ,
   an RDMA WRITE with an unknown rkey and a SEND longer than the posted
   receive.  Both QPs stay in RTS; without an SRQ nothing completes, with
   one the receive the SEND took completes with LOC_LEN_ERR (as on RC);
   the peer's next SEND lands in the next receive, byte-exact.
3. A bulk transfer's packets with a spoiled ICRC: an RDMA WRITE's
   first and nine middle packets at the expected PSNs, valid but for the
   ICRC (rrxe leaves the ICRC of a message's packets from its 8th on to
   the receive task, qp/placement.rs; the first seven the softirq
   checks).  They are dropped: the QP stays in RTS, nothing lands and
   nothing completes, and the peer's own WRITE at that PSN then lands
   byte-exact (had the first packet been taken, it would be a duplicate).
4. (--alt ALT_GIDX_A ALT_GIDX_B, rrxe only: C rxe has no APM) The
   armed alternate path: from the peer's alternate address,
   a stale ACK, a stale NAK and a request ahead of the expected PSN must
   not migrate the QP (path_mig_state stays ARMED); then a valid SEND
   from there does (IB_EVENT_PATH_MIG, MIGRATED): the control that the
   packets arrive at all.

Each check prints a line; the test compares rrxe's lines with C rxe's.
Without --c-rxe the program also asserts what rrxe must do.

usage: spoofed_peer.py DEV_A GIDX_A DEV_B GIDX_B DIR [--c-rxe]
       [--alt ALT_GIDX_A ALT_GIDX_B]"""
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

from rrxe_ksft.data import ramp
from rrxe_ksft.events import event_name, next_event
from rrxe_ksft.handoff import Injector, publish
from rrxe_ksft.verbs import Device, arm_alt_path, connect_pair, make_qp, poll, state

dev_a, gidx_a, dev_b, gidx_b, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
rest = sys.argv[6:]
c_rxe = "--c-rxe" in rest
alt = None
if "--alt" in rest:
    i = rest.index("--alt")
    alt = int(rest[i + 1]), int(rest[i + 2])

RW = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
SIZE = 65536
RECV = 64                 # each posted receive
STATES = {e.IBV_QPS_RTS: "RTS", e.IBV_QPS_ERR: "ERR", e.IBV_QPS_SQE: "SQE"}
# AETH syndromes: NAKs (PSN sequence, invalid request, remote access,
# remote operational), an RNR NAK, a positive ACK.
NAKS = (0x60, 0x61, 0x62, 0x63)
RNR_NAK, ACK = 0x20 | 14, 0x1f
OLD = 0xffffff            # a PSN offset of -1


class Dev(Device):
    def __init__(self, name, gidx):
        super().__init__(name, gidx)
        self.cq = CQ(self.ctx, 64)
        self.mr = MR(self.pd, SIZE, RW)


A, B = Dev(dev_a, gidx_a), Dev(dev_b, gidx_b)
inj = Injector(work)
publish(f"{work}/ready", "1\n")
failures = []


def check(ok, line, want):
    """Prints `line`; without --c-rxe, records a failure unless `ok`."""
    print(line)
    if not ok and not c_rxe:
        failures.append(f"{line} (want {want})")


def st(qp):
    s = state(qp)
    return STATES.get(s, str(s))


def drain(cq):
    """The completions `cq` holds now, as "wr_id:status" (sorted)."""
    time.sleep(0.3)
    cnt, wcs = cq.poll(num_entries=16)
    return " ".join(sorted(f"{w.wr_id}:{w.status}" for w in wcs[:cnt])) or "none"


def recv_wr(wr_id, off):
    return RecvWR(wr_id=wr_id, num_sge=1, sg=[SGE(A.mr.buf + off, RECV, A.mr.lkey)])


def send_wr(wr_id, mr, off, n):
    return SendWR(wr_id=wr_id, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(mr.buf + off, n, mr.lkey)],
                  send_flags=e.IBV_SEND_SIGNALED)


def acks(kind, qpn, psn, entries):
    """Injector arguments: acknowledgements (offset, syndrome) for the
    requester of QP `qpn`, whose next PSN is `psn`."""
    ops = ",".join(f"ack:{d}:{syn:#x}" for d, syn in entries)
    return f"--target {kind}:{qpn}:{psn} --ops {ops}"


def stale_naks():
    # The idle QP: rnr_retry 0, so an RNR NAK it took would be fatal.
    cq = CQ(A.ctx, 16)
    idle, peer = make_qp(A.pd, cq), make_qp(B.pd, B.cq)
    connect_pair(idle, peer, A, B, RW, psn=0x4000, peer_psn=0x4000, a_kw={"rnr_retry": 0})
    peer.post_recv(RecvWR(wr_id=1, num_sge=1, sg=[SGE(B.mr.buf, RECV, B.mr.lkey)]))
    stale = [(OLD, s) for s in NAKS + (RNR_NAK,)] + [(0xfffffb, 0x62), (0xfffff0, RNR_NAK)]
    inj.inject(acks("rc", idle.qp_num, 0x4000, stale))
    check(st(idle) == "RTS", f"idle RC QP after stale NAKs: {st(idle)}", "RTS")
    got = drain(cq)
    check(got == "none", f"idle RC QP completions after stale NAKs: {got}", "none")
    A.mr.write(ramp(RECV, 3), RECV, 0)
    try:
        idle.post_send(send_wr(7, A.mr, 0, RECV))
        wc = poll(cq, "idle QP's SEND", timeout=20)[0]
        check(wc.status == e.IBV_WC_SUCCESS, f"idle RC QP's next SEND: status {wc.status}", "status 0")
        if wc.status == e.IBV_WC_SUCCESS:
            poll(B.cq, "peer's receive")
    except (PyverbsRDMAError, AssertionError) as err:
        check(False, f"idle RC QP's next SEND: {err}", "status 0")

    # The busy QP: its SEND is RNR-NAKed (the peer has no receive yet)
    # and resent every 1.92 ms; the oldest unacknowledged PSN stays its.
    cq = CQ(A.ctx, 16)
    busy, peer = make_qp(A.pd, cq), make_qp(B.pd, CQ(B.ctx, 8))
    connect_pair(busy, peer, A, B, RW, psn=0x5000, peer_psn=0x5000, b_kw={"min_rnr_timer": 14})
    busy.post_send(send_wr(8, A.mr, 0, RECV))
    time.sleep(0.3)
    inj.inject(acks("rc", busy.qp_num, 0x5000, [(OLD, s) for s in NAKS[1:] + (RNR_NAK,)]))
    check(st(busy) == "RTS", f"busy RC QP after stale NAKs: {st(busy)}", "RTS")
    got = drain(cq)
    check(got == "none", f"busy RC QP completions after stale NAKs: {got}", "none")
    peer.post_recv(RecvWR(wr_id=2, num_sge=1, sg=[SGE(B.mr.buf, RECV, B.mr.lkey)]))
    if got == "none":
        wc = poll(cq, "busy QP's SEND", timeout=20)[0]
        check(wc.status == e.IBV_WC_SUCCESS and wc.wr_id == 8,
              f"busy RC QP's SEND once the peer has a receive: wr_id {wc.wr_id} status {wc.status}",
              "wr_id 8 status 0")
        check(B.mr.read(RECV, 0) == ramp(RECV, 3), "busy RC QP's SEND data: "
              + ("exact" if B.mr.read(RECV, 0) == ramp(RECV, 3) else "differs"), "exact")


def uc_errors():
    srq = SRQ(A.pd, SrqInitAttr(SrqAttr(max_wr=8, max_sge=1)))
    for name, use_srq, base in (("UC QP", False, 4096), ("UC QP on an SRQ", True, 8192)):
        cq = CQ(A.ctx, 16)
        qa = make_qp(A.pd, cq, qp_type=e.IBV_QPT_UC, srq=srq if use_srq else None)
        qb = make_qp(B.pd, B.cq, qp_type=e.IBV_QPT_UC)
        connect_pair(qa, qb, A, B, RW, psn=0x6000, peer_psn=0x6000)
        for k in range(3):
            wr = recv_wr(100 * (2 + use_srq) + k, base + k * RECV)
            (srq if use_srq else qa).post_recv(wr)
        bad = A.mr.rkey ^ 0xff
        inj.inject(f"--target uc:{qa.qp_num}:{0x6000} --rkey {bad} --va {A.mr.buf + 32768} --ops write:0:64")
        check(st(qa) == "RTS", f"{name} after a WRITE with an unknown rkey: {st(qa)}", "RTS")
        inj.inject(f"--target uc:{qa.qp_num}:{0x6000} --ops send:1:{4 * RECV}")
        check(st(qa) == "RTS", f"{name} after an over-long SEND (longer than its receive): {st(qa)}", "RTS")
        got = drain(cq)
        want = f"{100 * 3}:{e.IBV_WC_LOC_LEN_ERR}" if use_srq else "none"
        check(got == want, f"{name}: completions after the over-long SEND: {got}", want)
        data = ramp(32, 5, use_srq)
        B.mr.write(data, len(data), 1024)
        qb.post_send(send_wr(9, B.mr, 1024, len(data)))
        poll(B.cq, "UC peer's SEND")
        try:
            wc = poll(cq, f"{name}: the peer's next SEND", timeout=5)[0]
            k = wc.wr_id % 100
            exact = A.mr.read(len(data), base + k * RECV) == data
            line = (f"{name}: the peer's SEND after the over-long SEND: wr_id {wc.wr_id} status {wc.status} "
                    f"byte_len {wc.byte_len} data {'exact' if exact else 'differs'}")
            want_id = 100 * (2 + use_srq) + use_srq
            check(wc.status == e.IBV_WC_SUCCESS and wc.wr_id == want_id and exact, line,
                  f"wr_id {want_id}, status 0, exact")
        except AssertionError as err:
            check(False, f"{name}: the peer's SEND after the over-long SEND: {err}", "delivered")


def bulk_bad_icrc():
    cq = CQ(A.ctx, 16)
    qa, qb = make_qp(A.pd, cq), make_qp(B.pd, B.cq)
    connect_pair(qa, qb, A, B, RW, psn=0x9000, peer_psn=0x9000)
    base, n = 16384, 2048
    A.mr.write(bytes(n), n, base)
    inj.inject(f"--target rc:{qa.qp_num}:{0x9000} --rkey {A.mr.rkey} --va {A.mr.buf + base} "
               f"--ops wfirst:0:1024,{','.join(f'wmiddle:{d}:1024' for d in range(1, 10))} --bad-icrc 1")
    check(st(qa) == "RTS", f"RC QP after a WRITE's first and middle packets with a bad ICRC: {st(qa)}", "RTS")
    clean = A.mr.read(n, base) == bytes(n)
    check(clean, "their data: " + ("nothing landed" if clean else "landed"), "nothing landed")
    got = drain(cq)
    check(got == "none", f"completions after them: {got}", "none")
    data = ramp(n, 7)
    B.mr.write(data, n, 0)
    wr = SendWR(wr_id=10, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(B.mr.buf, n, B.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(A.mr.rkey, A.mr.buf + base)
    qb.post_send(wr)
    try:
        wc = poll(B.cq, "the peer's WRITE", timeout=20)[0]
        exact = A.mr.read(n, base) == data
        check(wc.status == e.IBV_WC_SUCCESS and exact,
              f"the peer's WRITE at that PSN: status {wc.status} data {'exact' if exact else 'differs'}",
              "status 0, exact")
    except AssertionError as err:
        check(False, f"the peer's WRITE at that PSN: {err}", "status 0, exact")


def apm(alt_a, alt_b):
    MIG_ARMED, MIG_MIGRATED = 2, 0
    alt_gid_b = B.ctx.query_gid(1, alt_b)
    cq = CQ(A.ctx, 16)
    qa, qb = make_qp(A.pd, cq), make_qp(B.pd, B.cq)
    connect_pair(qa, qb, A, B, RW, psn=0x7000, peer_psn=0x7000)
    arm_alt_path(qa, alt_gid_b, alt_a)
    qa.post_recv(recv_wr(400, 12288))

    def mig():
        return qa.query(e.IBV_QP_PATH_MIG_STATE)[0].path_mig_state

    where = "--local 10.78.0.1 --peer 10.78.0.2"
    inj.inject(acks("rc", qa.qp_num, 0x7000, [(0xfffffa, ACK), (OLD, 0x62), (OLD, RNR_NAK)]) + " " + where)
    inj.inject(f"--target rc:{qa.qp_num}:{0x7000} --ops send:5,send:0x400000 {where}")
    m = mig()
    check(m == MIG_ARMED, f"APM: after a stale ACK, stale NAKs and requests out of sequence from the "
          f"alternate path: path_mig_state {m}", f"{MIG_ARMED} (ARMED)")
    inj.inject(f"--target rc:{qa.qp_num}:{0x7000} --ops send:0 {where}")
    ev = next_event(A.ctx, timeout=10)
    m = mig()
    check(ev == e.IBV_EVENT_PATH_MIG and m == MIG_MIGRATED,
          f"APM: a valid SEND from the alternate path: event {event_name(ev)}, path_mig_state {m}",
          f"IBV_EVENT_PATH_MIG, {MIG_MIGRATED}")


stale_naks()
uc_errors()
bulk_bad_icrc()
if alt:
    apm(*alt)
if failures:
    print("FAIL: " + "; ".join(failures), file=sys.stderr)
    sys.exit(1)
print("spoofed_peer: done")
