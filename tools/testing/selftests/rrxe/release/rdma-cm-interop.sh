#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The connection manager across drivers: every stock rdma_cm tool of
# rdma-cm.sh (rping with data verification, ucmatose, udaddy, mckey,
# rdma_server/rdma_client, ib_send_bw -R and ib_write_bw -R) between a
# C rxe and an rrxe device, each driver as the server in turn.  rdma-cm.sh
# runs them rrxe to rrxe, with the teardown cases, on the debug kernel.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ib_send_bw ib_write_bw mckey rdma_client rdma_server rping ucmatose udaddy
ksft_require_module rdma_rxe
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/perftest.sh"
. "$RRXE_LIB/rdma_cm.sh"
cm_tools "rxe rrxe" "rrxe rxe"
pp_teardown
