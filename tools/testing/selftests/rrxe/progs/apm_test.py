#!/usr/bin/python3
"""Automatic path migration (pyverbs, stock librxe) between two rrxe
devices in two namespaces, each with two IPv4 addresses: the primary path
uses the first pair, the alternate path (IB_QP_ALT_PATH, armed with
path_mig_state REARM) the second.  A WRITE goes over the primary path;
then the primary is cut (a bogus permanent neighbour in NS_A for the
peer's primary address) and the next WRITE completes anyway: the
requester exhausts its retries, migrates, resends on the alternate path,
and the responder, on the first packet from there, migrates too.  Both
QPs raise IB_EVENT_PATH_MIG, query_qp reports MIGRATED with the alternate
path and its timeout as the primary ones, and WRITE and READ keep
working.  Then the first pair is loaded as the new alternate path,
rearmed, the second pair cut, and the QPs migrate back.  An unarmed QP
pair over the cut path fails with RETRY_EXC_ERR, and so does a pair whose
responder has the alternate path loaded but not armed (it counts the
packets as rcv_foreign); arming without an alternate path is refused.

usage: apm_test.py DEV_A GIDX_A ALT_GIDX_A DEV_B GIDX_B ALT_GIDX_B NS_A
       NETDEV_A CUT_ADDR ALT_CUT_ADDR NS_B
       apm_test.py --refused DEV GIDX ALT_GIDX: IB_QP_ALT_PATH must fail
       with EINVAL (a device without IBK_ROCE_ALT_PATH: C rxe)."""
import subprocess
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPAttr
from pyverbs.wr import SGE

from rrxe_ksft.data import ramp
from rrxe_ksft.events import next_event
from rrxe_ksft.verbs import Device, arm_alt_path, connect, connect_pair, expect, make_qp, poll, send_wr

MIGRATED, REARM, ARMED = 0, 1, 2
EVENT_PATH_MIG = 6
ALL = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ)
SIZE = 65536
TIMEOUT, ALT_TIMEOUT = 12, 13


class Side(Device):
    """A Device with a second GID index, for the alternate path, and a
    region."""

    def __init__(self, name, gidx, alt_gidx):
        super().__init__(name, gidx)
        self.name = name
        self.alt_gidx = alt_gidx
        self.alt_gid = self.ctx.query_gid(1, alt_gidx)
        self.mr = MR(self.pd, SIZE, ALL)

    def qp(self):
        cq = CQ(self.ctx, 32)
        return make_qp(self.pd, cq, 8, 8), cq


def arm(qp, me, peer, back=False, state=REARM):
    """Loads the alternate path (the second address pair, or with `back`
    the first one) and arms it (or sets `state`)."""
    dgid, sgidx = (peer.gid, me.gidx) if back else (peer.alt_gid, me.alt_gidx)
    arm_alt_path(qp, dgid, sgidx, ALT_TIMEOUT, state)


def armed_pair(armed):
    """A connected QP pair A -> B (and A's CQ), the alternate path loaded
    and armed on both (`armed` "both"), on the requester only
    ("requester", the responder's loaded but MIGRATED), or on neither."""
    a, ca = A.qp()
    b, cb = B.qp()
    connect_pair(a, b, A, B, ALL, timeout=TIMEOUT, retry_cnt=3, max_rd_atomic=1, max_dest_rd_atomic=1)
    if armed:
        arm(a, A, B)
        arm(b, B, A, state=REARM if armed == "both" else MIGRATED)
    return a, b, ca


def write(a, ca, n, off, what, status=e.IBV_WC_SUCCESS):
    data = ramp(n, 7, off)
    A.mr.write(data, n, off)
    a.post_send(send_wr(off, e.IBV_WR_RDMA_WRITE, [SGE(A.mr.buf + off, n, A.mr.lkey)], B.mr.rkey, B.mr.buf + off))
    expect(poll(ca, what, timeout=30)[0], status, what, e.IBV_WC_RDMA_WRITE, n)
    if status == e.IBV_WC_SUCCESS:
        assert B.mr.read(n, off) == data, f"{what}: data differs"


def query(q):
    attr, _ = q.query(e.IBV_QP_PATH_MIG_STATE | e.IBV_QP_AV | e.IBV_QP_ALT_PATH | e.IBV_QP_TIMEOUT)
    return attr.path_mig_state, attr.ah_attr.dgid, attr.timeout


def rcv_foreign(dev, ns):
    out = subprocess.run(["ip", "netns", "exec", ns, "rdma", "statistic", "show", "link", dev + "/1"],
                         check=True, capture_output=True, text=True).stdout.split()
    return int(out[out.index("rcv_foreign") + 1])


def migrated_to(what, want_gid_of):
    for side, name in ((A, "requester"), (B, "responder")):
        ev = next_event(side.ctx)
        assert ev == EVENT_PATH_MIG, f"{what}: {name}: event {ev}"
    print(f"ok: {what}: IB_EVENT_PATH_MIG on the requester and on the responder")
    for q, name, peer in ((a, "requester", B), (b, "responder", A)):
        mig, dgid, timeout = query(q)
        assert mig == MIGRATED, f"{what}: {name}: path_mig_state {mig}"
        want = want_gid_of(peer)
        assert str(dgid) == str(want), f"{what}: {name}: primary dgid {dgid}, want {want}"
        assert timeout == ALT_TIMEOUT, f"{what}: {name}: timeout {timeout}, want {ALT_TIMEOUT}"
    print(f"ok: {what}: both QPs report MIGRATED, the alternate path (and its timeout) now primary")


def blackhole(op, addr):
    """Cuts (op "add") or restores ("del") the path from NS_A to `addr`: a
    permanent neighbour entry with a MAC nobody has, so the peer's stack
    drops the frames as PACKET_OTHERHOST.  (A blackhole route would not
    do: a lookup bound to the netdev, as rrxe's is, treats a failed route
    as on-link.)"""
    if op == "add":
        cmd = ["neigh", "replace", addr, "lladdr", "02:00:5e:00:de:ad", "nud", "permanent"]
    else:
        cmd = ["neigh", "del", addr]
    subprocess.run(["ip", "-n", ns_a] + cmd + ["dev", dev_a], check=op == "add",
                   stderr=subprocess.DEVNULL)


if sys.argv[1] == "--refused":
    # A device without IBK_ROCE_ALT_PATH (C rxe): ib_core refuses the
    # alternate path before the driver sees it.
    A = Side(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    B = A
    q, _ = A.qp()
    connect(q, 0x100, A.gid, A.gidx, ALL)
    try:
        arm(q, A, A)
        raise AssertionError("IB_QP_ALT_PATH accepted")
    except PyverbsRDMAError as err:
        assert err.error_code == 22, f"ALT_PATH refused with {err.error_code}, want EINVAL"
    print("ok: IB_QP_ALT_PATH refused with EINVAL")
    sys.exit(0)

A = Side(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
B = Side(sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
ns_a, dev_a, cut, alt_cut, ns_b = sys.argv[7:12]

# Arming without an alternate path is refused.
q, _ = A.qp()
connect(q, 0x100, B.gid, A.gidx, ALL)
try:
    a_ = QPAttr()
    a_.qp_state = e.IBV_QPS_RTS
    a_.path_mig_state = REARM
    q.modify(a_, e.IBV_QP_STATE | e.IBV_QP_PATH_MIG_STATE)
    raise AssertionError("REARM without an alternate path accepted")
except PyverbsRDMAError:
    print("ok: REARM without an alternate path refused")

a, b, ca = armed_pair(armed="both")
for q, name in ((a, "requester"), (b, "responder")):
    mig, _, _ = query(q)
    assert mig == ARMED, f"{name}: path_mig_state {mig}"
print("ok: both QPs report ARMED after REARM with an alternate path")
write(a, ca, 8192, 0, "WRITE 8 KiB on the primary path")

blackhole("add", cut)
try:
    write(a, ca, 8192, 8192, "WRITE 8 KiB with the primary path cut")
    migrated_to("primary cut", lambda p: p.alt_gid)
    write(a, ca, 4096, 20000, "WRITE after the migration")
    B.mr.write(ramp(4096, 3), 4096, 32768)
    a.post_send(send_wr(9, e.IBV_WR_RDMA_READ, [SGE(A.mr.buf + 32768, 4096, A.mr.lkey)], B.mr.rkey,
                        B.mr.buf + 32768))
    expect(poll(ca, "read")[0], e.IBV_WC_SUCCESS, "READ after the migration", e.IBV_WC_RDMA_READ, 4096)
    assert A.mr.read(4096, 32768) == B.mr.read(4096, 32768), "READ data differs"
    print("ok: READ data matches")

    # Load the first pair as the new alternate path and rearm (the case
    # ib_core's reference bookkeeping gets wrong, harmless to rrxe), then
    # cut the second pair: the QPs migrate back.
    blackhole("del", cut)
    arm(a, A, B, back=True)
    arm(b, B, A, back=True)
    for q, name in ((a, "requester"), (b, "responder")):
        mig, _, _ = query(q)
        assert mig == ARMED, f"rearmed {name}: path_mig_state {mig}"
    print("ok: both QPs ARMED again, the first address pair as the alternate path")
    blackhole("add", alt_cut)
    write(a, ca, 8192, 24576, "WRITE 8 KiB with the second pair cut")
    migrated_to("second pair cut", lambda p: p.gid)
    write(a, ca, 4096, 40960, "WRITE after migrating back")
    blackhole("del", alt_cut)

    # Not armed: the cut path is fatal.
    blackhole("add", cut)
    c, d, cc = armed_pair(armed=False)
    write(c, cc, 64, 40000, "WRITE on the cut path, not armed", e.IBV_WC_RETRY_EXC_ERR)
    # Armed on the requester only: it migrates, but the responder, whose
    # alternate path is loaded and not armed, drops what comes from there.
    before = rcv_foreign(B.name, ns_b)
    c, d, cc = armed_pair(armed="requester")
    write(c, cc, 64, 40064, "WRITE on the cut path, responder not armed", e.IBV_WC_RETRY_EXC_ERR)
    dropped = rcv_foreign(B.name, ns_b) - before
    assert dropped > 0, "the unarmed responder did not count packets from its alternate path"
    print(f"ok: the unarmed responder dropped {dropped} packets from its alternate path (rcv_foreign)")
finally:
    blackhole("del", cut)
    blackhole("del", alt_cut)
print("apm_test: all checks passed")
