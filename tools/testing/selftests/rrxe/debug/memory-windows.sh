#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Memory windows (pyverbs: mw_test.py), on rrxe and on C rxe: type 2
# windows bound through the send queue (WRITE/READ through the window, a
# zero-based window, another QP refused, LOCAL_INV, SEND with Invalidate
# and its receive completion), type 1 windows (ibv_bind_mw, PD-wide, the
# window's rights, unbind, LOCAL_INV refused), deregistration of a region
# with a bound window refused, and the bind errors (MW_BIND_ERR).  Both
# must print the same check lines, but for the named deviations of C rxe:
# it bounds an access through a window by the region, not the window, and
# completes a failed bind or LOCAL_INV with WR_FLUSH_ERR instead of its
# own status (MW_BIND_ERR, LOC_QP_OP_ERR).  Then across drivers both ways
# (mw_cross.py): a type 2 window on one driver used and invalidated (SEND
# with Invalidate, two packets) by a peer on the other.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
rrxe_and_c_rxe
same_on_both mw_test '^note:\|outside the window\|past its start\|^ok: nothing written\|local op error'
if [ -n "$OUT_RXE" ]; then
	note "memory windows: $(grep -c '^ok:' <<<"$OUT_RRXE") checks, identical on rrxe and C rxe but for: $(grep deviation <<<"$OUT_RXE" | sed 's/ (local op error.*//' | sort -u | tr '\n' ' ')"
	# Across drivers (IETH on the wire): each as the window's owner.
	for dir in "rrxe0 $GID_RRXE rxe0 $GID_RXE" "rxe0 $GID_RXE rrxe0 $GID_RRXE"; do
		# shellcheck disable=SC2086
		out=$(timeout 60 /usr/bin/python3 "$RRXE_PROGS/mw_cross.py" $dir 2>&1) ||
			fail "mw_cross $dir: $out"
		echo "$out"
		note "mw_cross $(set -- $dir; echo "peer $1, owner $3"): $(grep -c "^ok:" <<<"$out") checks"
	done
fi
rrxe_and_c_rxe_down
rmmod rdma_rrxe
