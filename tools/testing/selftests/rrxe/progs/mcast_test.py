#!/usr/bin/python3
"""Multicast through pyverbs (stock librxe): one UD sender on device S,
three receivers attached to the group (ibv_attach_mcast): two on device
R, one on S itself (reached through the IP stack's multicast loopback).
For an IPv4 group (239.1.2.3, sent from S's IPv4 GID) and an IPv6 group
(ff0e::1:2:3, sent from S's link-local GID): every datagram is received
exactly once by each receiver, with its payload intact; after one
receiver detaches it receives nothing more while the others do; a
datagram to a group with no receiver on a device is dropped there.  The
scenario joins the groups at the IP level in both namespaces first
(IGMP/MLD membership is what rdma_cm adds; ibv_attach_mcast does not).
usage: mcast_test.py DEV_S GIDX4_S GIDX6_S DEV_R"""
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import GID
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.wr import RecvWR, SGE, SendWR

from rrxe_ksft.data import ramp
from rrxe_ksft.verbs import attach_mcast as mcast, make_ah, poll, ud_qp

QKEY = 0x0bad0
MCAST_QPN = 0xffffff
N = 20
LEN = 256
GROUPS = (("IPv4 group 239.1.2.3", "0000:0000:0000:0000:0000:ffff:ef01:0203", 2),
          ("IPv6 group ff0e::1:2:3", "ff0e:0000:0000:0000:0000:0001:0002:0003", 3))


class Dev:
    def __init__(self, name):
        self.ctx = Context(name=name)
        self.pd = PD(self.ctx)
        self.mr = MR(self.pd, 1 << 20, e.IBV_ACCESS_LOCAL_WRITE)


class Receiver:
    def __init__(self, name, d, slot):
        self.name, self.d, self.base = name, d, slot * 65536
        self.cq = CQ(d.ctx, 128)
        self.qp = ud_qp(d.pd, self.cq, QKEY, 64)
        self.posted = 0

    def post(self, n):
        for _ in range(n):
            off = self.base + (self.posted % 64) * 1024
            self.qp.post_recv(RecvWR(wr_id=self.posted, num_sge=1,
                                     sg=[SGE(self.d.mr.buf + off, 40 + LEN, self.d.mr.lkey)]))
            self.posted += 1

    def take(self, n, what):
        """The sequence numbers of `n` datagrams (their first payload byte
        pair), checked whole."""
        seqs = []
        for wc in poll(self.cq, f"{self.name}: {what}", n=n, timeout=20):
            assert wc.status == e.IBV_WC_SUCCESS and wc.byte_len == 40 + LEN, \
                f"{self.name}: {what}: status {wc.status} byte_len {wc.byte_len}"
            off = self.base + (wc.wr_id % 64) * 1024
            data = self.d.mr.read(LEN, off + 40)
            seq = data[0] | data[1] << 8
            assert data == payload(seq), f"{self.name}: {what}: datagram {seq} corrupted"
            seqs.append(seq)
        return seqs

    def none(self, what):
        time.sleep(0.3)
        cnt, _ = self.cq.poll(num_entries=1)
        assert cnt == 0, f"{self.name}: {what}: got a completion"


def payload(seq):
    return bytes([seq & 0xff, seq >> 8]) + ramp(LEN - 2, 1, seq * 7)


S, R = Dev(sys.argv[1]), Dev(sys.argv[4])
gidx = {2: int(sys.argv[2]), 3: int(sys.argv[3])}
scq = CQ(S.ctx, 128)
sender = ud_qp(S.pd, scq, QKEY, 64)
seq = 0


def send_all(ah, n):
    global seq
    first = seq
    for i in range(n):
        S.mr.write(payload(seq), LEN, i * LEN)
        wr = SendWR(wr_id=seq, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(S.mr.buf + i * LEN, LEN, S.mr.lkey)], send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_ud(ah, MCAST_QPN, QKEY)
        sender.post_send(wr)
        seq += 1
    for wc in poll(scq, "multicast sends", n=n):
        assert wc.status == e.IBV_WC_SUCCESS, f"send status {wc.status}"
    return list(range(first, seq))


for what, mgid, ver in GROUPS:
    rx = [Receiver("R1", R, 0), Receiver("R2", R, 1), Receiver("S1", S, 2)]
    gid = GID(mgid)
    for r in rx:
        r.post(2 * N)
        mcast(r.qp, mgid)
    ah = make_ah(S.pd, gid, gidx[ver], hop_limit=8)
    sent = send_all(ah, N)
    for r in rx:
        got = r.take(N, what)
        assert sorted(got) == sent, f"{r.name}: {what}: got {sorted(got)}, want {sent}"
        r.none(f"{what}: a duplicate")
    print(f"ok: {what}: {N} datagrams, each received once by R1, R2 (device R) and S1 (device S)")
    mcast(rx[1].qp, mgid, False)
    sent = send_all(ah, N // 2)
    for r in (rx[0], rx[2]):
        assert sorted(r.take(N // 2, f"{what} after R2 left")) == sent
    rx[1].none(f"{what} after it detached")
    print(f"ok: {what}: after R2 detached, R1 and S1 receive, R2 nothing")
    for r in (rx[0], rx[2]):
        mcast(r.qp, mgid, False)
    send_all(ah, 2)
    for r in rx:
        r.none(f"{what} with every receiver detached")
    print(f"ok: {what}: with every receiver detached, nothing is received")
print("mcast_test: done")
