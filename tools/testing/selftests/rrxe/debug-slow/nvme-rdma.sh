#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over RDMA on rrxe: the kernel target (nvmet, nvmet-rdma
# with a shared receive queue, a memory-backed null_blk namespace) and the
# kernel host (nvme-rdma, `nvme connect` of Debian's nvme-cli) on two rrxe
# devices, at the two ends of a veth pair.  Both ULPs live in the initial
# network namespace (their rdma_cm IDs are made there), so both ends are
# in it too; the host's packets to the target's address are routed out of
# its veth (a rule for locally generated packets, accept_local on the
# other end) instead of being delivered locally, so they cross the link
# and netem acts on them.  The host uses fast registration (alloc_mr,
# map_mr_sg, REG_MR, LOCAL_INV or the target's SEND with Invalidate) for
# every I/O.
# 1. fio writes a pattern (crc32c verify headers) with queue depth 32
#    over 2 I/O queues, reads it back and verifies it; then dd of the
#    block device and of null_blk agree byte for byte.
# 2. The same with 5% loss on the host's link (netem): I/O completes,
#    data exact; rrxe's retransmission counters moved.
# 3. The target's rrxe device deleted during I/O: the deletion finishes,
#    the host tries to reconnect; nvme disconnect waits for the attempt
#    in progress, which ends when the device is back (its CM REQ no
#    longer unanswered); fio ends with errors; no hang.
# 4. rmmod rdma_rrxe with an NVMe controller connected: ib_core removes
#    the host's queues first (nvme-rdma's device removal), rmmod finishes.
# C rxe on one side needs two VMs (both ULPs use the initial namespace,
# where C rxe and rrxe cannot both bind UDP port 4791): see
# pair/nvme-interop.sh.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd fio nvme
ksft_require_module rdma_rxe sch_netem nvme-rdma nvmet-rdma null_blk
. "$RRXE_LIB/nvme.sh"
# Sizes: the quick form on the debug kernel moves what every path needs
# (two queues, both directions, fast registration and invalidation, SRQ
# receives, retransmission under loss) and no more: 8 MiB per job, then 1
# MiB over the lossy link (some 500 packets each way, a few tens of them
# lost: the retransmission timeouts, about 1 s each, not the data, set
# its time); the other forms 256 MiB and 16 MiB.
SIZE=256M LOSSY=16M AGAIN=8M
debug_quick && SIZE=8M LOSSY=1M AGAIN=4M

klines=$(dmesg | wc -l)
nvme_veth_up rrxe
nvme_target_up 10.79.0.2
nvme_host_up 10.79.0.2
note "host $NVDEV over nvh0 -> target nvt0 (use_srq=1): $(rdma resource show | tr -s ' ' | tr '\n' ';')"
rdma resource show | grep nvt0 | grep -q "srq [1-9]" || fail "the target's queues do not use an SRQ"

# 1. Data through NVMe/RDMA, byte for byte.
fio_verify pattern "$SIZE"
# (No process substitution: the VM has no /dev/fd.)
# What fio's two jobs wrote (SIZE each, one after the other), at most 32 MiB.
mib=$((2 * ${SIZE%M}))
((mib <= 32)) || mib=32
dd if="$NVDEV" of=/tmp/nvme-host.img bs=1M count=$mib iflag=direct status=none
dd if=/dev/nullb0 of=/tmp/nvme-target.img bs=1M count=$mib iflag=direct status=none
cmp /tmp/nvme-host.img /tmp/nvme-target.img || fail "the NVMe device and the target's null_blk differ"
rm -f /tmp/nvme-host.img /tmp/nvme-target.img
tx=$(cat /sys/class/infiniband/nvh0/ports/1/hw_counters/sent_pkts)
note "after the write and verify: nvh0 sent $tx packets"

# 2. 5% loss on the link, both ways.
hw() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }
retr0=$(($(hw nvh0 retransmits) + $(hw nvt0 retransmits)))
modprobe sch_netem
tc qdisc add dev nvh root netem loss 5%
tc qdisc add dev nvt root netem loss 5%
fio_verify lossy "$LOSSY"
tc qdisc del dev nvh root
tc qdisc del dev nvt root
retr=$(($(hw nvh0 retransmits) + $(hw nvt0 retransmits) - retr0))
((retr > 0)) || fail "5% loss, yet no retransmission counted"
note "with 5% loss both ways: data exact, $retr retransmissions, retry_exceeded_err $(hw nvh0 retry_exceeded_err)/$(hw nvt0 retry_exceeded_err)"

# 3. The target's device deleted during I/O.  The host's requests go
# unanswered: its QPs exhaust their retries and nvme-rdma tries to
# reconnect.  `nvme disconnect` must end that, and fio must end with
# errors.  nvme disconnect waits for the reconnect attempt in progress,
# whose CM REQ nobody answers: ib_cm would retry it 16 times at the
# response timeout rdma_cm asks for (about 4.3 s), about 70 s, on C rxe
# as on rrxe.  So while disconnect waits, the target's device comes back:
# the next REQ retry meets it (a REJ, or nvmet's listener back from its
# repair work, which retries every 5 s) and the attempt ends.
timeout 300 fio --name=cut --filename="$NVDEV" --rw=randrw --bs=64k --size=64M --direct=1 \
	--ioengine=libaio --iodepth=32 --time_based --runtime=120 >/tmp/nvme-cut.log 2>&1 &
fpid=$!
# fio's queues busy (the write counter of the block device moving).
nvme_io_moving || fail "fio did not start I/O on $NVDEV: $(cat /tmp/nvme-cut.log)"
t0=$SECONDS
timeout 60 rdma link delete nvt0 || fail "rdma link delete nvt0 during NVMe I/O failed or hung"
tdel=$((SECONDS - t0))
# The host's queues fail (their retries exhausted), nvme-rdma goes into
# error recovery and schedules a reconnect 1 s later; 2 s after that, an
# attempt is in progress (its CM REQ unanswered).
reconnecting() { dmesg | tail -n +"$((klines + 1))" | grep -q 'Reconnecting in'; }
wait_for 60 reconnecting ||
	fail "the host did not try to reconnect within 60 s: $(dmesg | tail -5)"
nap 2
t0=$SECONDS
timeout 120 nvme disconnect -n "$NQN" >/dev/null &
dpid=$!
nap 2
waiting=no
kill -0 "$dpid" 2>/dev/null && waiting=yes
rdma link add nvt0 type rrxe netdev nvt
wait "$dpid" || fail "nvme disconnect after the target's device went failed or hung"
tdisc=$((SECONDS - t0))
wait_for 60 pid_gone "$fpid" || fail "fio still running 60 s after nvme disconnect"
wait "$fpid" 2>/dev/null || true
wait_for 30 paths_gone '/sys/class/nvme/nvme[0-9]*' || fail "the host controller stayed after nvme disconnect"
note "target device deleted during I/O (in $tdel s): nvme disconnect took $tdisc s (still waiting for the reconnect attempt 2 s in: $waiting; the device back then), fio ended after $((SECONDS - t0)) s ($(grep -m1 -oE 'err= *[0-9]+' /tmp/nvme-cut.log || echo 'no err line'))"
nvme_target_down

# 4. rmmod with a controller connected.
wait_for 20 port_active nvt0 || fail "nvt0 not active again"
nvme_target_up 10.79.0.2 2>/dev/null || true
nvme_host_up 10.79.0.2
fio_verify again "$AGAIN"
t0=$SECONDS
timeout 120 rmmod rdma_rrxe || fail "rmmod rdma_rrxe with an NVMe controller connected failed or hung"
wait_for 30 paths_gone '/sys/class/nvme/nvme[0-9]*' || fail "the host controller stayed after rmmod"
note "rmmod with a controller connected: done in $((SECONDS - t0)) s, controller removed"
nvme_target_down
modprobe -r nvme-rdma nvmet-rdma nvmet null_blk 2>/dev/null || true
nvme_veth_down
if dmesg | tail -n +"$((klines + 1))" | grep -E "WARNING|BUG|Oops|refcount|hung_task"; then
	fail "kernel warnings during the NVMe scenario (above)"
fi
