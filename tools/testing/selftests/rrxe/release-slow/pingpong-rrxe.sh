#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stock ibv_rc_pingpong / ibv_uc_pingpong between two rrxe devices in two
# network namespaces joined by a veth pair.  RRXE_TEST_LEVEL quick: 6 cells
# (RC and UC, 1 B to 1 MiB, both path MTUs, -c, -e); full: sizes 1 B to
# 1 MiB x path MTU 1024 and 4096, buffer validation (-c), with and without
# completion events (-e), and a long 4 KiB run (-n $PP_LONG_ITERS).
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ibv_rc_pingpong ibv_uc_pingpong
PP_LONG_TIMEOUT=${PP_LONG_TIMEOUT:-900} bash "$RRXE_LIB/pingpong-matrix.sh" rrxe rrxe "${RRXE_MATRIX:-$RRXE_TEST_LEVEL}"
