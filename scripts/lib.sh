# Shared settings for rrxe's scripts: kernel version, cache paths, toolchain env.
# Sourced, not run.  Everything here is derived; nothing is downloaded.

RRXE_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KVER_PKG=7.2
KVER_DEB=7.2.12-1~bpo13+1
KVER=7.2.12
RRXE_CACHE=${RRXE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rrxe}

# The cache key: kernel version + the config fragment + the base it is merged
# over.  Patches are not in the key: they only touch rust/ glue and are
# re-applied incrementally (see scripts/kernel.sh).
rrxe_config_hash() {
	{ echo "$KVER_DEB tinyconfig"; cat "$RRXE_TOP/configs/rrxe-vm.config"; } |
		sha256sum | cut -c1-12
}
KEY="$KVER-$(rrxe_config_hash)"
KBUILD_CACHE="$RRXE_CACHE/$KEY"
KDIR="$KBUILD_CACHE/linux"
KMODROOT="$KBUILD_CACHE/modroot"

rrxe_toolchain_env() {
	export PATH="$HOME/.cargo/bin:$PATH"
	if [ -z "${LIBCLANG_PATH:-}" ]; then
		local d
		d=$(python3 -c 'import clang, os; print(os.path.join(os.path.dirname(clang.__file__), "native"))' 2>/dev/null) || true
		[ -n "$d" ] && export LIBCLANG_PATH="$d"
	fi
}

die() { echo "rrxe: error: $*" >&2; exit 1; }
log() { echo "rrxe: $*" >&2; }
