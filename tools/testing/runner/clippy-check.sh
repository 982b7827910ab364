#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make clippy` (the module under the kernel's clippy configuration,
# CLIPPY=1, against the release kernel): any warning or error fails.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
if ! out=$(make -s -C "$top" clippy FLAVOR=release 2>&1); then
	printf '%s\n' "$out" >&2
	echo "clippy-check: make clippy failed" >&2
	exit 1
fi
if grep -qE '^(warning|error)(\[|:)' <<<"$out"; then
	printf '%s\n' "$out" >&2
	echo "clippy-check: $(grep -cE '^(warning|error)(\[|:)' <<<"$out") diagnostics" >&2
	exit 1
fi
echo "no clippy diagnostics"
