#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The pingpong matrix with server and client on one rrxe device (packets
# to its own address are handed to its receive path directly).
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ibv_rc_pingpong ibv_uc_pingpong
PP_LONG_ITERS=0 bash "$RRXE_LIB/pingpong-matrix.sh" loop:rrxe "${RRXE_MATRIX:-$RRXE_TEST_LEVEL}"
