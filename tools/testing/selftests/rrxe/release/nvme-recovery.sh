#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over RDMA error recovery on rrxe against C rxe, in one boot: the
# kernel target and host (lib/nvme.sh) on two devices of one
# driver at the two ends of a veth, then the same on the other driver.
# On each:
# 1. a controller reset (`reset_controller`, which returns once the host
#    has torn down its queues, their QPs and ~288 fast-registration MRs,
#    and connected again);
# 2. error recovery: the target's port loses the subsystem, the target
#    drops the connections, the host tears its queues down ("starting
#    error recovery" -> "Reconnecting", state connecting) and reconnects
#    once the subsystem is back.
# rrxe must take at most 1.25 times C rxe's time for each (a ratio, not an
# absolute time: TCG's speed varies; rrxe once took twice as long, an RCU
# grace period per MR deregistration).
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd nvme
ksft_require_module rdma_rxe nvme-rdma nvmet-rdma null_blk
. "$RRXE_LIB/nvme.sh"
ksft_cleanup nvme_cleanup
export NVME_LOSS_TMO=30
C=/sys/kernel/config/nvmet
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# recovery DRV: sets RESET_MS and RECOVERY_MS for driver DRV.
recovery() {
	local c t0
	nvme_veth_up "$1"
	nvme_target_up 10.79.0.2
	nvme_host_up 10.79.0.2
	c=$(basename "$(ls -d /sys/class/nvme/nvme[0-9]* | head -1)")
	t0=$(now_ms)
	echo 1 >"/sys/class/nvme/$c/reset_controller" || fail "$1: reset_controller failed"
	RESET_MS=$(($(now_ms) - t0))
	wait_for 30 grep -qx live "/sys/class/nvme/$c/state" || fail "$1: not live after the reset"
	t0=$(now_ms)
	rm "$C/ports/1/subsystems/$NQN"
	wait_for 60 grep -qx connecting "/sys/class/nvme/$c/state" ||
		fail "$1: no error recovery after the port lost the subsystem: $(dmesg | tail -3)"
	RECOVERY_MS=$(($(now_ms) - t0))
	ln -s "$C/subsystems/$NQN" "$C/ports/1/subsystems/$NQN"
	wait_for 60 grep -qx live "/sys/class/nvme/$c/state" || fail "$1: no reconnect after error recovery"
	nvme_host_down
	nvme_target_down
	nvme_veth_down
	rmmod "rdma_$1"
	note "$1: controller reset $RESET_MS ms, error recovery to connecting $RECOVERY_MS ms"
}

recovery rrxe
r_reset=$RESET_MS r_rec=$RECOVERY_MS
recovery rxe
# At most 1.25x C rxe's (integer arithmetic: 4 * rrxe <= 5 * rxe).
((4 * r_reset <= 5 * RESET_MS)) ||
	fail "controller reset: rrxe $r_reset ms, more than 1.25x C rxe's $RESET_MS ms"
((4 * r_rec <= 5 * RECOVERY_MS)) ||
	fail "error recovery: rrxe $r_rec ms, more than 1.25x C rxe's $RECOVERY_MS ms"
