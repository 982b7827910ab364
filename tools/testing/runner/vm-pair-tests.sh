#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host side of the two-VM selftests (the directories whose settings say
# vms=2): boots two VMs joined by a wire (scripts/vm-pair.sh), runs
# runner/run-pair.sh in both, and counts a test as passed when it passed
# in both VMs (skipped when skipped in either and failed in neither).
# Usage: vm-pair-tests.sh [filter]; writes counts to $RRXE_OUT/counts
# (PAIR_PASS, PAIR_FAIL, PAIR_SKIP).  FLAVOR picks the kernel.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
. "$top/scripts/lib.sh"
export RRXE_OUT=${RRXE_OUT:-$top/out/test/pair-$FLAVOR}
level=${RRXE_TEST_LEVEL:-quick}
rm -rf "$RRXE_OUT"
mkdir -p "$RRXE_OUT"

# The two-VM tests this run takes (vms=2 in their directory's settings).
tests=$(for d in "$top"/tools/testing/selftests/rrxe/*/; do
	grep -qx 'vms=2' "$d/settings" 2>/dev/null || continue
	[ "$level" = full ] || ! grep -qx 'level=full' "$d/settings" || continue
	for t in "$d"*.sh; do echo "$(basename "$d")/$(basename "$t")"; done
done | grep -F -- "$(tr , '\n' <<<"${1:-}")" || true)
if [ -z "$tests" ]; then
	echo "vm pair ($FLAVOR): no two-VM test in this run (level $level, filter '${1:-}')"
	echo "PAIR_PASS=0 PAIR_FAIL=0 PAIR_SKIP=0" >"$RRXE_OUT/counts"
	exit 0
fi

cmd() { echo "RRXE_FLAVOR=$FLAVOR RRXE_TEST_LEVEL=$level bash tools/testing/runner/run-pair.sh $1 ${2:-}"; }
VM_TIMEOUT=${VM_TIMEOUT:-3600} bash "$top/scripts/vm-pair.sh" "$(cmd a "${1:-}")" "$(cmd b "${1:-}")"
rc=$?

pass=0 fail=0 skip=0
ra=$RRXE_OUT/a/results.tsv rb=$RRXE_OUT/b/results.tsv
for name in $(cut -f1 "$ra" "$rb" 2>/dev/null | sort -u); do
	a=$(awk -F'\t' -v n="$name" '$1 == n { print $3 }' "$ra")
	b=$(awk -F'\t' -v n="$name" '$1 == n { print $3 }' "$rb")
	if [ "$a" = PASS ] && [ "$b" = PASS ]; then
		pass=$((pass + 1))
	elif [ "$a" != FAIL ] && [ "$b" != FAIL ] && { [ "$a" = SKIP ] || [ "$b" = SKIP ]; }; then
		skip=$((skip + 1))
	else
		echo "pair: $name did not pass in both VMs (a: ${a:-no result}, b: ${b:-no result}; logs in $RRXE_OUT/a and $RRXE_OUT/b)" >&2
		fail=$((fail + 1))
	fi
done
if [ $rc != 0 ] && [ $fail = 0 ]; then
	echo "pair: the VMs did not complete (exit $rc)" >&2
	fail=1
fi
echo "vm pair ($FLAVOR): $pass passed, $fail failed, $skip skipped"
echo "PAIR_PASS=$pass PAIR_FAIL=$fail PAIR_SKIP=$skip" >"$RRXE_OUT/counts"
[ $fail = 0 ]
