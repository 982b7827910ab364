#!/usr/bin/python3
"""CQ verbs on an rrxe device through rdma-core's pyverbs (librxe binds it):
create CQs of several sizes (the ring is mapped by librxe and polled from
user memory), completion channels and arming, bad sizes refused, many CQs,
CQs left for process exit to clean up.  usage: cq_test.py DEV"""
import sys

from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context

from rrxe_ksft.verbs import refused

dev = sys.argv[1]
ctx = Context(name=dev)
max_cqe = ctx.query_device().max_cqe

for want in (1, 15, 16, 100, 4096, max_cqe):
    cq = CQ(ctx, want)
    assert want <= cq.cqe, f"asked {want}, got {cq.cqe}"
    assert cq.cqe + 1 & cq.cqe == 0, f"capacity {cq.cqe} is not 2^n - 1"
    n, wcs = cq.poll(4)  # librxe reads the mapped ring
    assert n == 0 and not wcs, (n, wcs)
    cq.close()
print(f"ok: CQ sizes 1..{max_cqe}")

for bad in (0, max_cqe + 1, 1 << 30):
    refused(f"cqe={bad}", lambda: CQ(ctx, bad))

ch = CompChannel(ctx)
cq = CQ(ctx, 64, None, ch, 0)
cq.req_notify(solicited_only=False)
cq.req_notify(solicited_only=True)
assert cq.poll(1)[0] == 0
cq.close()
ch.close()
print("ok: completion channel and arming")

cqs = [CQ(ctx, 32) for _ in range(200)]
for c in cqs[::2]:
    c.close()
print("ok: 200 CQs, 100 left open for process exit")
