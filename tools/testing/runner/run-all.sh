#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make test` (quick) and `make test-full` (full): each flavor's kernel
# and module built (the second in the background, below), the checks of
# the tree itself (the flavor map in testing.rst current, no module using
# one of a higher layer beyond the known list (layers.py), each kernel's
# .config holding the selftests' config), the host tests, then one VM boot per
# kernel flavor (release, then debug: KASAN, lockdep, kmemleak) with the
# KUnit suites and the selftests that run
# there, then the two-VM selftests (release; both flavors in full).  Prints a line per test with its
# flavor, time and the reason for a skip or failure, and ends with the
# single line `N passed, N failed, N skipped` summing all of them.
#   run-all.sh [quick|full] [filter]   (filter: parts of DIR/TEST.sh, comma-separated)
# RRXE_FLAVORS (default "release debug") limits the boots to some flavors,
# e.g. make test-full RRXE_FLAVORS=release (the debug kernel's full sizes
# take hours).
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
here=$top/tools/testing/runner
level=${1:-quick}
case $level in quick | full) ;; *) echo "usage: $0 [quick|full] [filter]" >&2; exit 2 ;; esac
filter=${2:-}
flavors=${RRXE_FLAVORS:-release debug}
for flavor in $flavors; do
	case $flavor in release | debug) ;; *) echo "RRXE_FLAVORS: '$flavor' is not release or debug" >&2; exit 2 ;; esac
done
has_flavor() { [[ " $flavors " == *" $1 "* ]]; }
# Each flavor once, release first (its kernel is the one built before
# anything runs; see below).
norm=
for flavor in release debug; do has_flavor "$flavor" && norm+="$flavor "; done
flavors=${norm% }
[ -n "$flavors" ] || { echo "RRXE_FLAVORS: no flavor given" >&2; exit 2; }
export RRXE_OUT=${RRXE_OUT:-$top/out/test}
export RRXE_TEST_LEVEL=$level
rm -rf "$RRXE_OUT" && mkdir -p "$RRXE_OUT"
t0=$SECONDS
pass=0 fail=0 skip=0
times=()

# check NAME CMD...: one pass or fail of the tree's own checks.
check() {
	local name=$1 out t=$SECONDS
	shift
	if out=$("$@" 2>&1); then
		pass=$((pass + 1))
		printf '  PASS  %-7s  %-38s %7s s  %s\n' host "$name" "$((SECONDS - t))" "$(tail -1 <<<"$out")"
	else
		fail=$((fail + 1))
		printf '  FAIL  %-7s  %-38s %7s s\n' host "$name" "$((SECONDS - t))"
		sed 's/^/      /' <<<"$out"
	fi
}

# The kernels and modules (make module FLAVOR=...; cached, so a warm run
# only rebuilds the module).  The first flavor's is built before anything
# runs.  The others build in the background at idle priority (chrt
# --idle: they run only on a host CPU that nothing else wants) while the
# checks, the host tests and the first flavor's VM run: a TCG guest keeps
# about one of the two host cores busy, so a cold kernel build fills the
# other (its memory traffic still slows the guest: testing.rst, "Time
# budget").  A flavor's VM waits for its build; a failed build fails that
# flavor, with the build's output.
# Per flavor: the background build's process group and start, or that
# the flavor's build failed.
declare -A build_pid build_t0 build_failed
stop_builds() {
	local pid
	for pid in "${build_pid[@]}"; do kill -- "-$pid" 2>/dev/null; done
}
trap stop_builds EXIT
trap 'exit 130' INT TERM

# build_bg FLAVOR: start FLAVOR's build in its own session (so stop_builds
# can end all of it); output in $RRXE_OUT/build-FLAVOR.log.
build_bg() {
	local flavor=$1 idle=(chrt --idle 0)
	command -v chrt >/dev/null || idle=(nice -n 19)
	echo "== $flavor kernel and module: building in the background (${idle[*]}; log: $RRXE_OUT/build-$flavor.log)"
	setsid -w "${idle[@]}" make -s -C "$top" module FLAVOR="$flavor" >"$RRXE_OUT/build-$flavor.log" 2>&1 </dev/null &
	build_pid[$flavor]=$!
	build_t0[$flavor]=$SECONDS
}

# built FLAVOR: FLAVOR's kernel and module are ready (its background build
# waited for); checks that the kernel's .config holds the selftests'
# config.  False, with the reason printed and counted, if the build failed.
built() {
	local flavor=$1 rc=0 t=$SECONDS kconfig
	[ -z "${build_failed[$flavor]:-}" ] || return 1
	if [ -n "${build_pid[$flavor]:-}" ]; then
		wait "${build_pid[$flavor]}" || rc=$?
		unset "build_pid[$flavor]"
		times+=("$flavor build $((SECONDS - build_t0[$flavor])) s (background; waited $((SECONDS - t)) s)")
		if [ "$rc" != 0 ]; then
			fail=$((fail + 1))
			echo "  FAIL  host     build ($flavor): make module FLAVOR=$flavor exited $rc; its output:"
			tail -40 "$RRXE_OUT/build-$flavor.log" | sed 's/^/      /'
			return 1
		fi
		sed 's/^/  /' "$RRXE_OUT/build-$flavor.log"
	fi
	kconfig=$(FLAVOR=$flavor bash -c ". '$top/scripts/lib.sh' && echo \$KDIR")/.config
	check "config ($flavor)" bash "$here/check-config.sh" "$kconfig"
}

first=${flavors%% *}
echo "== $first kernel and module"
if ! make -s -C "$top" module FLAVOR="$first"; then
	fail=$((fail + 1))
	echo "  FAIL  host     build ($first): make module FLAVOR=$first failed (output above)"
	build_failed[$first]=1
fi
for flavor in $flavors; do [ "$flavor" = "$first" ] || build_bg "$flavor"; done

echo "== checks of the tree"
check flavor-map bash "$here/flavor-map.sh" --check "$top/Documentation/rrxe/testing.rst"
check layers python3 "$here/layers.py"
check rustfmt bash "$here/rustfmt-check.sh"
check clippy bash "$here/clippy-check.sh"
check docs bash "$here/docs-check.sh"
# The in-tree build (Kconfig, CONFIG_RDMA_RRXE=m): its own configuration,
# so a rebuild of the Rust crates; full runs only.
if [ "$level" = full ] && has_flavor release; then
	check "in-tree build" bash "$here/intree-build.sh"
fi

echo "== host tests (cargo test of the protocol core and roce-flood; the scripts' failure reporting; the benchmark's statistics)"
t1=$SECONDS
bash "$here/host-tests.sh"
HOST_PASS=0 HOST_FAIL=1
# shellcheck disable=SC1091
[ -f "$RRXE_OUT/host.counts" ] && . "$RRXE_OUT/host.counts"
pass=$((pass + HOST_PASS)) fail=$((fail + HOST_FAIL))
times+=("host $((SECONDS - t1)) s")

# What the VMs run, built once on the host before either boots.
if ! bash "$here/build-progs.sh"; then
	fail=$((fail + 1))
	echo "  FAIL  host     build-progs: the test programs did not build (above)"
fi
export RRXE_PROGS_BUILT=1

# vm_flavor FLAVOR: one flavor's VM boot; counts in
# $RRXE_OUT/FLAVOR/counts, its seconds in $RRXE_OUT/FLAVOR/secs.
vm_flavor() {
	local flavor=$1 t1=$SECONDS
	echo "== VM ($flavor kernel, $level): KUnit + selftests"
	FLAVOR=$flavor RRXE_OUT="$RRXE_OUT/$flavor" bash "$here/vm-tests.sh" $filter
	echo "vm $((SECONDS - t1))" >"$RRXE_OUT/$flavor/secs"
}

# vm_pair FLAVOR: the two-VM tests on FLAVOR's kernel (C rxe and rrxe
# each in its own initial namespace); counts in $RRXE_OUT/pair-FLAVOR.
vm_pair() {
	local flavor=$1 t1=$SECONDS
	echo "== two VMs ($flavor kernel, $level): two-VM selftests"
	FLAVOR=$flavor RRXE_OUT="$RRXE_OUT/pair-$flavor" bash "$here/vm-pair-tests.sh" $filter
	echo "pair $((SECONDS - t1))" >>"$RRXE_OUT/$flavor/secs"
}

# Per flavor, once its kernel is built: its boot, then its two-VM tests
# (release; both kernels in make test-full), so the release pair also runs
# while the debug kernel builds.  (Running two boots side by side was
# tried: no faster on two host cores, and guests stalled long enough for
# tests with RC retry budgets to fail now and then.  A build at idle
# priority takes only the CPU time the guests leave.)
pair_on() { has_flavor "$1" && { [ "$1" = release ] || [ "$level" = full ]; }; }
t1=$SECONDS
for flavor in $flavors; do
	if ! built "$flavor"; then
		echo "== no VM on the $flavor kernel: it did not build (counted once, above)"
		mkdir -p "$RRXE_OUT/$flavor" "$RRXE_OUT/pair-$flavor"
		echo "KUNIT_PASS=0 KUNIT_FAIL=0 VM_PASS=0 VM_FAIL=0 VM_SKIP=0" >"$RRXE_OUT/$flavor/counts"
		echo "PAIR_PASS=0 PAIR_FAIL=0 PAIR_SKIP=0" >"$RRXE_OUT/pair-$flavor/counts"
		echo "vm 0" >"$RRXE_OUT/$flavor/secs"
		continue
	fi
	vm_flavor "$flavor"
	pair_on "$flavor" && vm_pair "$flavor"
done
vm_wall=$((SECONDS - t1))
for flavor in $flavors; do
	KUNIT_PASS=0 KUNIT_FAIL=1 VM_PASS=0 VM_FAIL=1 VM_SKIP=0
	# shellcheck disable=SC1091
	[ -f "$RRXE_OUT/$flavor/counts" ] && . "$RRXE_OUT/$flavor/counts"
	pass=$((pass + KUNIT_PASS + VM_PASS))
	fail=$((fail + KUNIT_FAIL + VM_FAIL))
	skip=$((skip + VM_SKIP))
	if pair_on "$flavor"; then
		PAIR_PASS=0 PAIR_FAIL=1 PAIR_SKIP=0
		# shellcheck disable=SC1091
		[ -f "$RRXE_OUT/pair-$flavor/counts" ] && . "$RRXE_OUT/pair-$flavor/counts"
		pass=$((pass + PAIR_PASS))
		fail=$((fail + PAIR_FAIL))
		skip=$((skip + PAIR_SKIP))
	fi
	while read -r what secs; do
		times+=("$flavor $what $secs s")
	done <"$RRXE_OUT/$flavor/secs"
done
times+=("VMs in all $vm_wall s")

echo "== time: $(IFS=,; echo "${times[*]}" | sed 's/,/, /g'); all $((SECONDS - t0)) s; logs in $RRXE_OUT"
if [ "$skip" != 0 ]; then
	echo "== skipped (not counted as passed):"
	cat "$RRXE_OUT"/*/results.tsv "$RRXE_OUT"/pair-*/*/results.tsv 2>/dev/null |
		awk -F'\t' '$3 == "SKIP" { printf "  %s (%s): %s\n", $1, $2, $5 }' | sort -u
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
