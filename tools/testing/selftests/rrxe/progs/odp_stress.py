#!/usr/bin/python3
"""Invalidation storm on ODP memory regions while traffic runs (pyverbs,
stock librxe, two RC QPs on one device).

Two ODP targets: a shared memfd mapping that a thread keeps dropping
(MADV_DONTNEED over random ranges) and write-protecting for short
windows (mprotect PROT_READ, then back), and a private anonymous mapping
under a fork storm (each fork write-protects it for copy-on-write; the
children exit at once).  The main loop WRITEs 1 to 64 KiB at a random
offset from pinned memory into a target and READs it back into pinned
memory, for SECS seconds.  Every completion must be a success or, for a
WRITE that met a write-protected window, IBV_WC_REM_ACCESS_ERR (then
the pair is replaced); every WRITE+READ that succeeded must give the
bytes written.  Prints the counts.  Then the lifetimes: ODP regions
deregistered under a 1 MiB WRITE, a process exiting with a WRITE into
its ODP region in flight.  usage: odp_stress.py DEV GIDX SECS"""
import ctypes
import os
import random
import sys
import threading
import time

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.wr import SGE

from rrxe_ksft.verbs import poll, rc_pair, send_wr

dev, gidx, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
ctx = Context(name=dev)
pd = PD(ctx)
LW = e.IBV_ACCESS_LOCAL_WRITE
ALL = LW | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
SIZE = 1 << 20
PAGE = 4096
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]

fd = os.memfd_create("odp-stress")
os.ftruncate(fd, SIZE)
shared = libc.mmap(None, SIZE, 3, 1, fd, 0)
private = libc.mmap(None, SIZE, 3, 0x22, -1, 0)
assert shared and private and shared != ctypes.c_void_p(-1).value
ctypes.memset(private, 0, SIZE)
smr = MR(pd, SIZE, ALL | e.IBV_ACCESS_ON_DEMAND, address=shared)
pmr = MR(pd, SIZE, ALL | e.IBV_ACCESS_ON_DEMAND, address=private)
src, dst = MR(pd, 65536, ALL), MR(pd, 65536, ALL)
stop = threading.Event()
counts = {"dontneed": 0, "protect": 0, "fork": 0}
protected = threading.Lock()


def storm():
    rnd = random.Random(1)
    while not stop.is_set():
        k = rnd.randrange(10)
        if k < 6:
            off = rnd.randrange(SIZE // PAGE) * PAGE
            n = rnd.randrange(1, 64) * PAGE
            n = min(n, SIZE - off)
            assert libc.madvise(shared + off, n, 4) == 0
            counts["dontneed"] += 1
        elif k < 8:
            with protected:
                assert libc.mprotect(shared, SIZE, 1) == 0
                time.sleep(0.002)
                assert libc.mprotect(shared, SIZE, 3) == 0
            counts["protect"] += 1
        else:
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
            counts["fork"] += 1
        time.sleep(0.001)


t = threading.Thread(target=storm, daemon=True)
t.start()
rnd = random.Random(2)
# The responder faults pages in while the storm drops and protects them
# (and forks); on the debug kernel, with the other flavor's VM beside it,
# one such fault can take seconds, and the requester must wait it out:
# local ACK timeout 17 (0.54 s), 7 retries (4.3 s in all).  This test is
# about the data, not about retry exhaustion.
QP = dict(mtu=1024, timeout=17, retry_cnt=7)
pair = rc_pair(ctx, pd, gidx, ALL, **QP)
ok = clean = 0
end = time.time() + secs
try:
    while time.time() < end:
        (a, b), (ca, cb) = pair
        target, mr = (shared, smr) if rnd.random() < 0.5 else (private, pmr)
        n = rnd.randrange(1, 65537)
        off = rnd.randrange(SIZE - n)
        data = os.urandom(n)
        src.write(data, n)
        a.post_send(send_wr(1, e.IBV_WR_RDMA_WRITE, [SGE(src.buf, n, src.lkey)], mr.rkey, target + off))
        wc = poll(ca, "write", timeout=60)[0]
        if wc.status != e.IBV_WC_SUCCESS:
            assert wc.status == e.IBV_WC_REM_ACCESS_ERR and target == shared, \
                f"WRITE {n} B at +{off}: status {wc.status}"
            clean += 1
            pair = rc_pair(ctx, pd, gidx, ALL, **QP)
            continue
        a.post_send(send_wr(2, e.IBV_WR_RDMA_READ, [SGE(dst.buf, n, dst.lkey)], mr.rkey, target + off))
        wc = poll(ca, "read", timeout=60)[0]
        assert wc.status == e.IBV_WC_SUCCESS, f"READ {n} B at +{off}: status {wc.status}"
        got = dst.read(n, 0)
        assert got == data, f"READ back {n} B at +{off} differs"
        ok += 1
finally:
    stop.set()
    t.join()
assert ok > 0, "no WRITE+READ completed"

# Lifetimes: an ODP region deregistered while a 1 MiB WRITE into it is in
# flight (dereg returns; the WRITE lands before or is refused after), and
# a process that exits with a WRITE into its ODP region in flight.
(a, b), (ca, cb) = rc_pair(ctx, pd, gidx, ALL, **QP)
big = MR(pd, SIZE, ALL)
for k in range(5):
    victim = MR(pd, SIZE, ALL | e.IBV_ACCESS_ON_DEMAND, address=shared)
    a.post_send(send_wr(3, e.IBV_WR_RDMA_WRITE, [SGE(big.buf, SIZE, big.lkey)], victim.rkey, shared))
    victim.close()
    wc = poll(ca, "write during dereg", timeout=60)[0]
    assert wc.status in (e.IBV_WC_SUCCESS, e.IBV_WC_REM_ACCESS_ERR), f"status {wc.status}"
    if wc.status != e.IBV_WC_SUCCESS:
        (a, b), (ca, cb) = rc_pair(ctx, pd, gidx, ALL, **QP)
print("ok: 5 ODP regions deregistered under a 1 MiB WRITE: each WRITE landed or was refused")
pid = os.fork()
if pid == 0:
    c2 = Context(name=dev)
    p2 = PD(c2)
    m2 = MR(p2, SIZE, ALL | e.IBV_ACCESS_ON_DEMAND, address=private)
    s2 = MR(p2, SIZE, ALL)
    (x, y), _ = rc_pair(c2, p2, gidx, ALL, **QP)
    x.post_send(send_wr(4, e.IBV_WR_RDMA_WRITE, [SGE(s2.buf, SIZE, s2.lkey)], m2.rkey, private))
    os._exit(0)
_, st = os.waitpid(pid, 0)
assert st == 0, f"child status {st}"
print("ok: a process exited with a WRITE into its ODP region in flight")
print(f"ok: {ok} WRITE+READ byte-exact, {clean} WRITEs refused cleanly (write-protected), "
      f"storm: {counts['dontneed']} MADV_DONTNEED, {counts['protect']} mprotect windows, "
      f"{counts['fork']} forks")
