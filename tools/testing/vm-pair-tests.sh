#!/usr/bin/env bash
# Host side of the two-VM scenarios (tools/testing/vm/pair-scenarios/):
# boots two VMs joined by a wire (scripts/vm-pair.sh), runs
# vm/run-pair.sh in both, and counts a scenario as passed when it passed
# in both VMs.  Usage: vm-pair-tests.sh [scenario-filter]; writes counts
# to $RRXE_OUT/counts (PAIR_PASS, PAIR_FAIL).  FLAVOR picks the kernel.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib.sh"
export RRXE_OUT=${RRXE_OUT:-$top/out/test/pair-$FLAVOR}
level=${RRXE_TEST_LEVEL:-quick}
rm -rf "$RRXE_OUT"
mkdir -p "$RRXE_OUT"

if [ -n "${1:-}" ] && ! ls "$top"/tools/testing/vm/pair-scenarios/*"$1"*.sh >/dev/null 2>&1; then
	echo "vm pair ($FLAVOR): no pair scenario matches '$1'"
	echo "PAIR_PASS=0 PAIR_FAIL=0" >"$RRXE_OUT/counts"
	exit 0
fi

cmd() { echo "RRXE_FLAVOR=$FLAVOR RRXE_TEST_LEVEL=$level bash tools/testing/vm/run-pair.sh $1 ${2:-}"; }
VM_TIMEOUT=${VM_TIMEOUT:-3600} bash "$top/scripts/vm-pair.sh" "$(cmd a "${1:-}")" "$(cmd b "${1:-}")"
rc=$?

pass=0 fail=0
for s in "$top"/tools/testing/vm/pair-scenarios/*.sh; do
	name=$(basename "$s" .sh)
	[ -n "${1:-}" ] && [[ "$name" != *${1}* ]] && continue
	if grep -q "^ok [0-9]* - $name " "$RRXE_OUT/a/vm.tap" 2>/dev/null &&
		grep -q "^ok [0-9]* - $name " "$RRXE_OUT/b/vm.tap" 2>/dev/null; then
		pass=$((pass + 1))
	else
		echo "pair: $name did not pass in both VMs (logs: $RRXE_OUT/a/$name.log, $RRXE_OUT/b/$name.log)" >&2
		fail=$((fail + 1))
	fi
done
if [ $rc != 0 ] && [ $fail = 0 ]; then
	echo "pair: the VMs did not complete (exit $rc)" >&2
	fail=1
fi
echo "vm pair ($FLAVOR): $pass passed, $fail failed"
echo "PAIR_PASS=$pass PAIR_FAIL=$fail" >"$RRXE_OUT/counts"
[ $fail = 0 ]
