#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# samples/rust: rrxe_sample_client, a module built on rrxe's
# kapi layer as an ib_core client.  Loaded with an rrxe device present
# (ib_core tells it of existing devices at registration), then a C rxe
# device added in a namespace (the same driver id: rrxe registers as
# rxe, for librxe) and both deleted; its log must name each
# device as it comes and goes, with the port's state, MTU and GID table
# size as ib_query_port gives them; unloading it unregisters the client.
# Then rrxe_sample_kqp, kernel QPs on kapi's consumer side (below).
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_module rdma_rxe
mkveth vrs0 vrs1
modprobe rdma_rrxe
rdma link add rs0 type rrxe netdev vrs0
wait_for 20 port_active rs0 || fail "rs0 not active"
mtu=$(devinfo rs0 active_mtu | cut -d' ' -f1)
dmesg -C
modprobe rrxe_sample_client || fail "modprobe rrxe_sample_client"
log() { dmesg | grep "rrxe_sample_client:"; }
wait_for 5 bash -c 'dmesg | grep -q "rrxe_sample_client: rs0 added"' || fail "no 'rs0 added' line: $(log)"
log | grep -q "rs0 port 1: ACTIVE, active MTU $mtu, [0-9]* GID slots" ||
	fail "rs0's port line does not match ibv_devinfo (ACTIVE, MTU $mtu): $(log)"
note "$(log | sed 's/^\[[ 0-9.]*\] //' | tr '\n' ';')"
c_rxe_in_ns vrs1 rxs0
wait_for 10 bash -c 'dmesg | grep -q "rrxe_sample_client: rxs0 added"' || fail "no 'rxs0 added' line: $(log)"
# rrxe registers with C rxe's driver id (librxe binds to it).
id=$(log | sed -n 's/.*rs0 added: driver id \([0-9]*\),.*/\1/p' | head -1)
log | grep -q "rxs0 added: driver id $id," || fail "rs0 and rxs0 report different driver ids: $(log)"
log | grep -q "2 device(s) known" || fail "the client did not count two devices: $(log)"
ip netns exec nsrxe rdma link delete rxs0
wait_for 10 bash -c 'dmesg | grep -q "rrxe_sample_client: rxs0 removed; 1 device(s) known"' || fail "no 'rxs0 removed' line: $(log)"
rdma link delete rs0
wait_for 10 bash -c 'dmesg | grep -q "rrxe_sample_client: rs0 removed; 0 device(s) known"' || fail "no 'rs0 removed' line: $(log)"
rmmod rrxe_sample_client || fail "rmmod rrxe_sample_client"
note "after removal: $(log | tail -2 | sed 's/^\[[ 0-9.]*\] //' | tr '\n' ';')"
ip netns del nsrxe
rmmod rdma_rxe rdma_rrxe

# rrxe_sample_kqp: kernel RC QPs through kapi's consumer side, on an rrxe
# device and on a C rxe device (one namespace each; the sample connects
# two QPs of a device over the device's own IPv4 GID).  Every step's line
# must be there, the stale key must be refused, the packets must have
# gone through rrxe's engine (its sent-packet counter), and unloading
# the sample must leave no PD, CQ, QP or MR behind.
. "$RRXE_LIB/pingpong.sh"
mkveth vkq0 vkq1
ip addr add 10.81.0.1/24 dev vkq0
modprobe rdma_rrxe
rdma link add rk0 type rrxe netdev vkq0
c_rxe_in_ns vkq1 rxk0
ip netns exec nsrxe ip addr add 10.81.0.2/24 dev vkq1
for d in rk0:10.81.0.1 rxk0:10.81.0.2; do
	wait_for 20 port_active "${d%%:*}" || fail "${d%%:*} not active"
	pp_gid_index "${d%%:*}" "${d#*:}" >/dev/null || fail "${d%%:*} has no RoCE v2 GID for ${d#*:}"
done
sent0=$(cat /sys/class/infiniband/rk0/ports/1/hw_counters/sent_pkts)
dmesg -C
modprobe rrxe_sample_kqp || fail "modprobe rrxe_sample_kqp"
klog() { dmesg | grep "rrxe_sample_kqp:" | sed 's/^\[[ 0-9.]*\] rrxe_sample_kqp: //'; }
wait_slow 60 bash -c '[ "$(dmesg | grep -cE "rrxe_sample_kqp: (rk0|rxk0): kernel QP test (passed|failed)")" = 2 ]' ||
	fail "the sample did not finish on both devices: $(klog | tr '\n' ';')"
# The sample's lines, read once (a dmesg pipeline per check took 9 s on
# the debug kernel), then matched by bash itself.
K=$(klog)
for d in rk0 rxk0; do
	for step in "QPs [0-9]+ -> [0-9]+ over 10\.81\.0\.[12] \(GID index [0-9]+\)" \
		"REG_MR: rkey 0x[0-9a-f]+, iova 0x[0-9a-f]+, 65536 bytes, remote read and write" \
		"SEND 4096 bytes: received 4096, data equal" \
		"RDMA WRITE 32768 bytes into B's region: data equal" \
		"RDMA READ 16384 bytes back: 16384 bytes, data equal" \
		"256 RDMA WRITEs of 16384 bytes, one at a time: [0-9]+ us" \
		"LOCAL_INV of rkey 0x[0-9a-f]+; a WRITE with it: 'remote access error', B unchanged" \
		"kernel QP test passed"; do
		re="(^|"$'\n'")$d: $step"
		[[ $K =~ $re ]] || fail "$d: no line '$step': $(grep "^$d:" <<<"$K" | tr '\n' ';')"
	done
	note "$(grep "^$d:" <<<"$K" | grep -E 'WRITEs|LOCAL_INV' | tr '\n' ';')"
done
sent=$(($(cat /sys/class/infiniband/rk0/ports/1/hw_counters/sent_pkts) - sent0))
# 256 WRITEs of 16 KiB at path MTU 1024 alone are 4096 packets.
((sent >= 4096)) || fail "rk0 sent $sent packets during the sample (at least 4096 expected)"
note "rk0 sent $sent packets for the sample"
rmmod rrxe_sample_kqp || fail "rmmod rrxe_sample_kqp"
left=$(rdma resource show pd; rdma resource show cq; rdma resource show qp; rdma resource show mr)
echo "$left" | grep -q rrxe_sample_kqp && fail "the sample's resources outlived it: $left"
ip netns exec nsrxe rdma link delete rxk0
rdma link delete rk0
ip netns del nsrxe
wait_for 30 paths_gone /sys/class/infiniband/rk0 /sys/class/infiniband/rxk0 ||
	fail "rk0 or rxk0 stayed after rdma link delete"
rmmod rdma_rxe rdma_rrxe
