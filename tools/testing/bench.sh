#!/usr/bin/env bash
# `make bench`: benchmarks, apart from the tests.  Today: the protocol core
# on the host (criterion: ICRC, parse+validate, build) reported in bytes/s
# and as a ratio to plain memcpy of the same buffer, measured in the same
# run.  The rrxe-vs-C-rxe VM comparison (same boot, ratios) joins when rrxe
# has a data path.  Results: out/bench/summary.txt.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
export PATH="$HOME/.cargo/bin:$PATH"
crate="$top/drivers/infiniband/sw/rrxe/proto"
out="$top/out/bench"
mkdir -p "$out"
(cd "$crate" && cargo bench --bench throughput -- --warm-up-time 1 --measurement-time 3 2>&1) | tee "$out/criterion.log" |
	grep -E "^(icrc|memcpy|parse|build)/|thrpt" || true
python3 - "$crate/target/criterion" "$out/summary.txt" <<'PY'
import json, os, sys
root, dest = sys.argv[1], sys.argv[2]
rates = {}
for dirpath, _, files in os.walk(root):
    if os.path.basename(dirpath) == "new" and "estimates.json" in files and "benchmark.json" in files:
        b = json.load(open(os.path.join(dirpath, "benchmark.json")))
        e = json.load(open(os.path.join(dirpath, "estimates.json")))
        tp = b.get("throughput") or {}
        nbytes = tp.get("Bytes")
        if nbytes:
            rates[b["full_id"]] = nbytes / (e["mean"]["point_estimate"] * 1e-9)
lines = []
for name in sorted(rates):
    size = name.rsplit("/", 1)[-1]
    base = rates.get(f"memcpy/copy_from_slice/{size}")
    ratio = f"{rates[name] / base:6.3f} x memcpy" if base else ""
    lines.append(f"{name:40s} {rates[name] / 2**30:8.2f} GiB/s  {ratio}")
open(dest, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
