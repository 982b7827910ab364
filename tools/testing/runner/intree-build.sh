#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The in-tree build (make test-full): rrxe placed in a copy of the cached
# release kernel tree by scripts/intree.sh, configured through its Kconfig
# (CONFIG_RDMA_RRXE=m; and refused when a dependency is missing), built
# there, and the module it gives checked (name, alias, dependencies: ib_core
# is built in, the UDP tunnel a module).
# The copy lives next to the cache (its .config differs: Kbuild rebuilds
# there what depends on the changed options, not in the cache); the out-of-tree build the
# tests load is untouched.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck disable=SC1091
export FLAVOR=release
. "$top/scripts/lib.sh"
rrxe_toolchain_env
[ -f "$KDIR/arch/x86/boot/bzImage" ] || {
	echo "intree-build: no built release kernel at $KDIR (make module FLAVOR=release first)" >&2
	exit 1
}
work=$KBUILD_CACHE/intree
rm -rf "$work"
mkdir -p "$work"
cp -a "$KDIR" "$work/linux"
tree=$work/linux
bash "$top/scripts/intree.sh" "$tree" >/dev/null
cd "$tree"
# shellcheck disable=SC2086
kmake() { make -s $KMAKE_FLAGS "$@"; }

# Kconfig's dependencies: without on-demand paging the option is refused.
cp .config "$work/no-odp.config"
./scripts/config --file "$work/no-odp.config" -m RDMA_RRXE -d INFINIBAND_ON_DEMAND_PAGING
kmake KCONFIG_CONFIG="$work/no-odp.config" olddefconfig
if grep -q '^CONFIG_RDMA_RRXE=' "$work/no-odp.config"; then
	echo "intree-build: CONFIG_RDMA_RRXE stayed set without INFINIBAND_ON_DEMAND_PAGING" >&2
	exit 1
fi

./scripts/config --file .config -m RDMA_RRXE
kmake olddefconfig
grep -q '^CONFIG_RDMA_RRXE=m' .config || {
	echo "intree-build: Kconfig refused CONFIG_RDMA_RRXE=m:" >&2
	grep -n 'RRXE' .config >&2 || true
	exit 1
}
kmake -j"$(nproc)" modules
ko=drivers/infiniband/sw/rrxe/rdma_rrxe.ko
[ -f "$ko" ] || { echo "intree-build: $ko was not built" >&2; exit 1; }
name=$(/sbin/modinfo -F name "$ko")
alias=$(/sbin/modinfo -F alias "$ko")
deps=$(/sbin/modinfo -F depends "$ko")
[ "$name" = rdma_rrxe ] || { echo "intree-build: module name '$name'" >&2; exit 1; }
[ "$alias" = rdma-link-rrxe ] || { echo "intree-build: module alias '$alias'" >&2; exit 1; }
[[ ",$deps," == *,udp_tunnel,* ]] || { echo "intree-build: depends '$deps' lacks udp_tunnel (Kconfig's select)" >&2; exit 1; }
echo "in-tree rdma_rrxe.ko built ($(stat -c %s "$ko") bytes; depends $deps); refused without ODP"
rm -rf "$work"
