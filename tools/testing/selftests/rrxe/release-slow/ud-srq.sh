#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# UD, address handles, SRQs and CQ resize.
# 1. ud_srq_test.py on rrxe and on C rxe, one device each, compared line by
#    line: datagrams with immediate data, the GRH, Q_Keys, a datagram too
#    long for its buffer, a send over the MTU, an AH of another PD, the SRQ
#    limit event, QP_LAST_WQE_REACHED, CQ resize.  Named deviations of C
#    rxe: it sends a WR Q_Key with the high bit set as is (IBTA C10-15: the
#    QP's Q_Key is used), and completes a send through an AH of another PD
#    with WR_FLUSH_ERR rather than LOC_QP_OP_ERR.  (Hostile UD and SRQ
#    ring input: ud-srq-hostile.sh, on the debug kernel.)
# 2. Stock ibv_ud_pingpong (1024 and 4096 bytes, -c) and ibv_srq_pingpong
#    (4 and 8 QPs on one SRQ, -c, -e) rrxe to rrxe and across drivers both
#    ways.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ibv_srq_pingpong ibv_ud_pingpong
ksft_require_py pyverbs
ksft_require_module rdma_rxe
. "$RRXE_LIB/pingpong.sh"

rrxe_and_c_rxe
same_on_both ud_srq_test 'high bit\|another PD'
note "UD/SRQ/CQ resize: $(grep -c '^ok:' <<<"$OUT_RRXE") checks identical on rrxe and C rxe but for the named deviations"
rrxe_and_c_rxe_down

pairs=("rrxe rrxe" "rxe rrxe" "rrxe rxe")
# The debug kernel's share: rrxe on both ends.
if debug_quick; then
	pairs=("rrxe rrxe")
fi
failed=0
for pair in "${pairs[@]}"; do
	# shellcheck disable=SC2086
	pp_setup_pair $pair
	ends=(ppa0 ppA ppb0 ppB 10.77.0.1)
	run_pingpong ibv_ud_pingpong "${ends[@]}" -s 1024 -n 200 -c || failed=$((failed + 1))
	run_pingpong ibv_ud_pingpong "${ends[@]}" -s 4096 -n 200 -c -e || failed=$((failed + 1))
	run_pingpong ibv_srq_pingpong "${ends[@]}" -s 4096 -m 1024 -n 200 -q 4 -c || failed=$((failed + 1))
	run_pingpong ibv_srq_pingpong "${ends[@]}" -s 65536 -m 4096 -n 100 -q 8 -c -e || failed=$((failed + 1))
	pp_teardown
done
[ $failed = 0 ] || fail "$failed pingpong cells failed"
note "pingpongs: $PP_PASSED/$PP_CELLS cells passed"
rmmod rdma_rrxe
