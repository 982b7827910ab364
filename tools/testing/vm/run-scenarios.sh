#!/bin/bash
# Runs inside the test VM (see tools/testing/vm-tests.sh): loads rdma_rrxe
# once to collect its KUnit results, then runs every scenario in
# vm/scenarios/ (or those matching $1) in a clean state, each with a time
# limit and a kernel-log check.  Writes $RRXE_OUT/kunit.log and
# $RRXE_OUT/vm.tap; prints TAP to the console.
here=$(cd "$(dirname "$0")" && pwd)
out=${RRXE_OUT:?}
filter=${1:-}
# Kernel messages that mean a scenario broke the kernel, whatever it printed.
BAD_DMESG='BUG:|WARNING:|Oops|general protection|Call Trace|refcount_t:|UBSAN|KASAN|kmemleak|rust_panic|panicked'

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
	n=$((n + 1))
	cleanup
	dmesg -C
	t0=$(date +%s.%N)
	# A scenario may ask for more time with a "# timeout: SECONDS" line.
	limit=$(sed -n 's/^# timeout: *\([0-9]*\).*/\1/p' "$s" | head -1)
	timeout -k 5 "${limit:-${SCENARIO_TIMEOUT:-300}}" bash -e -c ". '$here/lib.sh'; . '$s'" >"$out/$name.log" 2>&1
	rc=$?
	secs=$(echo "$(date +%s.%N) - $t0" | bc)
	dmesg >"$out/$name.dmesg"
	why=""
	[ $rc = 0 ] || why="exit $rc"
	[ $rc = 124 ] && why="timed out"
	if grep -Eq "$BAD_DMESG" "$out/$name.dmesg"; then
		why="${why:+$why, }kernel log: $(grep -Em1 "$BAD_DMESG" "$out/$name.dmesg")"
	fi
	if [ -z "$why" ]; then
		line="ok $n - $name # ${secs%???????}s"
	else
		line="not ok $n - $name # $why"
		sed 's/^/    /' "$out/$name.log" | tail -25
	fi
	echo "$line" | tee -a "$tap"
done
cleanup
echo "1..$n" | tee -a "$tap"
