#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Places rrxe in a kernel source tree as drivers/infiniband/sw/rrxe, next
# to C rxe, so that it builds there with CONFIG_RDMA_RRXE (its Kconfig:
# drivers/infiniband/sw/rrxe/Kconfig).  The tree must carry this
# repository's patches/ (Rust bindings and helpers, and two ib_core
# changes); apply them first:
#
#   cd LINUX && for p in $(cat REPO/patches/series); do patch -p1 < REPO/patches/$p; done
#
# Usage: scripts/intree.sh LINUX
# Then: make -C LINUX menuconfig (Device Drivers > InfiniBand > "Software
# RDMA over Ethernet (RoCE) driver in Rust"), or scripts/config -m RDMA_RRXE
# and make olddefconfig; then make.  Running it again refreshes the
# sources; the two lines it adds to the tree's Kconfig and Makefile are
# added once.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-}
if [ -z "$tree" ] || [ ! -f "$tree/drivers/infiniband/sw/Makefile" ]; then
	echo "intree: usage: scripts/intree.sh LINUX (a kernel source tree; '${tree}' is not one)" >&2
	exit 2
fi
sw=$tree/drivers/infiniband/sw
grep -q 'sw/rxe/Kconfig' "$tree/drivers/infiniband/Kconfig" || {
	echo "intree: $tree/drivers/infiniband/Kconfig does not source rxe's Kconfig: not a 7.x tree?" >&2
	exit 1
}
rm -rf "$sw/rrxe"
mkdir -p "$sw/rrxe"
# The driver's sources and the protocol core's (its host-side target,
# fuzzing, benches and tests stay behind).
tar -C "$top/drivers/infiniband/sw/rrxe" --exclude=./proto/target --exclude=./proto/fuzz \
	--exclude=./proto/benches --exclude=./proto/tests -cf - . | tar -C "$sw/rrxe" -xf -
if ! grep -q 'sw/rrxe/Kconfig' "$tree/drivers/infiniband/Kconfig"; then
	sed -i '/source "drivers\/infiniband\/sw\/rxe\/Kconfig"/a source "drivers/infiniband/sw/rrxe/Kconfig"' \
		"$tree/drivers/infiniband/Kconfig"
fi
if ! grep -q 'CONFIG_RDMA_RRXE' "$sw/Makefile"; then
	printf 'obj-$(CONFIG_RDMA_RRXE)\t\t+= rrxe/\n' >>"$sw/Makefile"
fi
echo "intree: rrxe is in $sw/rrxe; enable CONFIG_RDMA_RRXE and build"
