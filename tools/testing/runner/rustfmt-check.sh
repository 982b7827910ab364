#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rustfmt --check over the module's and the samples' crates (every file
# their roots reach: the driver, kapi, the protocol core), with the kernel
# tree's .rustfmt.toml, as `make rustfmtcheck` in the tree would.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck disable=SC1091
export FLAVOR=release
. "$top/scripts/lib.sh"
rrxe_toolchain_env
cfg=$KDIR/.rustfmt.toml
[ -f "$cfg" ] || { echo "rustfmt-check: no $cfg (make kernel first)" >&2; exit 1; }
command -v rustfmt >/dev/null || { echo "rustfmt-check: rustfmt not found (scripts/setup.sh installs it)" >&2; exit 1; }
cd "$top"
roots=(drivers/infiniband/sw/rrxe/rdma_rrxe.rs samples/rust/*.rs)
if ! out=$(rustfmt --check --edition 2021 --config-path "$cfg" "${roots[@]}" 2>&1); then
	grep '^Diff in' <<<"$out" | sort -u >&2 || true
	echo "rustfmt-check: not formatted (run: rustfmt --edition 2021 --config-path $cfg ${roots[*]})" >&2
	exit 1
fi
echo "${#roots[@]} crate roots formatted"
