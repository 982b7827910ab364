#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Destroying verbs objects one at a time, rrxe against C rxe in one boot:
# out/progs/teardown_time (progs/teardown_time.c) creates 32 objects of
# each kind (PD, CQ, QP in RESET, QP connected and idle, MR, MW, SRQ, AH)
# and times each destroy.  The drivers take turns A-B-B-A; for each kind,
# rrxe's median destroy time (the mean of its two runs' medians) must be
# at most 1.25 times C rxe's plus 100 us.  The slack is for the tens of
# microseconds a verb call varies by under TCG; a wait per object, such
# as an RCU grace period (about 12 ms here), is far above it.  Consumers
# that tear down many objects (an NVMe/RDMA host's error recovery,
# nvme-recovery.sh) multiply such a wait by their number.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_module rdma_rxe
rrxe_and_c_rxe
ksft_cleanup rrxe_and_c_rxe_down

declare -A sum
# run DEV TAG: adds the run's per-kind destroy medians to sum[TAG:KIND].
run() {
	local out kind rest d
	out=$("$RRXE_TOP/out/progs/teardown_time" -d "$1" -n 32) || fail "teardown_time -d $1 failed: $out"
	while read -r kind rest; do
		note "$2 $kind $rest"
		d=${rest#*destroy_us=}
		d=${d%% *}
		sum[$2:$kind]=$((${sum[$2:$kind]:-0} + d))
	done <<<"$out"
}

run rrxe0 rrxe
run rxe0 rxe
run rxe0 rxe
run rrxe0 rrxe
for kind in pd cq qp qp-rts mr mw srq ah; do
	r=$((${sum[rrxe:$kind]} / 2)) c=$((${sum[rxe:$kind]} / 2))
	note "$kind: destroy rrxe $r us, C rxe $c us"
	# 4 * r <= 5 * c + 400: at most 1.25x plus 100 us.
	((4 * r <= 5 * c + 400)) || fail "$kind: destroy takes $r us on rrxe, more than 1.25x C rxe's $c us + 100 us"
done
