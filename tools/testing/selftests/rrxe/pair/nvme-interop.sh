#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over RDMA between C rxe and rrxe on two VMs
# (both ULPs live in the initial namespace, where C rxe and rrxe cannot
# both bind UDP port 4791).  Each pairing, both ways: VM a runs the
# target (nvmet-rdma with a shared receive queue, a memory-backed
# null_blk namespace), VM b the host (nvme-rdma: 2 I/O queues asked, 1
# made, a CPU per VM; fast registration for every I/O); the wire is
# eth0, MTU 1500 (path MTU 1024).  With the target on C rxe, its
# requester READs the host's data from rrxe (every NVMe write), under
# the loss this wire has by itself (VM a drops packets under load): the
# READ replays and duplicate acknowledgements rrxe sends must keep C
# rxe's completer in sequence (an ACK reaching it inside a READ response
# fails the READ; see compat.rst), and the queue must not reconnect.
# 1. fio writes a pattern with queue depth 32 over 2 I/O queues and
#    verifies it (crc32c); then the first 32 MiB hash the same on the
#    host's block device and on the target's null_blk.
# 2. (make test-full only, and only with rrxe as the host.)  The same
#    with 1% netem loss on both VMs' eth0 (4 MiB): data exact, packets
#    were dropped.  C rxe's requester fails a READ now and then under
#    loss (C rxe to C rxe too: the NVMe queue reconnects), so the host
#    may see its queues reconnect: nvme retries the I/O (controller loss
#    timeout 120 s), and the data must still be exact.  With C rxe as
#    the host there is no lossy phase: its I/O QP enters the error state
#    now and then with neither an error completion nor a NAK on the wire
#    (captured on its side; the host then logs a flushed SEND first),
#    with a C rxe target as much as with rrxe (3 and 1 queue recoveries
#    in one 32 MiB write without netem), so under loss the time is C
#    rxe's reconnect storm's (170 s to more than 8 minutes, fio's limit
#    is 10).  rrxe's target under loss is nvme-rdma.sh's (5%, rrxe at
#    both ends); the recoveries are noted here.
# 3. nvme disconnect, then the target's teardown: no controller left on
#    the host, no rdma_cm ID, MR, SRQ or QP beyond the GSI QP left on
#    either device; the driver's module unloads.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd fio nvme
ksft_require_module rdma_rxe sch_netem nvme-rdma nvmet-rdma null_blk
[ -n "${RRXE_PAIR:-}" ] || ksft_skip "a two-VM test: run it with tools/testing/runner/vm-pair-tests.sh"
. "$RRXE_LIB/pair.sh"
. "$RRXE_LIB/nvme.sh"
# Quick: 32 MiB each way (every path: both queues, fast registration,
# the target's READs of the host's data); full: 128 MiB.
SIZE=32M
[ "$RRXE_TEST_LEVEL" != full ] || SIZE=128M
export NVME_LOSS_TMO=120

# res DEV KIND: the count of KIND (qp, cm_id, mr, srq...) on DEV.
res() { rdma resource show | grep -w "$1" | grep -oE "$2 [0-9]+" | awk '{print $2}'; }
dropped() { tc -s qdisc show dev eth0 | grep -oE 'dropped [0-9]+' | head -1 | awk '{print $2}'; }

leftovers() { # dev
	local k v
	for k in cm_id mr srq; do
		v=$(res "$1" "$k")
		[ "${v:-0}" = 0 ] || fail "$1 keeps $v $k after the teardown: $(rdma resource show | tr '\n' ';')"
	done
	v=$(res "$1" qp)
	((${v:-0} <= 1)) || fail "$1 keeps $v QPs after the teardown (the GSI QP only expected)"
}

pairing() { # target-driver host-driver
	local tgt=$1 host=$2 mine dev=pe$ROLE label="target $1, host $2" sum d lossy=false
	SCEN_PART=$1-$2
	[ "$RRXE_TEST_LEVEL" != full ] || [ "$host" != rrxe ] || lossy=true
	if [ "$ROLE" = a ]; then mine=$tgt; else mine=$host; fi
	pair_dev_up "$dev" "$mine"
	if [ "$ROLE" = a ]; then
		nvme_target_up "$MY_IP"
		pair_sync "$SCEN_PART-target-up"
		pair_sync "$SCEN_PART-written" 900
		sum=$(dd if=/dev/nullb0 bs=1M count=32 iflag=direct status=none | md5sum | cut -d' ' -f1)
		[ "$sum" = "$(pair_get "$SCEN_PART-md5")" ] || fail "$label: the host's block device and the target's null_blk differ"
		note "$label: the first 32 MiB agree on both VMs ($sum)"
		if $lossy; then
			tc qdisc add dev eth0 root netem loss 1%
			pair_sync "$SCEN_PART-lossy"
			pair_sync "$SCEN_PART-lossy-done" 900
			d=$(dropped)
			tc qdisc del dev eth0 root
			note "$label, 1% loss: VM a dropped $d packets"
			((d > 0)) || fail "netem dropped nothing on VM a"
		fi
		pair_sync "$SCEN_PART-disconnected" 300
		nvme_target_down
		modprobe -r nvmet-rdma nvmet null_blk
		leftovers "$dev"
	else
		pair_sync "$SCEN_PART-target-up"
		nvme_host_up "$PEER_IP"
		note "$label: host $NVDEV over $dev -> $PEER_IP: $(rdma resource show | tr -s ' ' | tr '\n' ';')"
		local rec0
		rec0=$(dmesg | grep -c 'starting error recovery' || true)
		fio_verify "$SCEN_PART" "$SIZE"
		note "$label: $(($(dmesg | grep -c 'starting error recovery' || true) - rec0)) queue recoveries during the write"
		if [ "$tgt" = rxe ]; then
			# The target's QPs stayed in sequence: no queue recovery.
			n=$(($(dmesg | grep -c 'starting error recovery' || true) - rec0))
			[ "$n" = 0 ] || fail "$label: the host's queues went into error recovery $n times"
		fi
		pair_put "$SCEN_PART-md5" "$(dd if="$NVDEV" bs=1M count=32 iflag=direct status=none | md5sum | cut -d' ' -f1)"
		pair_sync "$SCEN_PART-written" 900
		if $lossy; then
			tc qdisc add dev eth0 root netem loss 1%
			pair_sync "$SCEN_PART-lossy"
			fio_verify "$SCEN_PART-lossy" 4M
			d=$(dropped)
			tc qdisc del dev eth0 root
			note "$label, 1% loss: data exact, VM b dropped $d packets; $(dmesg | grep -c 'Successfully reconnected') reconnects so far"
			((d > 0)) || fail "netem dropped nothing on VM b"
			pair_sync "$SCEN_PART-lossy-done" 900
		fi
		nvme_host_down
		modprobe -r nvme-rdma
		leftovers "$dev"
		pair_sync "$SCEN_PART-disconnected" 300
	fi
	# Both drivers' counters (the nonzero ones), to tell which side lost,
	# resent or refused what when the host's queues reconnected.
	note "$label: $mine on VM $ROLE counted $(rdma statistic show link "$dev/1" | tr -s ' ' '\n' |
		paste - - | awk '$1 != "link" && $2 != 0 { printf "%s %s ", $1, $2 }')"
	pair_dev_down "$dev" "$mine"
	pair_sync "$SCEN_PART-clean"
}

modprobe sch_netem
pairing rrxe rxe
pairing rxe rrxe
