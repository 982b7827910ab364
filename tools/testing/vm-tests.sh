#!/usr/bin/env bash
# Host side of the VM tests: boots the VM once, runs vm/run-scenarios.sh
# inside, then turns its TAP and the module's KUnit KTAP (parsed by the
# kernel's own tools/testing/kunit/kunit.py) into counts.
# Usage: vm-tests.sh [scenario-filter]; writes counts to $RRXE_OUT/counts.
# FLAVOR (release, debug) picks the kernel, RRXE_TEST_LEVEL (quick, full)
# the scenario sizes.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib.sh"
export RRXE_OUT=${RRXE_OUT:-$top/out/test/$FLAVOR}
level=${RRXE_TEST_LEVEL:-quick}
mkdir -p "$RRXE_OUT"
rm -f "$RRXE_OUT"/*.log "$RRXE_OUT"/*.dmesg "$RRXE_OUT"/vm.tap "$RRXE_OUT"/kunit.*

bash "$top/tools/testing/build-progs.sh" || {
	echo "vm: the test programs did not build" >&2
	echo "KUNIT_PASS=0 KUNIT_FAIL=0 VM_PASS=0 VM_FAIL=1" >"$RRXE_OUT/counts"
	exit 1
}

VM_TIMEOUT=${VM_TIMEOUT:-4800} bash "$top/scripts/vm-run.sh" \
	"RRXE_FLAVOR=$FLAVOR RRXE_TEST_LEVEL=$level bash tools/testing/vm/run-scenarios.sh ${1:-}"
vmrc=$?

vm_pass=$(grep -c '^ok ' "$RRXE_OUT/vm.tap" 2>/dev/null || true)
vm_fail=$(grep -c '^not ok ' "$RRXE_OUT/vm.tap" 2>/dev/null || true)
vm_pass=${vm_pass:-0} vm_fail=${vm_fail:-0}
if [ $vmrc != 0 ] || ! grep -q '^1\.\.' "$RRXE_OUT/vm.tap" 2>/dev/null; then
	echo "vm: the VM run did not complete (exit $vmrc)" >&2
	vm_fail=$((vm_fail + 1))
fi

k_pass=0 k_fail=0
if [ -s "$RRXE_OUT/kunit.log" ]; then
	python3 "$KDIR/tools/testing/kunit/kunit.py" parse "$RRXE_OUT/kunit.log" >"$RRXE_OUT/kunit.parsed" 2>&1
	summary=$(grep "Testing complete" "$RRXE_OUT/kunit.parsed" | tail -1)
	echo "kunit: ${summary#*] }"
	read -r k_total k_pass k_skip < <(python3 - "$summary" <<'PY'
import re, sys
s = sys.argv[1]
def n(k):
    m = re.search(k + r": (\d+)", s)
    return int(m.group(1)) if m else 0
m = re.search(r"Ran (\d+) tests", s)
print(int(m.group(1)) if m else 0, n("passed"), n("skipped"))
PY
)
	k_fail=$((k_total - k_pass - k_skip))
	if [ "$k_total" = 0 ]; then
		echo "kunit: no KUnit results found in the module's log" >&2
		k_fail=1
	fi
else
	echo "kunit: no log" >&2
	k_fail=1
fi
echo "vm ($FLAVOR): $vm_pass passed, $vm_fail failed"
echo "KUNIT_PASS=$k_pass KUNIT_FAIL=$k_fail VM_PASS=$vm_pass VM_FAIL=$vm_fail" >"$RRXE_OUT/counts"
[ $((vm_fail + k_fail)) = 0 ]
