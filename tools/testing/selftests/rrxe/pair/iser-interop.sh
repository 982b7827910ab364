#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# iSER between C rxe and rrxe on two VMs (isert's listener, ib_iser's
# connection and iscsid all live in the initial namespace, where C rxe
# and rrxe cannot both bind UDP port 4791).  Each pairing, both ways: VM a
# runs LIO's iSCSI target with the isert transport on a 128 MiB
# file-backed LUN, VM b the ib_iser initiator logged in by open-iscsi
# (lib/iser.sh); the wire is eth0, MTU 1500.  fio writes with verify
# headers through the SCSI disk and verifies, then the first 16 MiB hash
# the same on the initiator's disk and on the target's backing file;
# logout, teardown, and the driver's module unloads on both VMs.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd fio
ksft_require_module rdma_rxe ib_iser ib_isert iscsi_target_mod target_core_file sd_mod
[ -n "${RRXE_PAIR:-}" ] || ksft_skip "a two-VM test: run it with tools/testing/runner/vm-pair-tests.sh"
. "$RRXE_LIB/pair.sh"
. "$RRXE_LIB/nvme.sh"
. "$RRXE_LIB/iser.sh"
ksft_cleanup "iser_cleanup; interop_cleanup"
iser_userspace
SIZE=16M
[ "$RRXE_TEST_LEVEL" != full ] || SIZE=64M

# After a failure: no device or driver module of this test left for the
# next two-VM test.
interop_cleanup() {
	[ ! -e "/sys/class/infiniband/pi$ROLE" ] || rdma link delete "pi$ROLE" 2>/dev/null || true
	rmmod rdma_rrxe rdma_rxe 2>/dev/null || true
	return 0
}

pairing() { # target-driver initiator-driver
	local tgt=$1 ini=$2 mine dev=pi$ROLE label="target $1, initiator $2" sum
	SCEN_PART=$1-$2
	if [ "$ROLE" = a ]; then mine=$tgt; else mine=$ini; fi
	pair_dev_up "$dev" "$mine"
	if [ "$ROLE" = a ]; then
		iser_target_up "$MY_IP"
		pair_sync "$SCEN_PART-target-up"
		pair_sync "$SCEN_PART-written" 900
		sum=$(dd if="$ISER_IMG" bs=1M count=16 status=none | md5sum | cut -d' ' -f1)
		[ "$sum" = "$(pair_get "$SCEN_PART-md5")" ] ||
			fail "$label: the initiator's disk and the target's backing file differ"
		note "$label: the first 16 MiB agree on both VMs ($sum)"
		pair_sync "$SCEN_PART-logged-out" 300
		iser_target_idle
		iser_target_down
		wait_for 30 modprobe -r ib_isert iscsi_target_mod target_core_file target_core_mod ||
			fail "$label: the target's modules do not unload: $(lsmod | grep -E 'isert|iscsi|target')"
	else
		pair_sync "$SCEN_PART-target-up"
		iser_login "$PEER_IP"
		fio_verify "iser-$SCEN_PART" "$SIZE"
		pair_put "$SCEN_PART-md5" "$(dd if="$BLKDEV" bs=1M count=16 iflag=direct status=none | md5sum | cut -d' ' -f1)"
		pair_sync "$SCEN_PART-written" 900
		iser_logout "$PEER_IP"
		wait_for 30 modprobe -r ib_iser || fail "$label: ib_iser does not unload"
		pair_sync "$SCEN_PART-logged-out" 300
	fi
	pair_dev_down "$dev" "$mine"
	pair_sync "$SCEN_PART-clean"
}

pairing rrxe rxe
pairing rxe rrxe
