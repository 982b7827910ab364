#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# FLUSH (flush_test.py; librxe 44 cannot post one, the script writes the
# WQE into the mapped send ring as later librxe versions do and rings the
# doorbell as librxe does), on rrxe and on C rxe and across drivers both
# ways: global FLUSH of a range and of a whole region after a WRITE, eight
# in a row, and the errors (region or QP without the FLUSH right, past the
# region's end, wrong rkey, persistent FLUSH, which neither driver can
# serve on ordinary memory, and a classic ibv_post_send with opcode 14).
# Every run must print the same check lines.
#
# C rxe computes the ICRC of FLUSH over the headers twice (its opcode
# table gives FLUSH no payload offset) and drops FLUSH packets that carry
# IBTA's.  rrxe accepts both on receive; it sends IBTA's unless loaded with
# flush_icrc_rxe=1, which the rrxe -> C rxe run uses.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
rrxe_and_c_rxe
out_r=$(timeout 120 /usr/bin/python3 "$RRXE_PROGS/flush_test.py" rrxe0 "$GID_RRXE" rrxe0 "$GID_RRXE" 2>&1) ||
	fail "flush_test on rrxe: $out_r"
echo "$out_r"
if c_rxe_half; then
	for args in "rxe0 $GID_RXE rxe0 $GID_RXE" "rxe0 $GID_RXE rrxe0 $GID_RRXE" reload \
		"rrxe0 $GID_RRXE rxe0 $GID_RXE" "rrxe0 $GID_RRXE rrxe0 $GID_RRXE"; do
		if [ "$args" = reload ]; then
			rdma link delete rrxe0
			rmmod rdma_rrxe
			rrxe0_up flush_icrc_rxe=1
			note "rdma_rrxe reloaded with flush_icrc_rxe=1"
			continue
		fi
		# shellcheck disable=SC2086
		out=$(timeout 120 /usr/bin/python3 "$RRXE_PROGS/flush_test.py" $args 2>&1) ||
			fail "flush_test $args: $out"
		same_lines "flush_test (rrxe to rrxe, then $args)" "$out_r" "$out"
		note "flush_test $(set -- $args; echo "requester $1, responder $3"): identical"
	done
fi
note "$(rdma statistic show link rrxe0/1 | grep -o 'flushes_executed [0-9]*')"
rrxe_and_c_rxe_down
rmmod rdma_rrxe
