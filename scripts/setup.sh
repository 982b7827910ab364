#!/usr/bin/env bash
# Install everything rrxe needs on a Debian 12 host; quick no-op when done.
# Debian packages (qemu, kernel build deps, stock rdma-core userspace for the
# VM), rust-src, bindgen-cli (crates.io) and libclang (PyPI wheel).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
rrxe_toolchain_env

PKGS=(build-essential flex bison bc libelf-dev libssl-dev cpio kmod xz-utils
	qemu-system-x86 iproute2 ibverbs-utils ibverbs-providers rdmacm-utils
	perftest rdma-core python3 python3-pyverbs tcpdump bc)
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "apt-get install ${missing[*]}"
	[ "$(id -u)" = 0 ] || die "need root to apt-get install: ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v rustup >/dev/null || die "rustup not found (the machine's rustc 1.95 comes from rustup)"
if ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
	log "rustup component add rust-src"
	rustup component add rust-src >/dev/null
fi
if ! command -v bindgen >/dev/null; then
	log "cargo install --locked bindgen-cli (a few minutes)"
	cargo install --locked bindgen-cli >/dev/null 2>&1 || die "cargo install bindgen-cli failed"
fi
if [ -z "${LIBCLANG_PATH:-}" ] || [ ! -e "$LIBCLANG_PATH/libclang.so" ]; then
	log "pip install libclang (libclang >= 17 wheel)"
	python3 -m pip install -q libclang >/dev/null 2>&1 || die "pip install libclang failed"
	rrxe_toolchain_env
fi
[ -e "${LIBCLANG_PATH:-}/libclang.so" ] || die "libclang.so not found (LIBCLANG_PATH=${LIBCLANG_PATH:-unset})"
