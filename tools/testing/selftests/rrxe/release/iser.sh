#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# iSER, rrxe to rrxe: LIO's iSCSI target with the isert transport on a 128
# MiB file-backed LUN, the ib_iser initiator logged in by open-iscsi
# (lib/iser.sh; both ends in the initial namespace, where both ULPs and
# iscsid live, on nvme_veth_up's veth).  fio writes with verify headers
# through the SCSI disk and verifies.  make test-full: then the
# initiator's device is deleted under fio: fio ends within 120 s (the
# session fails its I/O after its 15 s replacement timeout), and with the
# device back the session reconnects and verifies again.  Logout; the
# modules unload.
# Across drivers: pair/iser-interop.sh.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd fio
ksft_require_module ib_iser ib_isert iscsi_target_mod target_core_file sd_mod
. "$RRXE_LIB/nvme.sh"
. "$RRXE_LIB/iser.sh"
ksft_cleanup "iser_cleanup; nvme_cleanup"
iser_userspace

SIZE=${ISER_FIO_SIZE:-32M}
debug_quick && SIZE=4M
nvme_veth_up rrxe
iser_target_up 10.79.0.2
iser_login 10.79.0.2
fio_verify iser-rrxe "$SIZE"
# The disruption waits out the session's replacement timeout: make
# test-full only (srp.sh and nfs-rdma.sh delete devices under I/O in make
# test).
[ "$RRXE_TEST_LEVEL" != full ] || iser_disrupt "iser rrxe" rrxe
iser_logout 10.79.0.2
iser_target_idle
iser_target_down
nvme_veth_down
wait_for 30 modprobe -r ib_iser ib_isert iscsi_target_mod target_core_file target_core_mod ||
	fail "the iSER modules do not unload: $(lsmod | grep -E 'iser|iscsi|target')"
rmmod rdma_rrxe || fail "rdma_rrxe does not unload after iSER"
