#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RC error paths, rrxe and C rxe alike (pyverbs, two QPs on one device):
# wrong rkey, no remote-write right, out-of-range write, bad lkey, RNR
# retries exhausted and RNR recovery, receive too small, destroy in flight.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
rrxe_and_c_rxe
/usr/bin/python3 "$RRXE_PROGS/rc_errors_test.py" rrxe0 "$GID_RRXE"
if c_rxe_half; then
	ip netns exec nsrxe /usr/bin/python3 "$RRXE_PROGS/rc_errors_test.py" rxe0 "$GID_RXE"
fi
rdma statistic show link rrxe0/1 | grep -q "retransmits\|rcvd_rnr_err" || fail "no counters: $(rdma statistic show link rrxe0/1)"
note "$(rdma statistic show link rrxe0/1)"
rrxe_and_c_rxe_down
rmmod rdma_rrxe
