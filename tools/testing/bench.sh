#!/usr/bin/env bash
# `make bench`: benchmarks, apart from the tests.  Today: the protocol core
# on the host (criterion: ICRC, parse+validate, build) reported in bytes/s
# and as a ratio to plain memcpy of the same buffer, measured in the same
# run.  Then, in one VM boot, ibv_rc_pingpong throughput of rrxe and C rxe
# (tools/testing/vm/bench-pingpong.sh), reported as rrxe/C-rxe ratios.
# Results: out/bench/summary.txt and out/bench/vm.txt.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib.sh"
rrxe_trap_errors
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

# rrxe vs C rxe, same VM boot.
export RRXE_OUT="$out/vm"
mkdir -p "$RRXE_OUT"
bash "$top/scripts/vm-run.sh" "bash tools/testing/vm/bench-pingpong.sh" | tee "$out/vm-raw.txt" | grep '^bench' || true
python3 - "$out/vm-raw.txt" "$out/vm.txt" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 5 and f[0] == "bench":
        rows.setdefault((f[1], int(f[2])), []).append(float(f[3]))
out = ["ibv_rc_pingpong, two namespaces over veth, MTU 1024, median Mbit/s (same boot)"]
for size in sorted({k[1] for k in rows}):
    c = statistics.median(rows.get(("rxe", size), [0])) or float("nan")
    r = statistics.median(rows.get(("rrxe", size), [0]))
    out.append(f"  {size:6d} B: C rxe {c:8.2f}  rrxe {r:8.2f}  ratio rrxe/C {r / c:5.2f}  (rounds: {len(rows.get(('rrxe', size), []))})")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
