#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On-demand paging, rrxe against C rxe: odp_test.py on rrxe (--strict)
# and on C rxe, one device each (see odp.sh for what it checks).  The
# "ok:" lines must be the same on both drivers; the "ext:" lines
# (unaligned, multi-packet, several SGEs, UD GRH in ODP memory, iova !=
# address) are only reported for C rxe, whose ODP copy is wrong there.
# Named deviation of C rxe: a SEND whose ODP source cannot be faulted in
# completes with WR_FLUSH_ERR (rrxe, as IBTA: LOC_PROT_ERR).  The iova
# case is not run on C rxe: its responder read outside its ODP page list
# there and oopsed once (odp.rst).  Release
# kernel only: on the debug kernel C rxe's ODP receive path reads freed
# memory (KASAN: use-after-free in rxe_odp_map_range_and_lock), which
# fails any test that runs it there.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
[ "$RRXE_FLAVOR" = release ] || ksft_skip "C rxe's ODP path reads freed memory on this kernel (KASAN), see the header"
rrxe_and_c_rxe
py=$RRXE_PROGS/odp_test.py
OUT_RRXE=$(timeout 300 /usr/bin/python3 -u "$py" rrxe0 "$GID_RRXE" --strict 2>&1) ||
	fail "odp_test on rrxe: $OUT_RRXE"
OUT_RXE=$(ip netns exec nsrxe timeout 300 /usr/bin/python3 -u "$py" rxe0 "$GID_RXE" 2>&1) ||
	fail "odp_test on C rxe: $OUT_RXE"
echo "$OUT_RXE"
same_lines odp_test "$OUT_RRXE" "$OUT_RXE" '^ext:\|^dev:\|SEND from an unmapped'
note "ODP: $(grep -c '^ok:' <<<"$OUT_RRXE") common checks identical on C rxe; its general cases: $(grep -c 'FAILS here' <<<"$OUT_RXE") of $(grep -c '^ext:' <<<"$OUT_RXE") fail there"
rrxe_and_c_rxe_down
rmmod rdma_rrxe
