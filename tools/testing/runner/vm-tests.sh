#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host side of the one-VM selftests: boots the VM once, runs
# runner/run-tests.sh inside, then turns its results.tsv and the module's
# KUnit KTAP (parsed by the kernel's own tools/testing/kunit/kunit.py)
# into counts.  Usage: vm-tests.sh [filter]; writes counts to
# $RRXE_OUT/counts.  FLAVOR (release, debug) picks the kernel,
# RRXE_TEST_LEVEL (quick, full) which directories run and their sizes.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
. "$top/scripts/lib.sh"
export RRXE_OUT=${RRXE_OUT:-$top/out/test/$FLAVOR}
level=${RRXE_TEST_LEVEL:-quick}
mkdir -p "$RRXE_OUT"
rm -f "$RRXE_OUT"/*.log "$RRXE_OUT"/*.dmesg "$RRXE_OUT"/selftests.tap "$RRXE_OUT"/results.tsv "$RRXE_OUT"/kunit.*

[ "${RRXE_PROGS_BUILT:-0}" = 1 ] || bash "$top/tools/testing/runner/build-progs.sh" || {
	echo "vm: the test programs did not build" >&2
	echo "KUNIT_PASS=0 KUNIT_FAIL=0 VM_PASS=0 VM_FAIL=1 VM_SKIP=0" >"$RRXE_OUT/counts"
	exit 1
}

# The debug kernel's quick run gives rrxe's devices a 64-entry GID table
# (rdma_rrxe.gid_tbl_len on the kernel command line, which modprobe
# applies): ib_core creates three sysfs files per entry, which under KASAN
# and lockdep cost about 2.5 s per device added and removed, minutes of
# the run.  The release run and make test-full keep C rxe's 1024.
if [ "$FLAVOR" = debug ] && [ "$level" = quick ]; then
	export VM_APPEND="${VM_APPEND:-} rdma_rrxe.gid_tbl_len=64"
fi

VM_TIMEOUT=${VM_TIMEOUT:-4800} bash "$top/scripts/vm-run.sh" \
	"RRXE_FLAVOR=$FLAVOR RRXE_TEST_LEVEL=$level RRXE_TRACE=${RRXE_TRACE:-0} bash tools/testing/runner/run-tests.sh ${1:-}"
vmrc=$?

res=$RRXE_OUT/results.tsv
vm_pass=$(awk -F'\t' '$3 == "PASS"' "$res" 2>/dev/null | wc -l)
vm_fail=$(awk -F'\t' '$3 == "FAIL"' "$res" 2>/dev/null | wc -l)
vm_skip=$(awk -F'\t' '$3 == "SKIP"' "$res" 2>/dev/null | wc -l)
if [ $vmrc != 0 ] || ! grep -q '^1\.\.' "$RRXE_OUT/selftests.tap" 2>/dev/null; then
	echo "vm: the VM run did not complete (exit $vmrc)" >&2
	vm_fail=$((vm_fail + 1))
elif [ $((vm_pass + vm_fail + vm_skip)) = 0 ] && [ -z "${1:-}" ]; then
	echo "vm: no selftest ran" >&2
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
echo "vm ($FLAVOR): $vm_pass passed, $vm_fail failed, $vm_skip skipped"
echo "KUNIT_PASS=$k_pass KUNIT_FAIL=$k_fail VM_PASS=$vm_pass VM_FAIL=$vm_fail VM_SKIP=$vm_skip" >"$RRXE_OUT/counts"
[ $((vm_fail + k_fail)) = 0 ]
