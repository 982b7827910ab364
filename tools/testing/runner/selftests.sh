# SPDX-License-Identifier: GPL-2.0
# The part of a kselftest runner the one-VM and two-VM runners share
# (run-tests.sh, run-pair.sh; sourced inside the VM): which directories a
# run takes, their settings, and one test run with its time limit, its
# kernel-log check and its result line.
#
# Each directory of tools/testing/selftests/rrxe holding tests has a
# kselftest `settings` file.  kselftest's format has one key, `timeout=`
# (seconds); rrxe extends it with keys the upstream runner ignores (it
# only turns each line into a shell variable kselftest_KEY):
#   flavor=release|debug   the kernel flavor `make test` runs the
#                          directory's tests on (`make test-full` runs
#                          them on both)
#   timeout_full=SECONDS   the limit at `make test-full` sizes
#   vms=2                  two-VM tests (run-pair.sh), not run-tests.sh's
#   level=full             make test-full only
# A limit applies on its own flavor; a debug run of a release directory
# (make test-full) triples it, the debug kernel being that much slower.

# shellcheck disable=SC1091
. "$(dirname "${BASH_SOURCE[0]}")/../selftests/rrxe/lib/lib.sh"

# ksft_settings DIR: sets S_TIMEOUT, S_TIMEOUT_FULL, S_FLAVOR, S_VMS,
# S_LEVEL.
ksft_settings() {
	local k v
	S_TIMEOUT=45 S_TIMEOUT_FULL="" S_FLAVOR="" S_VMS=1 S_LEVEL=quick
	[ -r "$1/settings" ] || return 1
	while IFS='=' read -r k v; do
		case $k in
		timeout) S_TIMEOUT=$v ;;
		timeout_full) S_TIMEOUT_FULL=$v ;;
		flavor) S_FLAVOR=$v ;;
		vms) S_VMS=$v ;;
		level) S_LEVEL=$v ;;
		esac
	done < <(grep -v '^#' "$1/settings")
	: "${S_TIMEOUT_FULL:=$S_TIMEOUT}"
}

# ksft_dirs VMS: the test directories this run takes (one per line), for
# one-VM (1) or two-VM (2) tests: at level quick those of the running
# flavor, at level full all of them.
ksft_dirs() {
	local d
	for d in "$RRXE_SELFTESTS"/*/; do
		d=${d%/}
		ksft_settings "$d" || continue
		[ "$S_VMS" = "$1" ] || continue
		if [ "$RRXE_TEST_LEVEL" = quick ] && { [ "$S_FLAVOR" != "$RRXE_FLAVOR" ] || [ "$S_LEVEL" = full ]; }; then continue; fi
		echo "$d"
	done
}

# ksft_tests VMS FILTER: the tests this run takes, one "LIMIT TEST" line
# each (TEST the script's path): those of ksft_dirs VMS whose DIR/TEST.sh
# name contains FILTER (all if empty; several parts: FILTER is a
# comma-separated list, and any part will do), in directory order.
ksft_tests() {
	local dir limit t name part parts=() all
	IFS=, read -r -a all <<<"$2"
	for part in "${all[@]}"; do [ -z "$part" ] || parts+=("$part"); done
	[ ${#parts[@]} -gt 0 ] || parts=("")
	while read -r dir; do
		limit=$(ksft_limit "$dir")
		for t in "$dir"/*.sh; do
			[ -x "$t" ] || continue
			name=$(basename "$dir")/$(basename "$t")
			for part in "${parts[@]}"; do
				[[ $name == *"$part"* ]] && { echo "$limit $t"; break; }
			done
		done
	done < <(ksft_dirs "$1")
}

# ksft_limit DIR: the time limit of DIR's tests in this run.
ksft_limit() {
	local t
	ksft_settings "$1"
	t=$S_TIMEOUT
	[ "$RRXE_TEST_LEVEL" = full ] && t=$S_TIMEOUT_FULL
	[ "$RRXE_FLAVOR" = debug ] && [ "$S_FLAVOR" != debug ] && t=$((t * 3))
	echo "$t"
}

# ksft_report N NAME RESULT SECS WHY OUT: one result (PASS, SKIP or FAIL):
# its KTAP line in OUT/selftests.tap, its row in OUT/results.tsv (name,
# flavor, result, seconds, reason) and a line for people.
ksft_report() {
	local n=$1 name=$2 result=$3 secs=$4 why=$5 out=$6
	case $result in
	PASS) echo "ok $n selftests: rrxe: $name" ;;
	SKIP) echo "ok $n selftests: rrxe: $name # SKIP $why" ;;
	FAIL) echo "not ok $n selftests: rrxe: $name # ${why:0:200}" ;;
	esac >>"$out/selftests.tap"
	printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$RRXE_FLAVOR" "$result" "$secs" "$why" >>"$out/results.tsv"
	printf '  %-4s  %-7s  %-38s %7s s  %s\n' "$result" "$RRXE_FLAVOR" "$name" "$secs" "${why:0:160}"
}

# ksft_run_one N TEST LIMIT OUT: runs TEST (an executable) with LIMIT
# seconds, its output in OUT/<dir>-<name>.log and the kernel log in
# .dmesg; reports it (ksft_report).  Returns 0 unless it failed.
ksft_run_one() {
	local n=$1 t=$2 limit=$3 out=$4 dir name log rc t0 secs result why
	dir=$(basename "$(dirname "$t")")
	name=$dir/$(basename "$t")
	log=$out/$dir-$(basename "$t" .sh)
	t0=$(date +%s.%N)
	(cd "$(dirname "$t")" && KSFT_TEST=$name timeout -k 5 "$limit" "./$(basename "$t")") >"$log.log" 2>&1
	rc=$?
	secs=$(echo "$(date +%s.%N) - $t0" | bc)
	secs=$(printf '%.1f' "$secs")
	dmesg >"$log.dmesg"
	why=""
	case $rc in
	0) result=PASS ;;
	4) result=SKIP why=$(sed -n 's/^# SKIP: //p' "$log.log" | tail -1) ;;
	124 | 137) result=FAIL why="timed out after $limit s" ;;
	*) result=FAIL why="exit $rc: $(grep -m1 '^FAIL: ' "$log.log" || tail -1 "$log.log")" ;;
	esac
	if [ $result != FAIL ] && grep -Eq "$BAD_DMESG" "$log.dmesg"; then
		result=FAIL why="kernel log: $(grep -Em1 "$BAD_DMESG" "$log.dmesg")"
	fi
	ksft_report "$n" "$name" "$result" "$secs" "$why" "$out"
	if [ $result = FAIL ]; then
		sed 's/^/      /' "$log.log" | tail -25
		return 1
	fi
	return 0
}
