#!/usr/bin/env bash
# `make bench`: benchmarks, apart from the tests.  Today: the protocol core
# on the host (criterion: ICRC, parse+validate, build) reported in bytes/s
# and as a ratio to plain memcpy of the same buffer, measured in the same
# run.  Then, in one VM boot, stock perftest, ibv_rc_pingpong and NVMe over
# RDMA on rrxe and C rxe, A-B-B-A (bench-vm.sh; the method: METHOD.md),
# reported per cell as the rrxe/C rxe ratio with its 95% interval against
# the goals, beside two noise-floor controls (benchstat.py).
# Results: out/bench/summary.txt, out/bench/vm.txt (and vm.csv, runs.jsonl),
# out/bench/bandwidth.png.
top=$(cd "$(dirname "$0")/../../.." && pwd)
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

# rrxe vs C rxe in one VM boot, A-B-B-A (bench-vm.sh, METHOD.md): one
# benchrun line per run, then benchstat.py's table (ratios with 95%
# bootstrap intervals, the noise-floor controls, CPU per MB) and the plot.
export RRXE_OUT="$out/vm"
mkdir -p "$RRXE_OUT"
# The plot uses Debian's python3-matplotlib, so Debian's python3 (another
# python3 may come first on PATH).
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || {
	step "apt-get install python3-matplotlib (for the plot)"
	[ "$(id -u)" = 0 ] || die "the plot needs python3-matplotlib: apt-get install python3-matplotlib"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null ||
		die "apt-get install python3-matplotlib failed"
}
# BENCH_SECS, BENCH_PAIRS, BENCH_PAIRS_REST, BENCH_CELLS, BENCH_ARM_OFF and NVME_SECS
# (see bench-vm.sh) pass into the VM.
vm_env=""
for v in BENCH_SECS BENCH_PAIRS BENCH_PAIRS_REST BENCH_CELLS BENCH_ARM_OFF NVME_SECS; do
	if [ -n "${!v:-}" ]; then vm_env+=" $v='${!v}'"; fi
done
t0=$SECONDS
VM_TIMEOUT=${VM_TIMEOUT:-7200} bash "$top/scripts/vm-run.sh" "$vm_env bash tools/testing/bench/bench-vm.sh" |
	tee "$out/vm-raw.txt" | grep -E '^bench(:|-fail)' || true
sed -n 's/^benchrun //p' "$out/vm-raw.txt" >"$out/runs.jsonl"
[ -s "$out/runs.jsonl" ] || die "the VM reported no run (see $out/vm-raw.txt)"
grep -q '^bench: done' "$out/vm-raw.txt" ||
	echo "bench: warning: the VM's run did not finish (see $out/vm-raw.txt); the table covers the cells it measured" >&2
/usr/bin/python3 "$top/tools/testing/bench/benchstat.py" "$out/runs.jsonl" --table "$out/vm.txt" --csv "$out/vm.csv"
/usr/bin/python3 "$top/tools/testing/bench/bench-plot.py" "$out/vm.csv" "$out/bandwidth.png"
echo "bench: the VM part took $((SECONDS - t0)) s; table $out/vm.txt, runs $out/runs.jsonl, plot $out/bandwidth.png"
