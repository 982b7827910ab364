#!/usr/bin/env bash
# `make test` (quick) and `make test-full` (full): host tests, then one VM
# boot per kernel flavor (release, then debug: KASAN, lockdep, kmemleak)
# with the KUnit suites and every VM scenario, and the two-VM scenarios
# (release; both flavors in full).  Ends with the single line
# `N passed, N failed` summing all of them.
#   run-all.sh [quick|full] [scenario-filter]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
level=${1:-quick}
case $level in quick | full) ;; *) echo "usage: $0 [quick|full] [filter]" >&2; exit 2 ;; esac
filter=${2:-}
export RRXE_OUT=${RRXE_OUT:-$top/out/test}
export RRXE_TEST_LEVEL=$level
rm -rf "$RRXE_OUT" && mkdir -p "$RRXE_OUT"
t0=$SECONDS

echo "== host tests (cargo test of the protocol core; the scripts' failure reporting)"
bash "$top/tools/testing/host-tests.sh"
HOST_PASS=0 HOST_FAIL=1
# shellcheck disable=SC1091
[ -f "$RRXE_OUT/host.counts" ] && . "$RRXE_OUT/host.counts"
pass=$HOST_PASS fail=$HOST_FAIL
summary="host $HOST_PASS/$((HOST_PASS + HOST_FAIL))"

for flavor in release debug; do
	echo "== VM ($flavor kernel, $level): KUnit + scenarios"
	t1=$SECONDS
	FLAVOR=$flavor RRXE_OUT="$RRXE_OUT/$flavor" bash "$top/tools/testing/vm-tests.sh" $filter
	KUNIT_PASS=0 KUNIT_FAIL=1 VM_PASS=0 VM_FAIL=1
	# shellcheck disable=SC1091
	[ -f "$RRXE_OUT/$flavor/counts" ] && . "$RRXE_OUT/$flavor/counts"
	pass=$((pass + KUNIT_PASS + VM_PASS))
	fail=$((fail + KUNIT_FAIL + VM_FAIL))
	summary+=", $flavor: kunit $KUNIT_PASS/$((KUNIT_PASS + KUNIT_FAIL)) vm $VM_PASS/$((VM_PASS + VM_FAIL)) ($((SECONDS - t1)) s)"
	# Two VMs side by side (C rxe and rrxe each in its own initial
	# namespace): on the release kernel in make test, on both in
	# make test-full.
	if [ "$flavor" = release ] || [ "$level" = full ]; then
		echo "== two VMs ($flavor kernel, $level): pair scenarios"
		t1=$SECONDS
		FLAVOR=$flavor RRXE_OUT="$RRXE_OUT/pair-$flavor" bash "$top/tools/testing/vm-pair-tests.sh" $filter
		PAIR_PASS=0 PAIR_FAIL=1
		# shellcheck disable=SC1091
		[ -f "$RRXE_OUT/pair-$flavor/counts" ] && . "$RRXE_OUT/pair-$flavor/counts"
		pass=$((pass + PAIR_PASS))
		fail=$((fail + PAIR_FAIL))
		summary+=", $flavor pairs: $PAIR_PASS/$((PAIR_PASS + PAIR_FAIL)) ($((SECONDS - t1)) s)"
	fi
done

echo "== $summary passed; $((SECONDS - t0)) s; logs in $RRXE_OUT"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
