#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What make test runs on the host itself: the checks of the tree (the
# flavor map in testing.rst current, the layer rules (layers.py), rustfmt,
# clippy, the documentation; in make test-full also the in-tree build)
# and the host tests (host-tests.sh).  run-all.sh runs it beside the last
# VM boot.  Prints a line per check and the host tests' summaries;
# writes CHECKS_PASS/CHECKS_FAIL (everything here) to
# $RRXE_OUT/host-checks.counts.
#   host-checks.sh [quick|full]
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
here=$top/tools/testing/runner
level=${1:-quick}
export RRXE_OUT=${RRXE_OUT:-$top/out/test}
mkdir -p "$RRXE_OUT"
pass=0 fail=0
# shellcheck disable=SC1091
. "$here/check.sh"

echo "== checks of the tree"
check flavor-map bash "$here/flavor-map.sh" --check "$top/Documentation/rrxe/testing.rst"
check layers python3 "$here/layers.py"
check rustfmt bash "$here/rustfmt-check.sh"
check clippy bash "$here/clippy-check.sh"
check docs bash "$here/docs-check.sh"
# The in-tree build (Kconfig, CONFIG_RDMA_RRXE=m): its own configuration,
# so a rebuild of the Rust crates; full runs on the release kernel only.
if [ "$level" = full ] && [[ " ${RRXE_FLAVORS:-release} " == *" release "* ]]; then
	check "in-tree build" bash "$here/intree-build.sh"
fi

echo "== host tests (cargo test of the protocol core and roce-flood; the scripts' failure reporting; the benchmark's statistics)"
t=$SECONDS
bash "$here/host-tests.sh"
HOST_PASS=0 HOST_FAIL=1
# shellcheck disable=SC1091
[ -f "$RRXE_OUT/host.counts" ] && . "$RRXE_OUT/host.counts"
pass=$((pass + HOST_PASS)) fail=$((fail + HOST_FAIL))
echo "== host tests: $((SECONDS - t)) s"
echo "CHECKS_PASS=$pass CHECKS_FAIL=$fail" >"$RRXE_OUT/host-checks.counts"
