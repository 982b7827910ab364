#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SRP over RDMA: LIO's ib_srpt target on a 128 MiB file-backed LUN and the
# ib_srp initiator logging in through RDMA/CM (lib/srp.sh: the target's
# device in the initial namespace, where ib_srpt listens, the initiator's
# in another, two ends of a veth in one VM), for each pairing: rrxe to
# rrxe, rrxe serving C rxe, C rxe serving rrxe.  In each: fio writes with
# verify headers through the SCSI disk and verifies (random 64 KiB, queue
# depth 32, two jobs), then logout.  Then rrxe's initiator device is
# deleted under fio: I/O errors, no hang, the host goes.  make test runs
# the two pairings with C rxe (the deletion in C rxe serving rrxe), make
# test-full all three (the deletion in rrxe to rrxe).  Last, the modules
# unload.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd nsenter fio
ksft_require_module rdma_rxe ib_srp ib_srpt target_core_file sd_mod
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/nvme.sh"
. "$RRXE_LIB/srp.sh"
ksft_cleanup srp_cleanup

SRP_FIO_SIZE=${SRP_FIO_SIZE:-32M}
debug_quick && SRP_FIO_SIZE=4M
# Where rrxe's initiator device is deleted: rrxe to rrxe when it runs
# (make test-full, or no C rxe), else C rxe serving rrxe.
cross_disrupt=disrupt
if [ "$RRXE_TEST_LEVEL" = full ] || ! c_rxe_half; then
	srp_pairing rrxe rrxe "$SRP_FIO_SIZE" disrupt
	cross_disrupt=
fi
if c_rxe_half; then
	srp_pairing rrxe rxe "$SRP_FIO_SIZE"
	srp_pairing rxe rrxe "$SRP_FIO_SIZE" "$cross_disrupt"
fi
wait_for 30 modprobe -r ib_srp ib_srpt target_core_file target_core_mod ||
	fail "the SRP modules do not unload: $(lsmod | grep -E 'srp|target')"
rmmod rdma_rrxe || fail "rdma_rrxe does not unload after SRP"
