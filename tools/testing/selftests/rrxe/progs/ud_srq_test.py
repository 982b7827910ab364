#!/usr/bin/python3
"""UD datagrams, shared receive queues and CQ resize through pyverbs (stock
librxe) on one device, UD QPs sending to each other through an address
handle for the device's own IPv4 GID.  Each check prints a line; the
scenario runs this on rrxe and on C rxe and compares the lines.

UD: a datagram with immediate data (completion: RECV, byte_len = 40 +
payload, src_qp, IB_WC_GRH and immediate); the GRH: 20 zero bytes, then
the datagram's IPv4 header (version, length, protocol, addresses); over
IPv6 (the link-local GID), the IPv6 header; a wrong
Q_Key is dropped, a WR Q_Key with the high bit set sends the QP's own; a
datagram longer than the receive buffer is dropped and the WQE stays for
the next; a send longer than the port MTU completes and sends nothing; an
AH of another PD fails the send (LOC_QP_OP_ERR).  SRQ: a UD QP on an SRQ,
the limit event when a take leaves fewer WQEs than the limit (then the
limit reads 0), IB_EVENT_QP_LAST_WQE_REACHED when the QP enters the error
state, SRQ resize with WQEs posted (smaller than those refused).  CQ resize: smaller than the
completions not polled is refused, larger keeps them in order.
Solicited-only notification: an event for a solicited datagram only.
usage: ud_srq_test.py DEV GIDX"""
import os
import select
import struct
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

from rrxe_ksft.data import ramp
from rrxe_ksft.events import event_name, next_event
from rrxe_ksft.verbs import make_ah, poll, to_state, ud_qp

dev, gidx = sys.argv[1], int(sys.argv[2])
ctx = Context(name=dev)
pd = PD(ctx)
gid = ctx.query_gid(1, gidx)
QKEY = 0x11111111
SIZE = 65536
mr = MR(pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
mtu = {e.IBV_MTU_1024: 1024, e.IBV_MTU_2048: 2048, e.IBV_MTU_4096: 4096}[ctx.query_port(1).active_mtu]


def recv(target, off, length, wr_id):
    target.post_recv(RecvWR(wr_id=wr_id, num_sge=1, sg=[SGE(mr.buf + off, length, mr.lkey)]))


def send(q, ah, dst, off, n, wr_id, qkey=QKEY, imm=None, solicited=False):
    flags = e.IBV_SEND_SIGNALED | (e.IBV_SEND_SOLICITED if solicited else 0)
    wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_SEND_WITH_IMM if imm is not None else e.IBV_WR_SEND,
                num_sge=1, sg=[SGE(mr.buf + off, n, mr.lkey)], send_flags=flags)
    if imm is not None:
        wr.imm_data = imm
    wr.set_wr_ud(ah, dst.qp_num, qkey)
    q.post_send(wr)


def fill(off, n, seed):
    data = ramp(n, 13, seed)
    mr.write(data, n, off)
    return data


def wc_line(wc, what, sender=None):
    flags = []
    if wc.wc_flags & e.IBV_WC_GRH:
        flags.append("GRH")
    if wc.wc_flags & e.IBV_WC_WITH_IMM:
        flags.append("IMM")
    src = "" if sender is None else f" src_qp {'sender' if wc.src_qp == sender.qp_num else wc.src_qp}"
    return (f"{what}: status {wc.status} opcode {wc.opcode} byte_len {wc.byte_len}{src} "
            f"flags {'|'.join(flags) or '-'}")


def nothing(cq, what, timeout=1.0):
    try:
        wc = poll(cq, what, timeout=timeout)
    except Exception:
        print(f"ok: {what}: no completion")
        return
    raise AssertionError(f"{what}: unexpected completion {wc_line(wc[0], what)}")


cq = CQ(ctx, 64)
a, b = ud_qp(pd, cq, QKEY, 16), ud_qp(pd, cq, QKEY, 16)
ah = make_ah(pd, gid, gidx)

# 1. A datagram with immediate data, and its GRH.
data = fill(0, 100, 1)
recv(b, 4096, 40 + 200, 1)
send(a, ah, b, 0, 100, 2, imm=0x12345678)
wcs = poll(cq, "datagram", n=2)
for wc in sorted(wcs, key=lambda w: w.wr_id):
    print("ok: " + wc_line(wc, f"wr {wc.wr_id}", a if wc.wr_id == 1 else None))
rwc = [w for w in wcs if w.wr_id == 1][0]
print(f"ok: immediate data {rwc.imm_data:#x}")
got = mr.read(40 + 100, 4096)
assert got[40:] == data, "payload differs"
grh = got[:40]
ip = grh[20:40]
v4 = bytes.fromhex("".join(gid.gid.split(":")[-2:]))
print(f"ok: GRH: first 20 bytes zero {grh[:20] == bytes(20)}, version/IHL {ip[0]:#x}, "
      f"total length {struct.unpack('>H', ip[2:4])[0]}, protocol {ip[9]}, "
      f"source is our address {ip[12:16] == v4}, destination is our address {ip[16:20] == v4}")

# 1b. Over IPv6 (the device's link-local GID): the GRH is the IPv6 header.
g6 = next(i for i in range(16) if ctx.query_gid(1, i).gid.startswith("fe80"))
gid6 = ctx.query_gid(1, g6)
ah6 = make_ah(pd, gid6, g6)
data = fill(0, 100, 2)
recv(b, 4096, 40 + 200, 20)
send(a, ah6, b, 0, 100, 21)
for wc in sorted(poll(cq, "IPv6 datagram", n=2), key=lambda w: w.wr_id):
    print("ok: IPv6: " + wc_line(wc, f"wr {wc.wr_id}", a if wc.wr_id == 20 else None))
got = mr.read(40 + 100, 4096)
assert got[40:] == data, "IPv6 payload differs"
g = got[:40]
addr6 = bytes.fromhex(gid6.gid.replace(":", ""))
print(f"ok: IPv6 GRH: version {g[0] >> 4}, payload length {struct.unpack('>H', g[4:6])[0]}, "
      f"next header {g[6]}, source is our address {g[8:24] == addr6}, destination is our address "
      f"{g[24:40] == addr6}")

# 2. Q_Keys: a wrong one is dropped; the high bit sends the QP's own
# (IBTA C10-15; C rxe sends the WR's value as is: a named deviation).
cq = CQ(ctx, 64)
a, b = ud_qp(pd, cq, QKEY, 16), ud_qp(pd, cq, QKEY, 16)
recv(b, 4096, 240, 3)
send(a, ah, b, 0, 64, 4, qkey=0x22222222)
print("ok: " + wc_line(poll(cq, "wrong Q_Key send")[0], "send with a wrong Q_Key"))
nothing(cq, "datagram with a wrong Q_Key")
c = ud_qp(pd, cq, 0x80000001, 16)
send(c, ah, b, 0, 64, 6, qkey=0x80000000)
print("ok: " + wc_line(poll(cq, "privileged Q_Key send")[0], "send with the QP's Q_Key 0x80000001"))
nothing(cq, "QP Q_Key 0x80000001 (privileged) sent to Q_Key 0x11111111", timeout=0.5)
send(a, ah, b, 0, 64, 7, qkey=0x80000000)
wcs = poll(cq, "Q_Key high bit send")
got = [w for w in wcs if w.wr_id == 3]
try:
    got += poll(cq, "Q_Key high bit datagram", timeout=1.0)
except AssertionError:
    pass
print(f"ok: WR Q_Key with the high bit set (the QP's is used): datagram received {len(got) + len(wcs) == 2}")

# 3. Too long for the receive buffer: dropped, the WQE waits.
cq = CQ(ctx, 64)
a, b = ud_qp(pd, cq, QKEY, 16), ud_qp(pd, cq, QKEY, 16)
recv(b, 8192, 40 + 50, 8)
send(a, ah, b, 0, 100, 9)
print("ok: " + wc_line(poll(cq, "long datagram's send")[0], "send of 100 bytes to a 90-byte buffer"))
try:
    wc = poll(cq, "datagram longer than the receive buffer", timeout=1.0)[0]
    print("ok: " + wc_line(wc, "datagram longer than the receive buffer"))
except AssertionError:
    print("ok: datagram longer than the receive buffer: no completion")
send(a, ah, b, 0, 20, 10)
# The send's and the receive's completions, in wr_id order (which of the
# two is polled first is a race).
for wc in sorted(poll(cq, "short datagram and its receive", n=2), key=lambda w: w.wr_id):
    print("ok: " + wc_line(wc, f"then 20 bytes: wr {wc.wr_id}"))

# 4. Longer than the port MTU: completes, nothing sent.
cq = CQ(ctx, 64)
a, b = ud_qp(pd, cq, QKEY, 16), ud_qp(pd, cq, QKEY, 16)
recv(b, 16384, 40 + mtu + 64, 11)
send(a, ah, b, 0, mtu + 1, 12)
print("ok: " + wc_line(poll(cq, "over-MTU send")[0], "send of MTU + 1 bytes"))
nothing(cq, "datagram over the MTU")
send(a, ah, b, 0, mtu, 13)
for wc in sorted(poll(cq, "MTU datagram", n=2), key=lambda w: w.wr_id):
    print("ok: " + wc_line(wc, f"then MTU bytes: wr {wc.wr_id}"))

# 5. An AH of another PD.
pd2 = PD(ctx)
ah2 = make_ah(pd2, gid, gidx)
send(a, ah2, b, 0, 8, 14)
print("ok: " + wc_line(poll(cq, "foreign AH")[0], "send through an AH of another PD"))
print(f"ok: sender state after it {a.query(e.IBV_QP_STATE)[0].qp_state}")

# 6. SRQ: limit event, last WQE reached, flush.
scq = CQ(ctx, 64)
srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1)))
print(f"ok: SRQ created, max_wr >= 16 {srq.query().max_wr >= 16}, max_sge {srq.query().max_sge}")
s = ud_qp(pd, scq, QKEY, 16, srq=srq)
d = ud_qp(pd, scq, QKEY, 16)
for i in range(10):
    recv(srq, 20000 + i * 256, 256, 100 + i)
srq.modify(SrqAttr(srq_limit=8), e.IBV_SRQ_LIMIT)
print(f"ok: srq_limit armed: {srq.query().srq_limit}")
for i in range(2):
    send(d, ah, s, 0, 32, 200 + i)
wcs = poll(scq, "two datagrams to the SRQ QP", n=4)
print(f"ok: two datagrams through the SRQ: {sorted((w.wr_id, w.status, w.byte_len) for w in wcs)}")
send(d, ah, s, 0, 32, 202)
poll(scq, "third datagram", n=2)
# (No check that no event came before: pyverbs holds the interpreter lock
# while it waits for one.)
print(f"ok: after the third (7 left, limit 8): event {event_name(next_event(ctx))}, "
      f"srq_limit now {srq.query().srq_limit}")
try:
    srq.modify(SrqAttr(srq_limit=100), e.IBV_SRQ_LIMIT)
    print("ok: srq_limit 100 on a 16-entry SRQ accepted")
except PyverbsRDMAError as err:
    print(f"ok: srq_limit 100 on a 16-entry SRQ refused ({err.error_code})")
# Resize with WQEs posted and not taken: 7 left, 20 more after the resize,
# all 27 taken in posting order.
try:
    srq.modify(SrqAttr(max_wr=2), e.IBV_SRQ_MAX_WR)
    print("ok: SRQ resize below the 7 WQEs posted accepted")
except PyverbsRDMAError as err:
    print(f"ok: SRQ resize below the 7 WQEs posted refused ({err.error_code})")
srq.modify(SrqAttr(max_wr=64), e.IBV_SRQ_MAX_WR)
print(f"ok: SRQ resized: max_wr >= 64 {srq.query().max_wr >= 64}")
for i in range(20):
    recv(srq, 20000 + (10 + i) * 256, 256, 110 + i)
for i in range(27):
    send(d, ah, s, 0, 32, 300 + i)
wcs = poll(scq, "27 datagrams after the SRQ resize", n=54)
rx_ids = [w.wr_id for w in wcs if w.wr_id < 200]
print(f"ok: after the resize 27 datagrams taken in posting order: {rx_ids == list(range(103, 130))}, "
      f"all successful {all(w.status == 0 for w in wcs)}")
to_state(s, e.IBV_QPS_ERR)
print(f"ok: SRQ QP to ERR: event {event_name(next_event(ctx))}")
nothing(scq, "SRQ QP in ERR (the SRQ's WQEs are not the QP's)", timeout=0.5)

# 7. CQ resize.
rcq = CQ(ctx, 8)
r1, r2 = ud_qp(pd, rcq, QKEY, 16), ud_qp(pd, rcq, QKEY, 16)
for i in range(6):
    recv(r2, 30000 + i * 128, 128, 300 + i)
for i in range(3):
    send(r1, ah, r2, 0, 16, 400 + i)
time.sleep(0.5)
try:
    rcq.resize(2)
    print("ok: resize below the completions not polled accepted")
except PyverbsRDMAError as err:
    print(f"ok: resize to 2 with 6 completions pending refused ({err.error_code})")
rcq.resize(64)
print(f"ok: resized to 64: cqe >= 64 {rcq.cqe >= 64}")
for i in range(3, 6):
    send(r1, ah, r2, 0, 16, 400 + i)
wcs = poll(rcq, "completions across the resize", n=12)
print(f"ok: 12 completions after the resize, in order per queue: "
      f"{[w.wr_id for w in wcs if w.wr_id >= 400] == list(range(400, 406))} "
      f"{[w.wr_id for w in wcs if w.wr_id < 400] == list(range(300, 306))}, "
      f"all successful {all(w.status == 0 for w in wcs)}")
# 8. Solicited-only notification: a datagram without the solicited bit
# raises no completion event, one with it does.  (The completion channel's
# fd is found in /proc/self/fd and polled with select, so no call blocks.)
def event_fds():
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "infinibandevent" in os.readlink(f"/proc/self/fd/{fd}"):
                out.add(int(fd))
        except OSError:
            pass
    return out


before = event_fds()
ch = CompChannel(ctx)
chfd = (event_fds() - before).pop()
ncq = CQ(ctx, 16, None, ch, 0)
n1, n2 = ud_qp(pd, ncq, QKEY, 16), ud_qp(pd, ncq, QKEY, 16)
for i in range(2):
    recv(n2, 40000 + i * 256, 256, 500 + i)
ncq.req_notify(solicited_only=True)
send(n1, ah, n2, 0, 16, 510)
poll(ncq, "unsolicited datagram", n=2)
print(f"ok: solicited-only CQ, datagram without the solicited bit: event {bool(select.select([chfd], [], [], 0.5)[0])}")
send(n1, ah, n2, 0, 16, 511, solicited=True)
poll(ncq, "solicited datagram", n=2)
print(f"ok: then one with it: event {bool(select.select([chfd], [], [], 5)[0])}")
ch.get_cq_event(ncq)
ncq.ack_events(1)

# pyverbs does not order an SRQ before its PD at exit: close it here.
s.close()
srq.close()
print("ud_srq_test: done")
