#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Wire compatibility: the pingpong matrix between C rdma_rxe and rrxe, each
# direction (C rxe server / rrxe client, then the reverse).
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ibv_rc_pingpong ibv_uc_pingpong
ksft_require_module rdma_rxe
PP_LONG_ITERS=0 bash "$RRXE_LIB/pingpong-matrix.sh" rxe rrxe "${RRXE_MATRIX:-$RRXE_TEST_LEVEL}"
# (On the debug kernel's quick run one direction: rrxe is requester and
# responder in both.)
debug_quick && exit 0
PP_LONG_ITERS=0 bash "$RRXE_LIB/pingpong-matrix.sh" rrxe rxe "${RRXE_MATRIX:-$RRXE_TEST_LEVEL}"
