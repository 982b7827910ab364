#!/usr/bin/env bash
# Host tests: `cargo test` of the no_std protocol core (unit, property,
# known-answer and corpus-regression tests) and of roce-flood (the attack
# tests' packet generator and its per-packet model), the scripts'
# failure reporting (setup-test.sh), the benchmark's statistics
# (tools/testing/bench/test_benchstat.py), the layer check
# (tools/testing/runner/test_layers.py) and the capture checks' ICRC
# (tools/testing/selftests/rrxe/progs/test_icrc_check.py).  Writes HOST_PASS/HOST_FAIL to
# $RRXE_OUT/host.counts.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
export RRXE_OUT=${RRXE_OUT:-$top/out/test}
mkdir -p "$RRXE_OUT"
export PATH="$HOME/.cargo/bin:$PATH"
crate="$top/drivers/infiniband/sw/rrxe/proto"
log="$RRXE_OUT/host.log"
(cd "$crate" && cargo test --offline -j"$(nproc)" 2>&1 || cargo test -j"$(nproc)" 2>&1) | tee "$log" |
	grep -E "^test result:|^error|panicked|FAILED"
rc=${PIPESTATUS[0]}
flood="$top/tools/testing/roce-flood"
(cd "$flood" && cargo test --offline -j"$(nproc)" 2>&1 || cargo test -j"$(nproc)" 2>&1) | tee -a "$log" |
	grep -E "^test result:|^error|panicked|FAILED"
[ "${PIPESTATUS[0]}" = 0 ] || rc=1
pass=$(awk '/^test result:/ {for (i=1;i<=NF;i++) if ($i ~ /^passed;?$/) s+=$(i-1)} END {print s+0}' "$log")
fail=$(awk '/^test result:/ {for (i=1;i<=NF;i++) if ($i ~ /^failed;?$/) s+=$(i-1)} END {print s+0}' "$log")
if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then fail=1; echo "host: cargo test failed to run (see $log)" >&2; fi
if [ "$pass" = 0 ] && [ "$fail" = 0 ]; then fail=1; echo "host: no tests ran" >&2; fi
bash "$top/tools/testing/runner/setup-test.sh" | grep -v '^ok '
SETUP_PASS=0 SETUP_FAIL=1
# shellcheck disable=SC1091
[ -f "$RRXE_OUT/setup.counts" ] && . "$RRXE_OUT/setup.counts"
pass=$((pass + SETUP_PASS)) fail=$((fail + SETUP_FAIL))
# unittest_dir NAME DIR: the Python unittests test_*.py in DIR; unittest -v
# ends a passed test's line with "... ok" and names each failed one in a
# "FAIL: " or "ERROR: " line.
unittest_dir() {
	local name=$1 dir=$2 log="$RRXE_OUT/$1-test.log" rc p f
	python3 -m unittest discover -s "$dir" -p 'test_*.py' -v >"$log" 2>&1
	rc=$?
	p=$(grep -c ' \.\.\. ok$' "$log")
	f=$(grep -cE '^(FAIL|ERROR): ' "$log")
	grep -E '^(FAIL|ERROR): ' "$log"
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
	if [ "$p" = 0 ] && [ "$f" = 0 ]; then f=1; fi
	echo "$name: $p passed, $f failed (details in $log)"
	pass=$((pass + p)) fail=$((fail + f))
}
# The benchmark's statistics (tools/testing/bench/benchstat.py) on
# synthetic runs whose ratio is known; the layer check
# (tools/testing/runner/layers.py) on synthetic trees.
unittest_dir benchstat "$top/tools/testing/bench"
unittest_dir layers "$top/tools/testing/runner"
# The capture checks' independent ICRC (progs/icrc_check.py) on C rxe's
# captured packets.
unittest_dir icrc_check "$top/tools/testing/selftests/rrxe/progs"
echo "host: $pass passed, $fail failed"
echo "HOST_PASS=$pass HOST_FAIL=$fail" >"$RRXE_OUT/host.counts"
[ "$fail" = 0 ]
