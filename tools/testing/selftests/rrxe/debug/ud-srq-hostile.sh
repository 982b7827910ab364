#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Hostile UD and SRQ ring input (ud_srq_hostile.py, rrxe): UD WQEs naming
# AH 0, 0xffffffff and a destroyed AH, an SRQ WQE with 1000 SGEs and a wild
# SRQ producer index, written straight into the mapped rings; each is
# refused cleanly and the kernel stays quiet.  (The UD/SRQ verbs compared
# with C rxe, and the stock UD and SRQ pingpongs: ud-srq.sh.)
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
mkveth veth0 veth1
ip addr add 10.0.0.1/24 dev veth0
rrxe0_up
out=$(timeout 120 /usr/bin/python3 -u "$RRXE_PROGS/ud_srq_hostile.py" rrxe0 "$GID_RRXE" 2>&1) ||
	fail "ud_srq_hostile: $out"
echo "$out"
note "hostile UD/SRQ input: $(grep -c '^ok:' <<<"$out") checks"
rdma link delete rrxe0
rmmod rdma_rrxe
