#!/usr/bin/env bash
# `make fuzz [FUZZ_SECONDS=600]`: coverage-guided fuzzing of the protocol
# core's parse + validate path (target proto/fuzz/fuzz_targets/parse_validate.rs)
# with libFuzzer, on the stable toolchain (the sanitizer-coverage flags
# cargo-fuzz would pass, given directly).  New inputs go to out/fuzz/corpus;
# crashes to out/fuzz/ as crash-*.  Exit status: libFuzzer's (0 = no finding).
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib.sh"
rrxe_trap_errors
secs=${1:-${FUZZ_SECONDS:-600}}
export PATH="$HOME/.cargo/bin:$PATH"
fz="$top/drivers/infiniband/sw/rrxe/proto/fuzz"
out="$top/out/fuzz"
mkdir -p "$out/corpus"
cd "$fz"
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing \
 -Cdebug-assertions -Coverflow-checks" \
	cargo build -q --release --target x86_64-unknown-linux-gnu --bin parse_validate
exec ./target/x86_64-unknown-linux-gnu/release/parse_validate "$out/corpus" corpus/parse_validate \
	-artifact_prefix="$out/" -max_total_time="$secs" -print_final_stats=1
