#!/usr/bin/env bash
# Builds the test programs the VM selftests run, on the host (the VM runs
# the host's userspace, so host binaries run there unchanged), into
# $RRXE_TOP/out/progs: the C programs in tools/testing/selftests/rrxe/progs/ (one binary
# per .c file) and the Rust packet generator in tools/testing/roce-flood/
# (built on the host with the protocol core, like the host tests).
# Called by vm-tests.sh before the VM boots; quick when nothing changed.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
out=$top/out/progs
mkdir -p "$out"
make -s -C "$top/tools/testing/selftests/rrxe/progs" OUT="$out" ||
	{ echo "rrxe: error: building the test programs in tools/testing/selftests/rrxe/progs failed (compiler output above)" >&2; exit 1; }
# The samples, which verbs-samples.sh runs: out/samples.
mkdir -p "$top/out/samples"
make -s -C "$top/samples/verbs" OUT="$top/out/samples" ||
	{ echo "rrxe: error: building samples/verbs failed (compiler output above)" >&2; exit 1; }
flood=$top/tools/testing/roce-flood
if [ -f "$flood/Cargo.toml" ]; then
	export PATH="$HOME/.cargo/bin:$PATH"
	(cd "$flood" && { cargo build --release --offline -q 2>/dev/null || cargo build --release -q; }) ||
		{ echo "rrxe: error: building tools/testing/roce-flood failed (cargo output above)" >&2; exit 1; }
	cp "$flood/target/release/roce-flood" "$out/"
fi
