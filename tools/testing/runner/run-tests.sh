#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kselftest runner inside the test VM (host side: vm-tests.sh): loads
# rdma_rrxe once to collect its KUnit results, then runs the tests of
# every directory of tools/testing/selftests/rrxe that this run takes
# (selftests.sh: at level quick those whose settings name the running
# flavor, at level full all), those whose name (DIR/TEST.sh) contains $1
# if given, each in a clean state with its directory's time limit and a
# kernel-log check; on a kernel with kmemleak, a leak scan ends the run.
# Writes $RRXE_OUT/kunit.log, selftests.tap (KTAP) and results.tsv; prints
# a line per test.
#
# Environment: RRXE_TEST_LEVEL (quick: every feature, short forms; full:
# exhaustive matrices and soaks), RRXE_FLAVOR (release or debug, by
# default the running kernel's), RRXE_MATRIX (smoke, quick, full: the
# pingpong matrices' size; by default the level's), RRXE_TRACE (1: each
# test's commands with timestamps in $RRXE_OUT/trace, see trace-time.py).
here=$(cd "$(dirname "$0")" && pwd)
out=${RRXE_OUT:?}
filter=${1:-}
# shellcheck disable=SC1091
. "$here/selftests.sh"
if [ "${RRXE_TRACE:-0}" = 1 ]; then
	export RRXE_XTRACE=$out/trace
	mkdir -p "$RRXE_XTRACE"
fi
kmemleak=/sys/kernel/debug/kmemleak
# Leaks already there at boot are not ours.
[ -w $kmemleak ] && echo clear >$kmemleak

cleanup() {
	for l in $(rdma link show 2>/dev/null | awk '{print $2}' | cut -d/ -f1); do
		rdma link delete "$l" 2>/dev/null
	done
	ip -all netns delete 2>/dev/null
	for l in $(ip -o link show type veth 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
		ip link del "$l" 2>/dev/null
	done
	rmmod rdma_rrxe 2>/dev/null
	rmmod rdma_rxe 2>/dev/null
	true
}

# KUnit: the suites run when the module loads.
dmesg -C
modprobe rdma_rrxe || echo "rrxe: modprobe rdma_rrxe failed" >&2
dmesg >"$out/kunit.log"
rmmod rdma_rrxe 2>/dev/null

tap="$out/selftests.tap"
echo "TAP version 13" >"$tap"
: >"$out/results.tsv"
n=0
while read -r limit t; do
	n=$((n + 1))
	cleanup
	dmesg -C
	ksft_run_one "$n" "$t" "$limit" "$out" || true
done < <(ksft_tests 1 "$filter")
cleanup

# kmemleak (debug kernel): every object still unreferenced after the run
# whose allocation backtrace passes through ib_core (ib_*, rdma_*, uverbs,
# nldev_*), the UDP tunnel, rxe or rrxe.  Modules are unloaded by now, so
# their frames print as bare addresses ("0xffffffffa0038970"), or as a
# module that reused the address: a bare address counts as ours too.
if [ -w $kmemleak ] && [ -z "$filter" ]; then
	n=$((n + 1))
	echo scan >$kmemleak
	echo scan >$kmemleak
	cat $kmemleak >"$out/kmemleak.log"
	ours=$(awk '
		/^unreferenced object/ { if (blk != "" && hit) print blk; blk = $0; hit = 0; next }
		{ blk = blk "\n" $0 }
		/^    / && /(^ *|[ \]])(ib_|rdma_|uverbs|nldev_|rxe_|rrxe|udp_tunnel|udp_sock_create|setup_udp_tunnel)|^ *0xffffffff[0-9a-f]+ *$|\[(rdma_rrxe|rdma_rxe|udp_tunnel|ib_[a-z_]+)\]/ { hit = 1 }
		END { if (blk != "" && hit) print blk }' "$out/kmemleak.log")
	total=$(grep -c '^unreferenced object' "$out/kmemleak.log")
	if [ -z "$ours" ]; then
		ksft_report "$n" kmemleak PASS 0 "$total unreferenced objects, none from ib_core, udp_tunnel, rxe or rrxe" "$out"
	else
		echo -e "$ours" | head -40 | sed 's/^/    /'
		ksft_report "$n" kmemleak FAIL 0 "$(echo -e "$ours" | grep -c '^unreferenced object') of $total unreferenced objects from ib_core/udp_tunnel/rxe/rrxe (see kmemleak.log)" "$out"
	fi
fi
echo "1..$n" >>"$tap"
