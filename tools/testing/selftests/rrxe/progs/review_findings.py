#!/usr/bin/python3
"""Checks for the findings of the security review, through
pyverbs and stock librxe.  Each subcommand fails (exit 1, a line saying
what) on the code before its fix.

  first-key DEV             print the key of the first MR of a fresh device
                            (the dereg-and-rings test calls it on several
                            fresh devices: with a fixed key byte the first
                            key was always 0x100)
  dereg-write DEV_A GIDX_A DEV_B GIDX_B BYTES
                            a large RDMA WRITE from A into B's region,
                            deregistered by B while the WRITE is under way:
                            once dereg returns nothing may land, and the
                            WRITE completes in error (or had finished)
  ring-cap DEV              the per-context ring memory cap: one QP over it,
                            and a second QP that would cross it, fail with
                            ENOMEM; after a destroy the memory is back
  zap DEV                   map a CQ ring (librxe does), delete the device
                            from another process (`rdma link delete`): the
                            mapping then reads zeroes (zapped by ib_core on
                            disassociation) and the process survives writes
"""
import ctypes
import errno
import mmap
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.wr import SGE

from rrxe_ksft.rings import uverbs_maps
from rrxe_ksft.verbs import Endpoint, connect_pair, make_qp, send_wr

RW = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def first_key(dev):
    ctx = Context(name=dev)
    pd = PD(ctx)
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    print(f"{mr.lkey:#x}")


def dereg_write(dev_a, gidx_a, dev_b, gidx_b, size):
    ca, cb = Context(name=dev_a), Context(name=dev_b)
    pa, pb = PD(ca), PD(cb)
    qa_cq, qb_cq = CQ(ca, 8), CQ(cb, 8)
    qa, qb = make_qp(pa, qa_cq), make_qp(pb, qb_cq)
    connect_pair(qa, qb, Endpoint(ca.query_gid(1, gidx_a), gidx_a), Endpoint(cb.query_gid(1, gidx_b), gidx_b), RW,
                 retry_cnt=7)
    # B's region is memory this process owns (it stays mapped after the
    # deregistration, so what lands later is visible).
    buf = mmap.mmap(-1, size)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    mrb = MR(pb, size, RW, address=addr)
    src = MR(pa, size, e.IBV_ACCESS_LOCAL_WRITE)
    src.write(b"\xa5" * size, size)
    qa.post_send(send_wr(0, e.IBV_WR_RDMA_WRITE, [SGE(src.buf, size, src.lkey)], mrb.rkey, addr))
    # Wait for the WRITE's first bytes, then deregister mid-message.
    t0 = time.monotonic()
    while buf[0] != 0xA5:
        if time.monotonic() - t0 > 60:
            die("the WRITE never started")
    landed = buf.find(b"\x00")
    mrb.close()
    snap = bytes(buf)
    got = snap.count(b"\xa5")
    # A's completion: an error (remote access) if the WRITE was cut, or
    # success if it had all landed before the deregistration.
    t0 = time.monotonic()
    while True:
        n, wcs = qa_cq.poll()
        if n:
            break
        if time.monotonic() - t0 > 120:
            die("no completion for the WRITE")
    status = wcs[0].status
    if got == size:
        die(f"the {size}-byte WRITE had all landed before dereg_mr: nothing tested (use more bytes)")
    time.sleep(1)
    if bytes(buf) != snap:
        after = bytes(buf).count(b"\xa5")
        die(f"{after - got} bytes landed after dereg_mr returned ({got} before)")
    if got < size and status == e.IBV_WC_SUCCESS:
        die(f"the WRITE completed successfully but only {got} of {size} bytes landed")
    print(f"ok: dereg during a {size}-byte WRITE: {got} bytes before (first check at {landed}), "
          f"none after; the WRITE completed with status {status}")


def qp_or_errno(pd, cq, depth, sge):
    try:
        return make_qp(pd, cq, depth, 1, sge, 1), 0
    except PyverbsRDMAError as err:
        return None, err.error_code


def ring_cap(dev):
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 4)
    # 2^18 WQEs of 32 SGEs: a 512 MiB send ring, over the 256 MiB cap
    # (and within a 2 GiB VM's vmalloc space: without the cap it succeeds).
    qp, err = qp_or_errno(pd, cq, 1 << 18, 32)
    if qp is not None:
        die("a QP with a 512 MiB send ring was created")
    if err != errno.ENOMEM:
        die(f"a QP over the ring cap failed with errno {err}, not ENOMEM")
    print("ok: 512 MiB send ring refused with ENOMEM")
    # 2^16 WQEs of 32 SGEs: 128 MiB each; two fit no more under 256 MiB
    # (with the RQ and CQ rings), the second fails, and after destroying
    # the first the second fits.
    q1, err = qp_or_errno(pd, cq, 1 << 16, 32)
    if q1 is None:
        die(f"a QP with a 128 MiB send ring failed: errno {err}")
    q2, err = qp_or_errno(pd, cq, 1 << 16, 32)
    if q2 is not None:
        die("two QPs of 128 MiB send rings fit under the 256 MiB cap")
    if err != errno.ENOMEM:
        die(f"the QP crossing the cap failed with errno {err}, not ENOMEM")
    q1.close()
    q2, err = qp_or_errno(pd, cq, 1 << 16, 32)
    if q2 is None:
        die(f"after destroying the first QP, the second still fails: errno {err}")
    q2.close()
    print("ok: second 128 MiB ring refused with ENOMEM while the first lives, accepted after")


def zap(dev):
    ctx = Context(name=dev)
    cq = CQ(ctx, 16)
    maps = uverbs_maps()
    if not maps:
        die("librxe mapped no ring of the uverbs device")
    lo, hi = maps[0]
    # struct rxe_queue_buf: log2_elem_size, index_mask (non-zero).
    hdr = ctypes.string_at(lo, 8)
    if hdr == b"\0" * 8:
        die("the ring header reads zero before the device went")
    subprocess.run(["rdma", "link", "delete", dev], check=True, timeout=120)
    hdr = ctypes.string_at(lo, 8)
    if hdr != b"\0" * 8:
        die(f"after disassociation the ring still shows its header {hdr.hex()} "
            "(a mapping the kernel forgot)")
    ctypes.memmove(lo, b"x" * 64, 64)  # writable (a dummy page), no fault
    print(f"ok: ring mapping {lo:#x}-{hi:#x} reads zeroes after `rdma link delete`, writes are harmless")
    del cq, ctx  # their destroy fails with EIO: the device is gone


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "first-key":
        first_key(args[0])
    elif cmd == "dereg-write":
        dereg_write(args[0], int(args[1]), args[2], int(args[3]), int(args[4]))
    elif cmd == "ring-cap":
        ring_cap(args[0])
    elif cmd == "zap":
        zap(args[0])
    else:
        die(f"unknown subcommand {cmd}")


if __name__ == "__main__":
    main()
