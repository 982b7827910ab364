#!/bin/bash
# Runs inside the test VM (see tools/testing/vm-tests.sh): loads rdma_rrxe
# once to collect its KUnit results, then runs every scenario in
# vm/scenarios/ (or those matching $1) in a clean state, each with a time
# limit and a kernel-log check; on a kernel with kmemleak, a leak scan ends
# the run.  Writes $RRXE_OUT/kunit.log and $RRXE_OUT/vm.tap; prints TAP to
# the console.
#
# Environment: RRXE_TEST_LEVEL (quick: every feature, short forms; full:
# exhaustive matrices and soaks), RRXE_FLAVOR (release or debug; the debug
# kernel's data path runs about 50x slower, so time limits are scaled and
# data volumes cut, see below), RRXE_MATRIX (smoke, quick, full: the
# pingpong matrices' size; by default the level's).
here=$(cd "$(dirname "$0")" && pwd)
out=${RRXE_OUT:?}
filter=${1:-}
export RRXE_TEST_LEVEL=${RRXE_TEST_LEVEL:-quick} RRXE_FLAVOR=${RRXE_FLAVOR:-release}
slow=1
if [ "$RRXE_FLAVOR" = debug ]; then
	# KASAN, lockdep and kmemleak under TCG: the data path runs about 50x
	# slower, so the pingpong cells move a tenth of the data (the same
	# code paths: every size, MTU and flag combination stays).
	slow=3
	export PP_ITERS_1=${PP_ITERS_1:-100} PP_ITERS_4096=${PP_ITERS_4096:-100}
	export PP_ITERS_65536=${PP_ITERS_65536:-30} PP_ITERS_1048576=${PP_ITERS_1048576:-4}
	export PP_LONG_ITERS=${PP_LONG_ITERS:-2000}
	# make test: the pingpong matrices' smoke subset and fewer lossy
	# messages; make test-full runs the whole matrices here too.
	if [ "$RRXE_TEST_LEVEL" = quick ]; then
		export RRXE_MATRIX=${RRXE_MATRIX:-smoke} LOSS_MESSAGES=${LOSS_MESSAGES:-20}
	fi
fi
# lib.sh: fail, BAD_DMESG and scenario_why (what counts as a broken
# kernel), shared with run-pair.sh.
# shellcheck disable=SC1091
. "$here/lib.sh"
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

tap="$out/vm.tap"
echo "TAP version 13" >"$tap"
n=0
for s in "$here"/scenarios/*.sh; do
	name=$(basename "$s" .sh)
	[ -n "$filter" ] && [[ "$name" != *$filter* ]] && continue
	# "# quick-flavors: debug": make test runs it on those flavors only
	# (make test-full everywhere), to keep CI within its budget.
	only=$(sed -n 's/^# quick-flavors: *//p' "$s" | head -1)
	if [ -n "$only" ] && [ "$RRXE_TEST_LEVEL" = quick ] && [[ " $only " != *" $RRXE_FLAVOR "* ]]; then
		echo "# $name: not in make test on $RRXE_FLAVOR (quick-flavors: $only)"
		continue
	fi
	n=$((n + 1))
	cleanup
	dmesg -C
	t0=$(date +%s.%N)
	# A scenario may ask for more time with a "# timeout: SECONDS" line.
	limit=$(sed -n 's/^# timeout: *\([0-9]*\).*/\1/p' "$s" | head -1)
	timeout -k 5 "$((${limit:-${SCENARIO_TIMEOUT:-300}} * slow))" bash -e -c ". '$here/lib.sh'; . '$s'" >"$out/$name.log" 2>&1
	rc=$?
	secs=$(echo "$(date +%s.%N) - $t0" | bc)
	dmesg >"$out/$name.dmesg"
	why=$(scenario_why "$rc" "$out/$name.dmesg")
	if [ -z "$why" ]; then
		line="ok $n - $name # ${secs%???????}s"
	else
		line="not ok $n - $name # $why"
		sed 's/^/    /' "$out/$name.log" | tail -25
	fi
	echo "$line" | tee -a "$tap"
done
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
		echo "ok $n - kmemleak # $total unreferenced objects, none from ib_core, udp_tunnel, rxe or rrxe" | tee -a "$tap"
	else
		echo -e "$ours" | head -40 | sed 's/^/    /'
		echo "not ok $n - kmemleak # $(echo -e "$ours" | grep -c '^unreferenced object') of $total unreferenced objects from ib_core/udp_tunnel/rxe/rrxe (see kmemleak.log)" | tee -a "$tap"
	fi
fi
echo "1..$n" | tee -a "$tap"
