#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RDMA READ and atomics (pyverbs: read_test.py, atomic_test.py), rrxe and
# C rxe alike, two QPs on one device: data byte-exact, completion opcodes
# and lengths, pipelining under max_rd_atomic, exactly-once fetch-and-add
# from two QPs, and the error cases (rkey, rights, range, alignment, QP
# access, responder resources, local rights) with IBTA's statuses.  Both
# drivers must print the same check lines: any difference fails.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
rrxe_and_c_rxe
for t in read_test atomic_test qp_ex_test; do
	same_on_both $t
	[ -z "$OUT_RXE" ] || note "$t: $(grep -c '^ok:' <<<"$OUT_RRXE") checks, identical on rrxe and C rxe"
done
stats=$(rdma statistic show link rrxe0/1)
note "$stats"
echo "$stats" | grep -Eq "atomics_executed [1-9]" || fail "no atomics counted"
echo "$stats" | grep -Eq "read_responses [1-9]" || fail "no READ responses counted"
rrxe_and_c_rxe_down
rmmod rdma_rrxe
