#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Queue pairs through the stock librxe provider (pyverbs): rings mapped by
# librxe, the IBTA state machine with its required attributes, bad values
# and illegal transitions refused, query.  The same checks run against C rxe.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
rrxe_and_c_rxe
g0=$GID_RRXE g1=$GID_RXE
/usr/bin/python3 "$RRXE_PROGS/qp_test.py" rrxe0 "$g0" --strict
if c_rxe_half; then
	/usr/bin/python3 "$RRXE_PROGS/qp_test.py" rxe0 "$g1"
fi
rrxe_and_c_rxe_down
rmmod rdma_rrxe
