#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On-demand-paging memory regions.
# 1. odp_test.py on rrxe (--strict): ODP capabilities, registration, RC
#    SEND/RECV, WRITE(+imm), READ, CAS, FAA, SRQ and UD on ODP memory whose
#    pages are dropped before each access, byte for byte; unmapped and
#    read-only ranges fail with IBTA's statuses; fork's copy-on-write;
#    advise_mr; and the "ext:" cases (unaligned, multi-packet, several
#    SGEs, UD GRH in ODP memory, iova != address).  The same checks
#    compared with C rxe: odp-c-rxe.sh, on the release kernel (on this
#    one, C rxe's ODP receive path reads freed memory: a KASAN report).
# 2. odp_stress.py (rrxe): WRITE+READ traffic for 30 s while a thread
#    drops pages, write-protects the region and forks: every transfer
#    byte-exact or cleanly refused; then regions deregistered under a
#    WRITE and a process exiting with one in flight; no splat on the
#    debug kernel.
# 3. rdma link delete while a process holds an ODP region.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
mkveth veth0 veth1
ip addr add 10.0.0.1/24 dev veth0
rrxe0_up
OUT_RRXE=$(timeout 300 /usr/bin/python3 -u "$RRXE_PROGS/odp_test.py" rrxe0 "$GID_RRXE" --strict 2>&1) ||
	fail "odp_test on rrxe: $OUT_RRXE"
echo "$OUT_RRXE"
note "ODP: $(grep -c '^ok:' <<<"$OUT_RRXE") common checks and $(grep -c '^ext:' <<<"$OUT_RRXE") general ones on rrxe"
# The stress runs 30 s (15 s in the debug kernel's quick form: hundreds
# of invalidations, protection windows and forks either way).
secs=30
debug_quick && secs=15
out=$(timeout 300 /usr/bin/python3 -u "$RRXE_PROGS/odp_stress.py" rrxe0 "$GID_RRXE" "$secs" 2>&1) ||
	fail "odp_stress: $out"
while read -r l; do note "$l"; done <<<"$out"
# The device deleted while a process holds an ODP region (ib_core
# disassociates the context and deregisters the region for it).
rm -f /tmp/odp-holder
/usr/bin/python3 "$RRXE_PROGS/odp_holder.py" rrxe0 /tmp/odp-holder &
holder=$!
wait_for 30 test -s /tmp/odp-holder || fail "the ODP holder did not start"
timeout 120 rdma link delete rrxe0 || fail "rdma link delete with an ODP region held"
kill $holder
wait $holder 2>/dev/null || true
note "rrxe0 deleted while a process held an ODP region"
rmmod rdma_rrxe
