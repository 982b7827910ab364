#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make test` (quick) and `make test-full` (full): setup (with the kernel
# sources fetched beside it), each flavor's kernel and module built (the
# second in the background, below), then one VM
# boot per kernel flavor (release, then debug: KASAN, lockdep, kmemleak)
# with the KUnit suites and the selftests that run there, and the two-VM
# selftests (release; both flavors in full); beside the last boot, the
# checks of the tree and the host tests (host-checks.sh).  Prints a line
# per test with its flavor, time and the reason for a skip or failure,
# and ends with the single line `N passed, N failed, N skipped` summing
# all of them.
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

# shellcheck disable=SC1091
. "$here/check.sh"

# Work that runs beside the VMs, at idle priority (chrt --idle: only on a
# host CPU that nothing else wants), each in its own session so that
# stop_background can end all of it; NAME's output in $RRXE_OUT/NAME.log.
# Per NAME: the process group and its start.
declare -A bg_pid bg_t0
stop_background() {
	local pid
	for pid in "${bg_pid[@]}"; do kill -- "-$pid" 2>/dev/null; done
}
trap stop_background EXIT
trap 'exit 130' INT TERM

# background [--normal] NAME CMD...: starts CMD beside what follows, at
# idle priority unless --normal; the time it ends is written to
# $RRXE_OUT/NAME.end.
background() {
	local idle=(chrt --idle 0)
	command -v chrt >/dev/null || idle=(nice -n 19)
	[ "$1" = --normal ] && { idle=(); shift; }
	local name=$1
	shift
	setsid -w "${idle[@]}" bash -c '"$@"; rc=$?; echo "$EPOCHSECONDS" >"$0"; exit $rc' \
		"$RRXE_OUT/$name.end" "$@" >"$RRXE_OUT/$name.log" 2>&1 </dev/null &
	bg_pid[$name]=$!
	bg_t0[$name]=$EPOCHSECONDS
}

# waited NAME: waits for NAME to end; its exit status.  Notes how long it
# ran and how long the wait was.
waited() {
	local name=$1 rc=0 t=$EPOCHSECONDS end
	wait "${bg_pid[$name]}" || rc=$?
	unset "bg_pid[$name]"
	end=$(cat "$RRXE_OUT/$name.end" 2>/dev/null) || end=$EPOCHSECONDS
	times+=("$name $((end - bg_t0[$name])) s (background; waited $((EPOCHSECONDS - t)) s)")
	return $rc
}

# The kernels and modules (make module FLAVOR=...; cached, so a warm run
# only rebuilds the module).  The first flavor's is built before anything
# runs.  The others build in the background while the first flavor's VM
# runs: a TCG guest keeps about one of the two host cores busy, so a cold
# kernel build fills the other (its memory traffic still slows the guest:
# testing.rst, "Time budget").  A flavor's VM waits for its build; a
# failed build fails that flavor, with the build's output.  Per flavor:
# that its build failed.
declare -A build_failed

# built FLAVOR: FLAVOR's kernel and module are ready (its background build
# waited for); checks that the kernel's .config holds the selftests'
# config.  False, with the reason printed and counted, if the build failed.
built() {
	local flavor=$1 rc=0 kconfig
	[ -z "${build_failed[$flavor]:-}" ] || return 1
	if [ -n "${bg_pid[build-$flavor]:-}" ]; then
		waited "build-$flavor" || rc=$?
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

# The checks of the tree and the host tests (host-checks.sh) run beside
# the last VM boot, the debug one in make test, whose guest leaves about
# 40% of the two host cores idle (most of its tests run one process at a
# time); before this they ran first and added a minute to every run.
# host_checks_start, host_checks_end: start them; wait, print, count.
host_checks_start() {
	echo "== checks of the tree and host tests: running beside the next VM boot (log: $RRXE_OUT/host-checks.log)"
	background host-checks env RRXE_FLAVORS="$flavors" bash "$here/host-checks.sh" "$level"
}
host_checks_end() {
	local CHECKS_PASS=0 CHECKS_FAIL=1
	waited host-checks
	cat "$RRXE_OUT/host-checks.log"
	# shellcheck disable=SC1091
	[ -f "$RRXE_OUT/host-checks.counts" ] && . "$RRXE_OUT/host-checks.counts"
	pass=$((pass + CHECKS_PASS)) fail=$((fail + CHECKS_FAIL))
}

# Setup (scripts/setup.sh), with the kernel source downloaded and
# unpacked for each flavor beside it (kernel.sh source: apt-get, dpkg-deb,
# tar and xz, mostly network and disk while setup's cargo install of
# bindgen keeps the CPUs busy), at normal priority so that its xz is not
# starved by that compile: on a fresh machine this takes the download and
# the unpacking (about 35 s a flavor) off the critical path.  A warm run's
# setup and sources find everything there.  The source job is a head
# start only: if it fails (say xz is not installed until setup installs
# it), its output is shown and each kernel's build does the step again.
setup_and_sources() {
	local rc=0 t=$SECONDS
	echo "== setup, and the kernel sources beside it (log: $RRXE_OUT/sources.log)"
	# shellcheck disable=SC2016
	background --normal sources bash -c 'for f; do FLAVOR=$f bash "$0" source || exit; done' \
		"$top/scripts/kernel.sh" $flavors
	bash "$top/scripts/setup.sh" || rc=$?
	if ! waited sources; then
		echo "  note: the kernel sources' head start failed (each build fetches and unpacks again):"
		tail -20 "$RRXE_OUT/sources.log" | sed 's/^/      /'
	else
		sed 's/^/  /' "$RRXE_OUT/sources.log"
	fi
	times+=("setup $((SECONDS - t)) s")
	if [ $rc != 0 ]; then
		echo "  FAIL  host     setup: scripts/setup.sh exited $rc (its error above); nothing else can run"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
}
setup_and_sources

first=${flavors%% *}
echo "== $first kernel and module"
if ! make -s -C "$top" module FLAVOR="$first"; then
	fail=$((fail + 1))
	echo "  FAIL  host     build ($first): make module FLAVOR=$first failed (output above)"
	build_failed[$first]=1
fi
for flavor in $flavors; do
	[ "$flavor" = "$first" ] && continue
	echo "== $flavor kernel and module: building in the background (log: $RRXE_OUT/build-$flavor.log)"
	background "build-$flavor" make -s -C "$top" module FLAVOR="$flavor"
done

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
last=${flavors##* }
for flavor in $flavors; do
	ok=1
	built "$flavor" || ok=0
	[ "$flavor" = "$last" ] && host_checks_start
	if [ $ok = 0 ]; then
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
host_checks_end
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
