"""pyverbs helpers for the rrxe selftests' programs (stock librxe, run
with /usr/bin/python3, whose pyverbs is Debian's): devices, QPs created
and connected, work requests, polling with a deadline, completion
checks."""
import collections
import ctypes
import errno
import struct
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.wr import SendWR

from rrxe_ksft.cstruct import find_struct

MTUS = {256: e.IBV_MTU_256, 512: e.IBV_MTU_512, 1024: e.IBV_MTU_1024, 2048: e.IBV_MTU_2048,
        4096: e.IBV_MTU_4096}


class Device:
    """An opened device, the GID index its QPs send from (and that GID),
    and a PD."""

    def __init__(self, name, gidx):
        self.ctx = Context(name=name)
        self.gidx = gidx
        self.gid = self.ctx.query_gid(1, gidx)
        self.pd = PD(self.ctx)


# Where a QP is: the GID it is reached at and the GID index it sends from
# (a Device has the same two fields).
Endpoint = collections.namedtuple("Endpoint", "gid gidx")


def ah_attr(gid, gidx, hop_limit=64):
    """The address vector to `gid` from GID index `gidx` (port 1, with a
    GRH: RoCE)."""
    return AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=gidx, hop_limit=hop_limit), is_global=1, port_num=1)


def make_ah(pd, gid, gidx, hop_limit=64):
    """An address handle on PD `pd` for `gid`, sent from GID index
    `gidx`."""
    return AH(pd, attr=ah_attr(gid, gidx, hop_limit))


def make_qp(pd, cq, send_wr=4, recv_wr=4, send_sge=1, recv_sge=1, qp_type=e.IBV_QPT_RC, rcq=None, srq=None):
    """A QP (RC unless `qp_type`) on PD `pd` with these queue sizes, its
    completions on `cq` (receives on `rcq` if given), its receives from
    SRQ `srq` if given."""
    return QP(pd, QPInitAttr(qp_type=qp_type, scq=cq, rcq=cq if rcq is None else rcq, srq=srq,
                             cap=QPCap(max_send_wr=send_wr, max_recv_wr=recv_wr, max_send_sge=send_sge,
                                       max_recv_sge=recv_sge)))


def make_qp_ex(ctx, pd, cq, ops, send_wr, recv_wr, send_sge=1, recv_sge=1):
    """An RC ibv_qp_ex (ibv_create_qp_ex) on context `ctx` and PD `pd`
    with send operations `ops` (IBV_QP_EX_WITH_*), these queue sizes, its
    completions on `cq`."""
    return QPEx(ctx, QPInitAttrEx(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, pd=pd,
                                  cap=QPCap(max_send_wr=send_wr, max_recv_wr=recv_wr, max_send_sge=send_sge,
                                            max_recv_sge=recv_sge),
                                  comp_mask=e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                                  send_ops_flags=ops))


def next_key(rkey):
    """`rkey` with its key byte (the low 8 bits) advanced by one: the rkey
    to bind a memory window with next."""
    return (rkey & ~0xff) | ((rkey + 1) & 0xff)


def post_ex(q, wr_id, build, sge=None):
    """Posts one signaled WR on ibv_qp_ex `q`: `build()` calls the
    ibv_wr_* builder, `sge` (if any) is its one SGE."""
    q.wr_start()
    q.wr_id, q.wr_flags = wr_id, e.IBV_SEND_SIGNALED
    build()
    if sge is not None:
        q.wr_set_sge(sge)
    q.wr_complete()


def to_init(qp, access):
    """RESET -> INIT on port 1, P_Key index 0, with `access`."""
    a = QPAttr()
    a.qp_state = e.IBV_QPS_INIT
    a.pkey_index = 0
    a.port_num = 1
    a.qp_access_flags = access
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)


def to_rtr(qp, peer_qpn, gid, gidx, mtu=1024, peer_psn=0, max_dest_rd_atomic=1, min_rnr_timer=1):
    """INIT -> RTR towards `peer_qpn` at `gid` (sent from GID index
    `gidx`), expecting `peer_psn` (the responder's attributes: RC only)."""
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTR
    a.path_mtu = MTUS[mtu]
    a.dest_qp_num = peer_qpn
    a.rq_psn = peer_psn
    a.max_dest_rd_atomic = max_dest_rd_atomic
    a.min_rnr_timer = min_rnr_timer
    a.ah_attr = ah_attr(gid, gidx)
    mask = e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN
    if qp.qp_type == e.IBV_QPT_RC:
        mask |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
    qp.modify(a, mask)


def to_rts(qp, psn=0, timeout=14, retry_cnt=3, rnr_retry=7, max_rd_atomic=1):
    """RTR -> RTS sending from `psn` (the requester's attributes: RC only)."""
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTS
    a.timeout = timeout
    a.retry_cnt = retry_cnt
    a.rnr_retry = rnr_retry
    a.sq_psn = psn
    a.max_rd_atomic = max_rd_atomic
    mask = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
    if qp.qp_type == e.IBV_QPT_RC:
        mask |= e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC
    qp.modify(a, mask)


def connect(qp, peer_qpn, gid, gidx, access, mtu=1024, psn=0, peer_psn=0, timeout=14, retry_cnt=3,
            rnr_retry=7, max_rd_atomic=1, max_dest_rd_atomic=1, min_rnr_timer=1):
    """Moves RC/UC QP `qp` through INIT, RTR and RTS towards `peer_qpn` at
    `gid` (sent from GID index `gidx`)."""
    to_init(qp, access)
    to_rtr(qp, peer_qpn, gid, gidx, mtu, peer_psn, max_dest_rd_atomic, min_rnr_timer)
    to_rts(qp, psn, timeout, retry_cnt, rnr_retry, max_rd_atomic)


def arm_alt_path(qp, dgid, sgidx, alt_timeout=14, state=1):
    """Loads an alternate path to `dgid` (from GID index `sgidx`) into
    RTS QP `qp` and sets its path migration state (1: REARM)."""
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTS
    a.alt_ah_attr = ah_attr(dgid, sgidx)
    a.alt_port_num = 1
    a.alt_timeout = alt_timeout
    a.alt_pkey_index = 0
    a.path_mig_state = state
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_ALT_PATH | e.IBV_QP_PATH_MIG_STATE)


def connect_pair(a, b, a_end, b_end, access, a_kw=None, b_kw=None, **kw):
    """Connects RC/UC QPs `a` and `b` to each other (`a` first): each end
    is where its QP is (a Device or an Endpoint; the same one twice for
    two QPs on one device).  `kw` goes to `connect` for both, `a_kw` and
    `b_kw` (dicts, which may name `access` too) to one."""
    for me, peer, mine, theirs, own in ((a, b, a_end, b_end, a_kw), (b, a, b_end, a_end, b_kw)):
        connect(me, peer.qp_num, theirs.gid, mine.gidx, **{"access": access, **kw, **(own or {})})


def ud_ready(q, qkey, sq_psn=0):
    """Moves UD QP `q` through INIT (port 1, P_Key index 0, Q_Key
    `qkey`), RTR and RTS (SQ PSN `sq_psn`); returns it."""
    a = QPAttr()
    a.qp_state, a.pkey_index, a.port_num, a.qkey = e.IBV_QPS_INIT, 0, 1, qkey
    q.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_QKEY)
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTR
    q.modify(a, e.IBV_QP_STATE)
    a = QPAttr()
    a.qp_state, a.sq_psn = e.IBV_QPS_RTS, sq_psn
    q.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)
    return q


def ud_qp(pd, cq, qkey, depth=8, srq=None, recv_sge=1):
    """A UD QP on PD `pd`, ready to send and receive with Q_Key `qkey`:
    `depth` send WRs of one SGE and, unless it takes its receives from
    SRQ `srq`, `depth` receive WRs of `recv_sge` SGEs; completions on
    `cq`."""
    q = make_qp(pd, cq, depth, 0 if srq else depth, 1, 0 if srq else recv_sge, qp_type=e.IBV_QPT_UD, srq=srq)
    return ud_ready(q, qkey)


def rc_pair(ctx, pd, gidx, access, depth=16, sge=4, **kw):
    """Two connected RC QPs on one device (a sends, b responds), each with
    its own CQ; `kw` goes to `connect` for both (or, as `a_kw`/`b_kw`
    dicts, to one)."""
    cqs = [CQ(ctx, 4 * depth), CQ(ctx, 4 * depth)]
    qps = [make_qp(pd, c, depth, depth, sge, sge) for c in cqs]
    here = Endpoint(ctx.query_gid(1, gidx), gidx)
    connect_pair(qps[0], qps[1], here, here, access, **kw)
    return qps, cqs


def send_wr(wr_id, opcode, sges, rkey=None, addr=None, imm=None, flags=e.IBV_SEND_SIGNALED):
    """A send queue WR (signaled unless `flags` says otherwise) gathering
    from `sges`; with `rkey` an RDMA WR to `addr`, with `imm` carrying
    that immediate data."""
    w = SendWR(wr_id=wr_id, opcode=opcode, num_sge=len(sges), sg=sges, send_flags=flags)
    if rkey is not None:
        w.set_wr_rdma(rkey, addr)
    if imm is not None:
        w.imm_data = imm
    return w


def atomic_wr(wr_id, opcode, sge, rkey, addr, compare_add, swap=0):
    """A signaled atomic WR (fetch-and-add or compare-and-swap) on the
    word at `addr`, the original value returned into `sge`."""
    w = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1, sg=[sge], send_flags=e.IBV_SEND_SIGNALED)
    w.set_wr_atomic(rkey, addr, compare_add, swap)
    return w


def poll(cq, what, n=1, timeout=20.0):
    """`n` completions from `cq` within `timeout` seconds."""
    got = []
    end = time.time() + timeout
    while len(got) < n:
        cnt, wcs = cq.poll(num_entries=n - len(got))
        got += wcs[:cnt]
        if time.time() > end:
            raise AssertionError(f"{what}: {len(got)}/{n} completions in {timeout}s")
        if cnt == 0:
            time.sleep(0.001)
    return got


class CompletionError(Exception):
    """A completion with an error status (poll_one)."""


class NoCompletion(AssertionError):
    """No completion within the deadline (poll_one)."""


def poll_one(cq, what, timeout=20.0):
    """The next completion from `cq`, which must be successful, polled
    without a pause for up to `timeout` seconds: CompletionError if it
    failed, NoCompletion if none came."""
    end = time.time() + timeout
    while True:
        cnt, wcs = cq.poll(num_entries=1)
        if cnt:
            wc = wcs[0]
            if wc.status != e.IBV_WC_SUCCESS:
                raise CompletionError(f"{what}: completion status {wc.status}")
            return wc
        if time.time() > end:
            raise NoCompletion(f"{what}: no completion in {timeout:.0f}s")


def state(qp):
    return qp.query(e.IBV_QP_STATE)[0].qp_state


def to_state(qp, st, notify=None):
    """Moves `qp` to state `st` (with en_sqd_async_notify `notify`, if
    given)."""
    attr = QPAttr()
    attr.qp_state = st
    mask = e.IBV_QP_STATE
    if notify is not None:
        attr.en_sqd_async_notify = notify
        mask |= e.IBV_QP_EN_SQD_ASYNC_NOTIFY
    qp.modify(attr, mask)


def error_state(qp, timeout=2.0):
    """The state of a QP that should be entering the error state: the
    peer's QP moves there on its own time (C rxe's responder sends the NAK
    before its QP leaves RTS), so wait a bounded time for it; the state
    found then is returned and the caller's assert still fails if it never
    comes."""
    end = time.time() + timeout
    s = state(qp)
    while s != e.IBV_QPS_ERR and time.time() < end:
        time.sleep(0.005)
        s = state(qp)
    return s


def expect(wc, status, what, opcode=None, byte_len=None):
    """Checks a completion; prints one line that names what was checked
    (the test compares these lines between rrxe and C rxe)."""
    assert wc.status == status, f"{what}: status {wc.status}, want {status}"
    if status == e.IBV_WC_SUCCESS and opcode is not None:
        assert wc.opcode == opcode, f"{what}: opcode {wc.opcode}, want {opcode}"
    if status == e.IBV_WC_SUCCESS and byte_len is not None:
        assert wc.byte_len == byte_len, f"{what}: byte_len {wc.byte_len}, want {byte_len}"
    extra = f" opcode {wc.opcode} byte_len {wc.byte_len}" if status == e.IBV_WC_SUCCESS else ""
    print(f"ok: {what}: status {wc.status}{extra}")


def refused(what, fn, errno_name=False):
    """Calls `fn`, which must fail with PyverbsRDMAError; prints "ok:
    WHAT refused: ERROR" (with `errno_name`, "ok: WHAT refused (ENAME)",
    the errno's name only)."""
    try:
        fn()
    except PyverbsRDMAError as err:
        if errno_name:
            print(f"ok: {what} refused ({errno.errorcode.get(err.error_code, err.error_code)})")
        else:
            print(f"ok: {what} refused: {err}")
    else:
        raise AssertionError(f"{what} accepted")


def qp_ptr(qp):
    """The `struct ibv_qp *` inside pyverbs UD QP `qp`: pyverbs 44 has no
    attach_mcast and does not expose the pointer, so the object's fields
    are scanned for a readable pointer to a struct whose qp_num (offset
    52) and qp_type (offset 60) match.  Test-only."""

    def match(p):
        qpn, = struct.unpack("<I", ctypes.string_at(p + 52, 4))
        typ, = struct.unpack("<I", ctypes.string_at(p + 60, 4))
        return qpn == qp.qp_num and typ == e.IBV_QPT_UD

    p = find_struct(qp, 72, match)
    assert p, "struct ibv_qp not found in the pyverbs QP"
    return p


_VERBS = None


def attach_mcast(qp, mgid, attach=True):
    """ibv_attach_mcast (or, `attach` false, ibv_detach_mcast) of UD QP
    `qp` to the group of GID `mgid` ("xxxx:xxxx:..."), which must
    succeed."""
    global _VERBS
    if _VERBS is None:
        _VERBS = ctypes.CDLL("libibverbs.so.1")
        for f in (_VERBS.ibv_attach_mcast, _VERBS.ibv_detach_mcast):
            f.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint16]
    raw = bytes.fromhex(mgid.replace(":", ""))
    f = _VERBS.ibv_attach_mcast if attach else _VERBS.ibv_detach_mcast
    rc = f(qp_ptr(qp), raw, 0)
    assert rc == 0, f"ibv_{'attach' if attach else 'detach'}_mcast: {rc}"
