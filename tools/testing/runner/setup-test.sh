#!/usr/bin/env bash
# The setup, kernel and VM scripts never end silently: each is run with one
# installed piece made unavailable in turn, and must either install it or
# end with an "rrxe: error:" line that names it.
#
# Nothing on the machine is touched: the scripts run with HOME, the cache
# and PATH pointed at a scratch directory whose shims (dpkg-query, apt-get,
# id, rustup, cargo, python3, mktemp, qemu) simulate an installed or a
# missing piece and record what was installed.  Prints TAP; writes
# SETUP_PASS/SETUP_FAIL to $RRXE_OUT/setup.counts.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
export RRXE_OUT=${RRXE_OUT:-$top/out/test}
mkdir -p "$RRXE_OUT"
T=$(mktemp -d /tmp/rrxe-setup-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
log="$RRXE_OUT/setup-test.log"
: >"$log"

# ---- shims ---------------------------------------------------------------
# State lives in $SHIM_STATE: missing/<pkg> (a Debian package not
# installed), rust-src, rustfmt, clippy, libclang (pieces installed); $HOME/.cargo/bin/bindgen
# exists once installed.  SHIM_FAIL names what fails: apt-update,
# apt-install, apt-noop (succeeds, installs nothing), rustup-add, cargo,
# pip, pip-noop, mktemp, not-root, apt-download.
mkdir -p "$T/shims"
# Each shim starts with the helper `fails WHAT`: is WHAT in SHIM_FAIL?
shim() {
	{
		echo '#!/bin/bash'
		echo 'fails() { [[ " ${SHIM_FAIL:-} " == *" $1 "* ]]; }'
		cat
	} >"$T/shims/$1"
	chmod +x "$T/shims/$1"
}

shim dpkg-query <<'EOF'
# dpkg-query -W -f='${Status}' PKG
p=${!#}
[ -e "$SHIM_STATE/missing/$p" ] && exit 1
printf 'install ok installed'
EOF
shim apt-get <<'EOF'
echo "apt-get $*" >>"$SHIM_STATE/calls"
case " $* " in
*" update "*) fails apt-update && { echo "E: simulated update failure" >&2; exit 100; }; exit 0 ;;
*" download "*) fails apt-download && { echo "E: simulated download failure" >&2; exit 100; }; exit 0 ;;
*" install "*)
	fails apt-install && { echo "E: simulated install failure" >&2; exit 100; }
	fails apt-noop && exit 0
	for a in "$@"; do rm -f "$SHIM_STATE/missing/$a"; done
	exit 0 ;;
esac
exit 0
EOF
shim id <<'EOF'
if [ "${1:-}" = -u ]; then fails not-root && echo 1000 || echo 0; else /usr/bin/id "$@"; fi
EOF
shim rustup <<'EOF'
echo "rustup $*" >>"$SHIM_STATE/calls"
case "$*" in
"component list --installed")
	echo rustc-x86_64-unknown-linux-gnu
	[ -e "$SHIM_STATE/rust-src" ] && echo rust-src
	for c in rustfmt clippy; do [ -e "$SHIM_STATE/$c" ] && echo "$c-x86_64-unknown-linux-gnu"; done
	exit 0
	;;
"component add rust-src" | "component add rustfmt" | "component add clippy")
	fails rustup-add && { echo "error: simulated" >&2; exit 1; }
	touch "$SHIM_STATE/$3"
	exit 0
	;;
esac
exit 0
EOF
shim cargo <<'EOF'
echo "cargo $*" >>"$SHIM_STATE/calls"
if [ "$*" = "install --locked bindgen-cli" ]; then
	fails cargo && { echo "error: simulated cargo failure" >&2; exit 101; }
	mkdir -p "$HOME/.cargo/bin"
	printf '#!/bin/sh\necho bindgen 0.72.0\n' >"$HOME/.cargo/bin/bindgen"
	chmod +x "$HOME/.cargo/bin/bindgen"
fi
exit 0
EOF
shim python3 <<'EOF'
echo "python3 $*" >>"$SHIM_STATE/calls"
if [ "${1:-}" = -c ] && [[ "$2" == *"import clang"* ]]; then
	[ -e "$SHIM_STATE/libclang" ] || { echo "ModuleNotFoundError: No module named 'clang'" >&2; exit 1; }
	mkdir -p "$SHIM_STATE/clang/native" && touch "$SHIM_STATE/clang/native/libclang.so"
	echo "$SHIM_STATE/clang/native"
	exit 0
fi
if [ "$*" = "-m pip install -q libclang" ]; then
	fails pip && { echo "ERROR: simulated pip failure" >&2; exit 1; }
	fails pip-noop || touch "$SHIM_STATE/libclang"
	exit 0
fi
exec /usr/bin/python3 "$@"
EOF
shim mktemp <<'EOF'
fails mktemp && { echo "mktemp: simulated failure" >&2; exit 1; }
exec /usr/bin/mktemp "$@"
EOF

# ---- running one case ----------------------------------------------------
n=0 pass=0 fail=0
# case NAME MISSING FAIL EXPECT SCRIPT [ARGS...]
#   MISSING: what is not installed at the start (pkg:NAME, rust-src, rustfmt, clippy,
#     bindgen, libclang, rustup, none)
#   FAIL: SHIM_FAIL value ("" for none)
#   EXPECT: "ok" (exit 0 and the piece installed) or an ERE the last
#     "rrxe: error:" line must match (and the exit status non-zero)
run_case() {
	local name=$1 missing=$2 failmode=$3 expect=$4
	shift 4
	local st="$T/case$n" home="$T/home$n"
	rm -rf "$st" "$home"
	mkdir -p "$st/missing" "$home/.cargo/bin" "$T/cache$n"
	touch "$st/rust-src" "$st/rustfmt" "$st/clippy" "$st/libclang"
	printf '#!/bin/sh\necho bindgen 0.72.0\n' >"$home/.cargo/bin/bindgen"
	chmod +x "$home/.cargo/bin/bindgen"
	local path="$T/shims:/usr/bin:/bin"
	case $missing in
	pkg:*) touch "$st/missing/${missing#pkg:}" ;;
	rust-src | rustfmt | clippy) rm -f "$st/$missing" ;;
	bindgen) rm -f "$home/.cargo/bin/bindgen" ;;
	libclang) rm -f "$st/libclang" ;;
	rustup)
		mkdir -p "$T/norustup$n"
		for f in "$T"/shims/*; do [ "$(basename "$f")" = rustup ] || ln -sf "$f" "$T/norustup$n/"; done
		path="$T/norustup$n:/usr/bin:/bin"
		;;
	none) ;;
	esac
	local out rc
	out=$(env -i HOME="$home" PATH="$path" SHIM_STATE="$st" SHIM_FAIL="$failmode" \
		RRXE_CACHE="$T/cache$n" TMPDIR="$T" TERM=dumb bash "$@" 2>&1 </dev/null)
	rc=$?
	n=$((n + 1))
	{
		echo "### case $n: $name (missing: $missing, failing: ${failmode:-nothing}; $*)"
		echo "$out"
		echo "### exit $rc"
	} >>"$log"
	local last why=""
	last=$(echo "$out" | grep '^rrxe: error:' | tail -1)
	if [ "$expect" = ok ]; then
		[ $rc = 0 ] || why="exit $rc: ${last:-no error line}"
		case $missing in
		pkg:*) [ -e "$st/missing/${missing#pkg:}" ] && why="${why:+$why; }package not installed" ;;
		rust-src | rustfmt | clippy) [ -e "$st/$missing" ] || why="${why:+$why; }$missing not installed" ;;
		bindgen) [ -x "$home/.cargo/bin/bindgen" ] || why="${why:+$why; }bindgen not installed" ;;
		libclang) [ -e "$st/libclang" ] || why="${why:+$why; }libclang not installed" ;;
		esac
	else
		if [ $rc = 0 ]; then
			why="exit 0, expected a failure"
		elif [ -z "$last" ]; then
			why="silent exit $rc: no 'rrxe: error:' line"
		elif ! echo "$last" | grep -Eq -- "$expect"; then
			why="error line does not match /$expect/: $last"
		fi
	fi
	if [ -z "$why" ]; then
		pass=$((pass + 1))
		echo "ok $n - $name${last:+ # $last}"
	else
		fail=$((fail + 1))
		echo "not ok $n - $name # $why"
	fi
	return 0
}

S=("$top/scripts/setup.sh")
echo "TAP version 13"
run_case "setup: everything installed" none "" ok "${S[@]}"
run_case "setup: a Debian package missing is installed" pkg:iputils-ping "" ok "${S[@]}"
run_case "setup: apt-get install fails" pkg:iputils-ping apt-install "apt-get install iputils-ping failed" "${S[@]}"
run_case "setup: apt-get update fails" pkg:clang-19 apt-update "apt-get update failed" "${S[@]}"
run_case "setup: apt-get installs nothing" pkg:perftest apt-noop "still not installed.*perftest" "${S[@]}"
run_case "setup: not root" pkg:qemu-system-x86 not-root "need root.*qemu-system-x86" "${S[@]}"
run_case "setup: no rustup" rustup "" "rustup not found" "${S[@]}"
run_case "setup: rust-src missing is installed" rust-src "" ok "${S[@]}"
run_case "setup: rustfmt missing is installed" rustfmt "" ok "${S[@]}"
run_case "setup: clippy missing is installed" clippy "" ok "${S[@]}"
run_case "setup: rustup component add fails" rust-src rustup-add "rustup component add rust-src failed" "${S[@]}"
run_case "setup: bindgen missing is installed" bindgen "" ok "${S[@]}"
run_case "setup: cargo install bindgen-cli fails" bindgen cargo "cargo install --locked bindgen-cli failed" "${S[@]}"
run_case "setup: libclang wheel missing is installed" libclang "" ok "${S[@]}"
run_case "setup: pip install libclang fails" libclang pip "pip install libclang' failed" "${S[@]}"
run_case "setup: libclang still not importable" libclang pip-noop "libclang.so of the PyPI wheel not found" "${S[@]}"
run_case "setup: an unexpected failure names command and step" bindgen mktemp "setup.sh:[0-9]+: .*mktemp.* failed .*during: cargo install" "${S[@]}"
run_case "setup: open-iscsi download fails" none apt-download "apt-get download open-iscsi.*failed" \
	-c "RRXE_ISCSI_ROOT='$T/iscsi' bash '$top/scripts/setup.sh'"
run_case "setup: open-iscsi download gives nothing" none "" "apt-get download open-iscsi.*gave 0 files" \
	-c "RRXE_ISCSI_ROOT='$T/iscsi' bash '$top/scripts/setup.sh'"
run_case "kernel: source download fails" none apt-download "apt-get download linux-source-7.2.*failed" "$top/scripts/kernel.sh"
run_case "kernel source (beside setup): download fails" none apt-download "apt-get download linux-source-7.2.*failed" "$top/scripts/kernel.sh" source
run_case "kernel: unknown flavor" none "" "FLAVOR must be 'release' or 'debug'" -c "FLAVOR=nonsense bash '$top/scripts/kernel.sh'"
run_case "vm-run: no kernel built" none "" "no release kernel at .*make kernel" "$top/scripts/vm-run.sh" true
echo "1..$n"
echo "setup: $pass passed, $fail failed (details in $log)"
echo "SETUP_PASS=$pass SETUP_FAIL=$fail" >"$RRXE_OUT/setup.counts"
[ $fail = 0 ]
