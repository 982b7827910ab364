#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Asynchronous events (pyverbs: async_test.py, ibv_get_async_event), on
# rrxe and on C rxe: QP_ACCESS_ERR at the responder of a WRITE and a READ
# with a wrong rkey, CQ_ERR on a send CQ overrun, SQ_DRAINED when SQD is
# reached with en_sqd_async_notify (idle, and with a 1 MiB WRITE in flight
# that completes; a WQE posted in SQD waits for RTS).  Both must print the
# same check lines, but for the named deviations of C rxe: it raises
# SQ_DRAINED without en_sqd_async_notify (IBTA says not to), and never
# executes a WQE posted in SQD, even after the QP returns to RTS.
# async_test.py checks rrxe's answers itself, so make test's debug run
# leaves the C rxe half out (c_rxe_half oracle); make test-full runs it.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
rrxe_and_c_rxe oracle
same_on_both async_test '^note:\|en_sqd_async_notify\|posted in SQD'
[ -z "$OUT_RXE" ] ||
	note "async events: identical on rrxe and C rxe but for: $(grep deviation <<<"$OUT_RXE" | tr '\n' ' ')"
rrxe_and_c_rxe_down
rmmod rdma_rrxe
