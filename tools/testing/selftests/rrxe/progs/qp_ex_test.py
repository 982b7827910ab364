#!/usr/bin/python3
"""The extended verbs through pyverbs (stock librxe): an RC QP created
with ibv_create_qp_ex and its send operations (wr_send, wr_rdma_write,
wr_rdma_read, wr_atomic_fetch_add, wr_atomic_cmp_swp, wr_atomic_write),
several WRs in one wr_start/wr_complete batch, completions read from an
ibv_create_cq_ex CQ (opcode, byte_len, qp_num), data compared.  ATOMIC
WRITE places its 8 bytes as given (no byte swap); a duplicate is never
written twice.  Then ATOMIC WRITE's errors: wrong rkey, a region without
remote write, a QP without remote write access.  Prints one line per
check; the scenario runs it on rrxe and on C rxe and compares the lines.
usage: qp_ex_test.py DEV GIDX"""
import struct
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ, CQEX, CqInitAttrEx, PollCqAttr
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.wr import SGE, RecvWR

from rrxe_ksft.data import ramp, u64
from rrxe_ksft.verbs import Endpoint, connect_pair, error_state, make_qp, make_qp_ex, state

dev, gidx = sys.argv[1], int(sys.argv[2])
ctx = Context(name=dev)
pd = PD(ctx)
ALL = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
       | e.IBV_ACCESS_REMOTE_ATOMIC)
OPS = (e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_RDMA_WRITE | e.IBV_QP_EX_WITH_RDMA_READ
       | e.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | e.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP
       | e.IBV_QP_EX_WITH_ATOMIC_WRITE)
SIZE = 16384
here = Endpoint(ctx.query_gid(1, gidx), gidx)
local = MR(pd, SIZE, ALL)
remote = MR(pd, SIZE, ALL)
ro = MR(pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ)
pattern = ramp(SIZE, 11, 1)


def ex_pair(b_access=ALL):
    """QPEx a (its completions on a CQEX) -> plain QP b (plain CQ), b with
    access `b_access`."""
    cq = CQEX(ctx, CqInitAttrEx(cqe=64, wc_flags=e.IBV_WC_EX_WITH_BYTE_LEN | e.IBV_WC_EX_WITH_QP_NUM))
    a = make_qp_ex(ctx, pd, cq, OPS, 32, 4, send_sge=2)
    cb = CQ(ctx, 64)
    b = make_qp(pd, cb, 4, 16)
    connect_pair(a, b, here, here, ALL, a_kw={"max_rd_atomic": 4},
                 b_kw={"access": b_access, "max_dest_rd_atomic": 4})
    return a, b, cq, cb


def poll_ex(cq, n, what, timeout=20.0):
    """`n` completions: (wr_id, status, opcode, byte_len, qp_num).  With
    librxe a poll session ends either at end_poll (which consumes the
    current entry) or at the first ENOENT of poll_next (which consumes the
    current entry, publishes the consumer index and unlocks by itself: no
    end_poll after it, or an entry would be skipped)."""
    out = []
    end = time.time() + timeout
    attr = PollCqAttr()
    while len(out) < n:
        if cq.start_poll(attr) != 0:
            assert time.time() < end, f"{what}: {len(out)}/{n} completions in {timeout}s"
            time.sleep(0.001)
            continue
        while True:
            ok = cq.status == e.IBV_WC_SUCCESS
            out.append((cq.wr_id, cq.status, cq.read_opcode() if ok else None,
                        cq.read_byte_len() if ok else None, cq.read_qp_num()))
            if len(out) == n:
                cq.end_poll()
                break
            if cq.poll_next() != 0:
                break
    return out


a, b, cq, cb = ex_pair()
local.write(pattern, SIZE)
remote.write(bytes(SIZE), SIZE)
remote.write(struct.pack("<QQ", 100, 7), 16, 8192)
b.post_recv(RecvWR(wr_id=50, num_sge=1, sg=[SGE(remote.buf + 12288, 256, remote.lkey)]))
aw = bytes([0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88])
a.wr_start()
a.wr_id, a.wr_flags = 1, e.IBV_SEND_SIGNALED
a.wr_rdma_write(remote.rkey, remote.buf)
a.wr_set_sge(SGE(local.buf, 4096, local.lkey))
a.wr_id, a.wr_flags = 2, e.IBV_SEND_SIGNALED
a.wr_rdma_read(remote.rkey, remote.buf + 100)
a.wr_set_sge(SGE(local.buf + 4096 + 100, 3000, local.lkey))
a.wr_id, a.wr_flags = 3, e.IBV_SEND_SIGNALED
a.wr_atomic_fetch_add(remote.rkey, remote.buf + 8192, 5)
a.wr_set_sge(SGE(local.buf + 8192, 8, local.lkey))
a.wr_id, a.wr_flags = 4, e.IBV_SEND_SIGNALED
a.wr_atomic_cmp_swp(remote.rkey, remote.buf + 8200, 7, 9)
a.wr_set_sge(SGE(local.buf + 8200, 8, local.lkey))
a.wr_id, a.wr_flags = 5, e.IBV_SEND_SIGNALED
a.wr_atomic_write(remote.rkey, remote.buf + 8208, aw)
a.wr_id, a.wr_flags = 6, e.IBV_SEND_SIGNALED
a.wr_send()
a.wr_set_sge(SGE(local.buf, 256, local.lkey))
a.wr_complete()
wcs = poll_ex(cq, 6, "batch")
want = [(1, e.IBV_WC_RDMA_WRITE, 4096), (2, e.IBV_WC_RDMA_READ, 3000), (3, e.IBV_WC_FETCH_ADD, 8),
        (4, e.IBV_WC_COMP_SWAP, 8), (5, e.IBV_WC_ATOMIC_WRITE, 8), (6, e.IBV_WC_SEND, 256)]
for (wr_id, status, opcode, byte_len, qpn), (w_id, w_op, w_len) in zip(wcs, want):
    assert (wr_id, status, opcode, byte_len, qpn) == (w_id, e.IBV_WC_SUCCESS, w_op, w_len, a.qp_num), \
        (wr_id, status, opcode, byte_len, qpn)
    print(f"ok: ibv_qp_ex WR {wr_id}: opcode {opcode} byte_len {byte_len}, in order, qp_num right")
assert remote.read(4096, 0) == pattern[:4096], "wr_rdma_write data"
assert local.read(3000, 4196) == pattern[100:3100], "wr_rdma_read data"
assert u64(local, 8192) == 100 and u64(remote, 8192) == 105, "wr_atomic_fetch_add"
assert u64(local, 8200) == 7 and u64(remote, 8200) == 9, "wr_atomic_cmp_swp"
assert remote.read(8, 8208) == aw, f"wr_atomic_write placed {remote.read(8, 8208).hex()}"
cnt, rw = cb.poll(num_entries=1)
assert cnt == 1 and rw[0].status == e.IBV_WC_SUCCESS and rw[0].byte_len == 256, "the SEND's receive"
print("ok: data of every operation matches; ATOMIC WRITE placed its bytes as given")

# ATOMIC WRITEs in a row onto one address: the last one wins, each once.
for i in range(16):
    a.wr_start()
    a.wr_id, a.wr_flags = 100 + i, e.IBV_SEND_SIGNALED
    a.wr_atomic_write(remote.rkey, remote.buf + 8216, struct.pack("<Q", 1000 + i))
    a.wr_complete()
wcs = poll_ex(cq, 16, "16 atomic writes")
assert [w[0] for w in wcs] == list(range(100, 116)) and all(w[1] == 0 for w in wcs), wcs
assert u64(remote, 8216) == 1015, u64(remote, 8216)
print("ok: 16 ATOMIC WRITEs completed in order, the last value is in place")


def aw_error(what, status, rkey=None, addr=None, b_access=ALL):
    a, b, cq, cb = ex_pair(b_access)
    remote.write(bytes(8), 8, 8224)
    ro.write(bytes(8), 8, 0)
    a.wr_start()
    a.wr_id, a.wr_flags = 9, e.IBV_SEND_SIGNALED
    a.wr_atomic_write(remote.rkey if rkey is None else rkey, remote.buf + 8224 if addr is None else addr,
                      bytes([0xff] * 8))
    a.wr_complete()
    (wr_id, st, _, _, _), = poll_ex(cq, 1, what)
    assert st == status, f"{what}: status {st}, want {status}"
    assert error_state(a) == e.IBV_QPS_ERR and error_state(b) == e.IBV_QPS_ERR, (state(a), state(b))
    assert remote.read(8, 8224) == bytes(8) and ro.read(8, 0) == bytes(8), f"{what}: written"
    print(f"ok: {what}: status {st}, both QPs in the error state, nothing written")


aw_error("ATOMIC WRITE with a wrong rkey", e.IBV_WC_REM_ACCESS_ERR, rkey=remote.rkey ^ 0x5a)
aw_error("ATOMIC WRITE to a region without remote write", e.IBV_WC_REM_ACCESS_ERR, rkey=ro.rkey, addr=ro.buf)
aw_error("ATOMIC WRITE to a QP without remote-write access", e.IBV_WC_REM_INV_REQ_ERR,
         b_access=e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ)
print("qp_ex_test: all checks passed")
