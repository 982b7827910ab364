# SPDX-License-Identifier: GPL-2.0
# Makes the sourcing script an rrxe kselftest.  Every test begins with
#
#   . "$(dirname "$0")/../lib/ksft.sh"
#
# and then runs under `set -e`: the first failing command, or `fail MSG`,
# ends it.  It prints KTAP through the kernel tree's own
# tools/testing/selftests/kselftest/ktap_helpers.sh (a plan of one test,
# named after the script) and exits as kselftest's runner expects:
# 0 passed, 1 failed, 4 (KSFT_SKIP) skipped, with `# SKIP: reason` before
# the result line.  A test also fails when the kernel log gained a splat
# while it ran (lib.sh's BAD_DMESG: KASAN, lockdep, WARNING, ...), so a
# test run alone (`make vm-run CMD=tools/testing/selftests/rrxe/debug/cq.sh`)
# judges the kernel as the runner does.
#
# KSFT_LIB is the directory of ktap_helpers.sh: scripts/vm-run.sh shares
# the built kernel tree's copy into the VM there.
# shellcheck disable=SC1091
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
KSFT_LIB=${KSFT_LIB:-/run/rrxe/kselftest}
if ! . "$KSFT_LIB/ktap_helpers.sh" 2>/dev/null; then
	echo "Bail out! $KSFT_LIB/ktap_helpers.sh missing: run tests through 'make vm-run' (or set KSFT_LIB to the kernel tree's tools/testing/selftests/kselftest)"
	exit 1
fi
KSFT_TEST=${KSFT_TEST:-$(basename "$(dirname "$(readlink -f "$0")")")/$(basename "$0")}
KSFT_SKIP_WHY=
_ksft_klines=$(dmesg 2>/dev/null | wc -l)

# ksft_skip REASON: ends the test as skipped (a missing tool, module or
# kernel feature; never a failure of rrxe).
ksft_skip() {
	KSFT_SKIP_WHY="$*"
	exit "$KSFT_SKIP"
}

# ksft_require_cmd CMD...: skips unless every CMD is installed.
ksft_require_cmd() {
	local c
	for c; do
		command -v "$c" >/dev/null 2>&1 || ksft_skip "$c is not installed"
	done
}

# ksft_require_module MOD...: skips unless every kernel module MOD can be
# loaded (built in or available to modprobe).
ksft_require_module() {
	local m
	for m; do
		_ksft_have_module "$m" || ksft_skip "kernel module $m is not available"
	done
}

# Built in (/sys/module) or in the running kernel's modules.dep; read
# without starting a process.
_ksft_have_module() {
	local m=${1//-/_} rel ko
	[ -d "/sys/module/$m" ] && return 0
	read -r rel </proc/sys/kernel/osrelease
	while IFS=: read -r ko _; do
		ko=${ko##*/}
		ko=${ko%%.ko*}
		[ "${ko//-/_}" = "$m" ] && return 0
	done <"/lib/modules/$rel/modules.dep"
	return 1
}

# ksft_require_py MODULE...: skips unless /usr/bin/python3 can import each
# MODULE (e.g. pyverbs, Debian's python3-pyverbs).  An import that worked
# is remembered in /tmp for the rest of the boot: the check starts an
# interpreter (1 s with pyverbs on the debug kernel) and half the tests
# make it.
ksft_require_py() {
	local m
	for m; do
		[ -e "/tmp/.ksft-python3-$m" ] && continue
		if /usr/bin/python3 -c "import $m" 2>/dev/null; then
			: >"/tmp/.ksft-python3-$m" 2>/dev/null || true
		else
			ksft_skip "python3 module $m is not installed"
		fi
	done
}

# ksft_cleanup CMD: CMD (a string for eval) runs when the test ends, before
# its result is reported, whatever ended it; ksft_cleanup "" drops it.  (A
# test must not set its own EXIT trap: that one reports the result.)
KSFT_CLEANUP=
ksft_cleanup() { KSFT_CLEANUP=$1; }

_ksft_end() {
	local rc=$? splat
	trap - EXIT
	set +e
	[ -z "$KSFT_CLEANUP" ] || eval "$KSFT_CLEANUP"
	if [ -n "$KSFT_SKIP_WHY" ] && [ "$rc" = "$KSFT_SKIP" ]; then
		ktap_print_msg "SKIP: $KSFT_SKIP_WHY"
		ktap_test_skip "$KSFT_TEST"
		exit "$KSFT_SKIP"
	fi
	splat=$(dmesg 2>/dev/null | tail -n +"$((_ksft_klines + 1))" | grep -Em1 "$BAD_DMESG")
	if [ "$rc" = 0 ] && [ -z "$splat" ]; then
		ktap_test_pass "$KSFT_TEST"
		exit "$KSFT_PASS"
	fi
	[ "$rc" = 0 ] || ktap_print_msg "exit status $rc"
	[ -z "$splat" ] || ktap_print_msg "kernel log: $splat"
	ktap_test_fail "$KSFT_TEST"
	exit "$KSFT_FAIL"
}

ktap_print_header
ktap_set_plan 1
trap _ksft_end EXIT
# What every test uses: iproute2 (ip, rdma), ibverbs-utils, veth.
ksft_require_cmd ip rdma ibv_devinfo
ksft_require_module veth
# RRXE_XTRACE=DIR: every command the test runs, with a timestamp, into
# DIR/<dir>-<test>.trace (where a test's seconds go:
# tools/testing/runner/trace-time.py sums them per line).
if [ -n "${RRXE_XTRACE:-}" ]; then
	exec {_ksft_xfd}>"$RRXE_XTRACE/${KSFT_TEST//\//-}.trace"
	BASH_XTRACEFD=$_ksft_xfd
	PS4='+ ${EPOCHREALTIME} ${BASH_SOURCE[0]##*/}:${LINENO} '
	set -x
fi
set -e
