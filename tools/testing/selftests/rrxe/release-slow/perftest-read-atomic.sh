#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stock perftest's READ and atomic tools: ib_read_bw (64 KiB and 1 MB
# messages), ib_read_lat, ib_atomic_bw and ib_atomic_lat (fetch-and-add
# and compare-and-swap), rrxe to rrxe and across drivers both ways.  Each
# run must finish and report a positive figure.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ib_atomic_bw ib_atomic_lat ib_read_bw ib_read_lat
ksft_require_module rdma_rxe
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/perftest.sh"
cells=(
	"ib_read_bw|-s 65536 -n 200|bw"
	"ib_read_bw|-s 1048576 -n 20|bw"
	"ib_read_lat|-s 64 -n 200|lat"
	"ib_atomic_bw|-A FETCH_AND_ADD -n 500|bw"
	"ib_atomic_bw|-A CMP_AND_SWAP -n 500|bw"
	"ib_atomic_lat|-A FETCH_AND_ADD -n 200|lat"
	"ib_atomic_lat|-A CMP_AND_SWAP -n 200|lat"
)
for pair in "rrxe rrxe" "rxe rrxe" "rrxe rxe"; do
	# shellcheck disable=SC2086
	pp_setup_pair $pair
	for c in "${cells[@]}"; do
		IFS='|' read -r tool args kind <<<"$c"
		# shellcheck disable=SC2086
		out=$(pt_run "$tool" ppa0 ppA ppb0 ppB 10.77.0.1 $args) || fail "$pair: $tool $args: $out"
		if [ "$kind" = bw ]; then v=$(pt_bw_avg "$out") unit="MB/s"; else v=$(pt_lat_typical "$out") unit=us; fi
		pt_positive "$v" || fail "$pair: $tool $args: result '$v': $out"
		note "$pair (server->client): $tool $args: $v $unit"
	done
done
pp_teardown
