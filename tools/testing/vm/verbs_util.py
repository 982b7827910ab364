"""Shared pyverbs helpers for the VM tests (stock librxe): connected RC
QP pairs, polling with a deadline, completion checks.  Imported by the
test scripts in this directory (run with /usr/bin/python3, whose pyverbs
is Debian's)."""
import ctypes
import struct
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx

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


def post_ex(q, wr_id, build, sge=None):
    """Posts one signaled WR on ibv_qp_ex `q`: `build()` calls the
    ibv_wr_* builder, `sge` (if any) is its one SGE."""
    q.wr_start()
    q.wr_id, q.wr_flags = wr_id, e.IBV_SEND_SIGNALED
    build()
    if sge is not None:
        q.wr_set_sge(sge)
    q.wr_complete()


def connect(qp, peer_qpn, gid, gidx, access, mtu=1024, psn=0, peer_psn=0, timeout=14, retry_cnt=3,
            rnr_retry=7, max_rd_atomic=1, max_dest_rd_atomic=1):
    """Moves RC/UC QP `qp` through INIT, RTR and RTS towards `peer_qpn` at
    `gid` (sent from GID index `gidx`)."""
    rc = qp.qp_type == e.IBV_QPT_RC
    a = QPAttr()
    a.qp_state = e.IBV_QPS_INIT
    a.pkey_index = 0
    a.port_num = 1
    a.qp_access_flags = access
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTR
    a.path_mtu = MTUS[mtu]
    a.dest_qp_num = peer_qpn
    a.rq_psn = peer_psn
    a.max_dest_rd_atomic = max_dest_rd_atomic
    a.min_rnr_timer = 1
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=gidx, hop_limit=64), is_global=1, port_num=1)
    mask = e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN
    if rc:
        mask |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
    qp.modify(a, mask)
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTS
    a.timeout = timeout
    a.retry_cnt = retry_cnt
    a.rnr_retry = rnr_retry
    a.sq_psn = psn
    a.max_rd_atomic = max_rd_atomic
    mask = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
    if rc:
        mask |= e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC
    qp.modify(a, mask)


def ud_ready(q, qkey):
    """Moves UD QP `q` through INIT (port 1, P_Key index 0, Q_Key
    `qkey`), RTR and RTS (SQ PSN 0); returns it."""
    a = QPAttr()
    a.qp_state, a.pkey_index, a.port_num, a.qkey = e.IBV_QPS_INIT, 0, 1, qkey
    q.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_QKEY)
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTR
    q.modify(a, e.IBV_QP_STATE)
    a = QPAttr()
    a.qp_state, a.sq_psn = e.IBV_QPS_RTS, 0
    q.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)
    return q


def readable_ranges():
    """The readable mappings of this process (start, end), from
    /proc/self/maps."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if "r" in line.split()[1]:
                out.append((lo, hi))
    return out


def find_struct(obj, size, match):
    """A pointer field of pyverbs object `obj` (which does not expose its
    C struct) to `size` readable bytes for which `match(p)` holds: the
    object's fields are scanned.  Test-only."""
    maps = readable_ranges()
    for off in range(16, 256, 8):
        p = struct.unpack("<Q", ctypes.string_at(id(obj) + off, 8))[0]
        if p and p % 8 == 0 and any(lo <= p and p + size <= hi for lo, hi in maps) and match(p):
            return p
    return None


def rc_pair(ctx, pd, gidx, access, depth=16, sge=4, **kw):
    """Two connected RC QPs on one device (a sends, b responds), each with
    its own CQ; `kw` goes to `connect` for both (or, as `a_kw`/`b_kw`
    dicts, to one)."""
    a_kw, b_kw = kw.pop("a_kw", {}), kw.pop("b_kw", {})
    cqs = [CQ(ctx, 4 * depth), CQ(ctx, 4 * depth)]
    qps = [QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=c, rcq=c,
                             cap=QPCap(max_send_wr=depth, max_recv_wr=depth, max_send_sge=sge,
                                       max_recv_sge=sge)))
           for c in cqs]
    gid = ctx.query_gid(1, gidx)
    for me, peer, own in ((qps[0], qps[1], a_kw), (qps[1], qps[0], b_kw)):
        args = {"access": access, **kw, **own}
        connect(me, peer.qp_num, gid, gidx, **args)
    return qps, cqs


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


def state(qp):
    return qp.query(e.IBV_QP_STATE)[0].qp_state


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
    (the scenario compares these lines between rrxe and C rxe)."""
    assert wc.status == status, f"{what}: status {wc.status}, want {status}"
    if status == e.IBV_WC_SUCCESS and opcode is not None:
        assert wc.opcode == opcode, f"{what}: opcode {wc.opcode}, want {opcode}"
    if status == e.IBV_WC_SUCCESS and byte_len is not None:
        assert wc.byte_len == byte_len, f"{what}: byte_len {wc.byte_len}, want {byte_len}"
    extra = f" opcode {wc.opcode} byte_len {wc.byte_len}" if status == e.IBV_WC_SUCCESS else ""
    print(f"ok: {what}: status {wc.status}{extra}")


# struct rxe_queue_buf: the producer index's offset, the first slot's.
RING_PROD, RING_DATA = 128, 384
WR_FLUSH = 14


def uverbs_maps():
    """The /dev/infiniband/uverbs mappings of this process (start, end)."""
    out = set()
    with open("/proc/self/maps") as f:
        for line in f:
            if "/dev/infiniband/uverbs" in line:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                out.add((lo, hi))
    return out


class Ring:
    """A mapped ring (struct rxe_queue_buf), as librxe maps it: its
    producer index and slots, written the way librxe writes them."""

    def __init__(self, lo, hi):
        self.mem = (ctypes.c_char * (hi - lo)).from_address(lo)
        self.log2, self.mask = struct.unpack_from("<II", self.mem, 0)

    def prod(self):
        return struct.unpack_from("<I", self.mem, RING_PROD)[0]

    def set_prod(self, v):
        struct.pack_into("<I", self.mem, RING_PROD, v)

    def slot(self, i):
        return RING_DATA + ((i & self.mask) << self.log2)

    def push(self, wqe):
        p = self.prod()
        off = self.slot(p)
        ctypes.memset(ctypes.addressof(self.mem) + off, 0, 1 << self.log2)
        ctypes.memmove(ctypes.addressof(self.mem) + off, wqe, len(wqe))
        self.set_prod((p + 1) & self.mask)


def new_maps(make):
    """`make()`'s result and the rings it mapped (the new uverbs
    mappings)."""
    before = uverbs_maps()
    obj = make()
    return obj, [Ring(lo, hi) for lo, hi in uverbs_maps() - before]


def post_flush(qp, ring, wr_id, rkey, va, length, plt, sel):
    """Posts a signaled FLUSH WQE on ibv_qp_ex `qp` as rdma-core 47's
    wr_flush writes it (Debian 12's librxe 44 has no ibv_wr_flush): into
    the mapped send ring `ring` (struct rxe_send_wqe: opcode 14,
    wr.flush.rkey/type/level, iova and dma.length), published with the
    ring's producer index, then the doorbell librxe rings, an empty
    ibv_wr_start/ibv_wr_complete batch."""
    w = bytearray(208)
    struct.pack_into("<QIII", w, 0, wr_id, 0, WR_FLUSH, e.IBV_SEND_SIGNALED)
    struct.pack_into("<QIIBB", w, 24, va, length, rkey, plt, sel)
    struct.pack_into("<Q", w, 152, va)              # iova
    struct.pack_into("<II", w, 184, length, length)  # dma.length, dma.resid
    ring.push(bytes(w))
    qp.wr_start()
    qp.wr_complete()


def qp_with_ring(d, cq, ops, max_send_wr):
    """An RC ibv_qp_ex on Device `d` (send ops `ops`) and its send ring
    (of its two new mappings, the one with the larger slots)."""
    qp, rings = new_maps(lambda: QPEx(d.ctx, QPInitAttrEx(
        qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, pd=d.pd,
        cap=QPCap(max_send_wr=max_send_wr, max_recv_wr=4, max_send_sge=1, max_recv_sge=1),
        comp_mask=e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        send_ops_flags=ops)))
    assert len(rings) == 2, f"{len(rings)} new ring mappings"
    return qp, max(rings, key=lambda r: r.log2)
