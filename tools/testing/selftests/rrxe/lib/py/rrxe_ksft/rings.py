"""The rings librxe maps from the uverbs device (struct rxe_queue_buf),
found among this process's mappings and written the way librxe writes
them: a hostile or buggy process's view, and the FLUSH WQE that Debian
12's librxe (rdma-core 44) cannot post."""
import ctypes
import struct

import pyverbs.enums as e

from .verbs import make_qp_ex

# struct rxe_queue_buf: the producer index's offset, the first slot's.
RING_PROD, RING_DATA = 128, 384
WR_FLUSH = 14


def uverbs_maps():
    """The /dev/infiniband/uverbs mappings of this process (start, end),
    in address order."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            if "/dev/infiniband/uverbs" in line:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                out.append((lo, hi))
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
    before = set(uverbs_maps())
    obj = make()
    return obj, [Ring(lo, hi) for lo, hi in uverbs_maps() if (lo, hi) not in before]


def send_ring(rings):
    """Of a QP's rings, the send ring: the one with the larger slots (a
    send WQE is 208 bytes and its SGEs)."""
    return max(rings, key=lambda r: r.log2)


def qp_with_ring(ctx, pd, cq, ops, max_send_wr):
    """An RC ibv_qp_ex on context `ctx` and PD `pd` (send ops `ops`) and
    its send ring (of its two new mappings)."""
    qp, rings = new_maps(lambda: make_qp_ex(ctx, pd, cq, ops, max_send_wr, 4))
    assert len(rings) == 2, f"{len(rings)} new ring mappings"
    return qp, send_ring(rings)


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
