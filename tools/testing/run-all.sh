#!/usr/bin/env bash
# `make test`: host tests, then one VM boot with the KUnit suites and every
# VM scenario.  Ends with the single line `N passed, N failed` summing all.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
export RRXE_OUT=${RRXE_OUT:-$top/out/test}
rm -rf "$RRXE_OUT" && mkdir -p "$RRXE_OUT"
t0=$SECONDS

echo "== host tests (cargo test, protocol core)"
bash "$top/tools/testing/host-tests.sh"
echo "== VM: KUnit + scenarios"
bash "$top/tools/testing/vm-tests.sh"

HOST_PASS=0 HOST_FAIL=1 KUNIT_PASS=0 KUNIT_FAIL=1 VM_PASS=0 VM_FAIL=1
# shellcheck disable=SC1091
[ -f "$RRXE_OUT/host.counts" ] && . "$RRXE_OUT/host.counts"
# shellcheck disable=SC1091
[ -f "$RRXE_OUT/counts" ] && . "$RRXE_OUT/counts"
pass=$((HOST_PASS + KUNIT_PASS + VM_PASS))
fail=$((HOST_FAIL + KUNIT_FAIL + VM_FAIL))
echo "== host $HOST_PASS/$((HOST_PASS + HOST_FAIL)), kunit $KUNIT_PASS/$((KUNIT_PASS + KUNIT_FAIL)), vm $VM_PASS/$((VM_PASS + VM_FAIL)) passed; $((SECONDS - t0)) s; logs in $RRXE_OUT"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
