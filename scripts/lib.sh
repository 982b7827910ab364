# Shared settings for rrxe's scripts: kernel version, flavor, cache paths,
# toolchain env, and the error reporting every script uses.  Sourced, not
# run.  Everything here is derived; nothing is downloaded.
#
# Every function here returns 0 unless it says otherwise: callers run under
# `set -e`, where a function whose last command fails ends the script.

RRXE_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KVER_PKG=7.2
KVER_DEB=7.2.12-1~bpo13+1
KVER=7.2.12
RRXE_CACHE=${RRXE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rrxe}

die() { echo "rrxe: error: $*" >&2; exit 1; }
log() { echo "rrxe: $*" >&2; }

# The step a script is in, named in the error line if a command fails.
RRXE_STEP=""
step() { RRXE_STEP=$1; log "$1"; }

# Under `set -e` a failing command ends the script.  This trap says which
# command, where, and in which step, so no script can end silently; `die`
# covers the preconditions a script knows about, with what to do.
rrxe_on_err() { # status file line command
	local hint="the output above says why; 'bash -x $2' traces every command"
	echo "rrxe: error: $(basename "$2"):$3: '$4' failed (exit $1)${RRXE_STEP:+ during: $RRXE_STEP}; $hint" >&2
}
rrxe_trap_errors() {
	set -eEuo pipefail
	trap 'rrxe_on_err $? "${BASH_SOURCE[0]}" "$LINENO" "$BASH_COMMAND"' ERR
}

# Kernel flavors: release (GCC; what `make bench` uses) and debug (clang-19
# with KASAN, lockdep, kmemleak, ...).  Each is built from tinyconfig plus
# its fragments, and cached under its own key.
FLAVOR=${FLAVOR:-release}
case "$FLAVOR" in
release)
	RRXE_FRAGMENTS=("$RRXE_TOP/configs/rrxe-vm.config")
	KMAKE_FLAGS="ARCH=x86_64"
	;;
debug)
	RRXE_FRAGMENTS=("$RRXE_TOP/configs/rrxe-vm.config" "$RRXE_TOP/configs/rrxe-debug.config")
	KMAKE_FLAGS="ARCH=x86_64 LLVM=-19"
	;;
*)
	die "FLAVOR must be 'release' or 'debug', not '$FLAVOR'"
	;;
esac

# The cache key: kernel version, flavor, the fragments and the base they are
# merged over.  Patches are not in the key: they only touch rust/ glue and
# are re-applied incrementally (see scripts/kernel.sh).
rrxe_config_hash() {
	{ echo "$KVER_DEB tinyconfig $FLAVOR $KMAKE_FLAGS"; cat "${RRXE_FRAGMENTS[@]}"; } |
		sha256sum | cut -c1-12
}
KEY="$KVER-$FLAVOR-$(rrxe_config_hash)"
KBUILD_CACHE="$RRXE_CACHE/$KEY"
KDIR="$KBUILD_CACHE/linux"
KMODROOT="${RRXE_MODROOT:-$KBUILD_CACHE/modroot}"
# Where the out-of-tree module is built (kbuild's MO=): per flavor, and
# never inside the repository.  A second clone that builds and boots its
# own module without replacing the cached one sets RRXE_MODOUT and
# RRXE_MODROOT (a copy of the cache's modroot) per flavor.
MODOUT="${RRXE_MODOUT:-$KBUILD_CACHE/rrxe-module}"

# The libclang the PyPI wheel brings (its clang/native directory); fails
# if the wheel is not importable.
rrxe_wheel_libclang() {
	python3 -c 'import clang, os; print(os.path.join(os.path.dirname(clang.__file__), "native"))' 2>/dev/null
}

# bindgen's libclang: the debug flavor compiles C with clang-19, so its
# bindings come from the same LLVM's libclang (Debian's libclang1-19, a
# dependency of clang-19); the release flavor uses the PyPI wheel.  A
# LIBCLANG_PATH set by the caller is kept.
rrxe_toolchain_env() {
	export PATH="$HOME/.cargo/bin:$PATH"
	if [ -z "${LIBCLANG_PATH:-}" ]; then
		local d=""
		if [ "$FLAVOR" = debug ] && [ -e /usr/lib/llvm-19/lib/libclang-19.so.1 ]; then
			d=/usr/lib/llvm-19/lib
		else
			d=$(rrxe_wheel_libclang) || d=""
		fi
		if [ -n "$d" ]; then export LIBCLANG_PATH="$d"; fi
	fi
	return 0
}
