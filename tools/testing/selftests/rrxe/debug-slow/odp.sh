#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On-demand-paging memory regions.
# 1. odp_test.py on rrxe (--strict) and on C rxe, one device each: ODP
#    capabilities, registration, RC SEND/RECV, WRITE(+imm), READ, CAS, FAA,
#    SRQ and UD on ODP memory whose pages are dropped before each access,
#    byte for byte; unmapped and read-only ranges fail with IBTA's
#    statuses; fork's copy-on-write; advise_mr.  The "ok:" lines must be
#    the same on both drivers; the "ext:" lines (unaligned, multi-packet,
#    several SGEs, UD GRH in ODP memory, iova != address) must pass on
#    rrxe and are only reported for C rxe, whose ODP copy is wrong there.
#    Named deviation of C rxe: a SEND whose ODP source cannot be faulted
#    in completes with WR_FLUSH_ERR (rrxe, as IBTA: LOC_PROT_ERR).
# 2. odp_stress.py (rrxe): WRITE+READ traffic for 30 s while a thread
#    drops pages, write-protects the region and forks: every transfer
#    byte-exact or cleanly refused; then regions deregistered under a
#    WRITE and a process exiting with one in flight; no splat on the
#    debug kernel.
# 3. rdma link delete while a process holds an ODP region.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
rrxe_and_c_rxe
py=$RRXE_PROGS/odp_test.py
OUT_RRXE=$(timeout 300 /usr/bin/python3 -u "$py" rrxe0 "$GID_RRXE" --strict 2>&1) ||
	fail "odp_test on rrxe: $OUT_RRXE"
echo "$OUT_RRXE"
note "ODP: $(grep -c '^ok:' <<<"$OUT_RRXE") common checks and $(grep -c '^ext:' <<<"$OUT_RRXE") general ones on rrxe"
if c_rxe_half; then
	OUT_RXE=$(ip netns exec nsrxe timeout 300 /usr/bin/python3 -u "$py" rxe0 "$GID_RXE" 2>&1) ||
		fail "odp_test on C rxe: $OUT_RXE"
	echo "$OUT_RXE"
	same_lines odp_test "$OUT_RRXE" "$OUT_RXE" '^ext:\|^dev:\|SEND from an unmapped'
	note "ODP common checks identical on C rxe; its general cases: $(grep -c 'FAILS here' <<<"$OUT_RXE") of $(grep -c '^ext:' <<<"$OUT_RXE") fail there"
fi
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
rdma link delete rxe0
timeout 120 rdma link delete rrxe0 || fail "rdma link delete with an ODP region held"
kill $holder
wait $holder 2>/dev/null || true
note "rrxe0 deleted while a process held an ODP region"
ip netns del nsrxe
rmmod rdma_rrxe
