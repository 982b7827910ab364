#!/usr/bin/env python3
"""Turns the lines of tools/testing/bench/bench-vm.sh into the table of
rrxe/C-rxe ratios per cell (medians over rounds, with the spread) and a
plot of bandwidth by size.

Usage: bench-report.py RAW TABLE PNG

A cell's ratio is the median of the per-round ratios (each round measures
both drivers back to back); the spread is their minimum and maximum.  Goals
(issue "Engine v2"): bandwidth >= 1.2x C rxe, four QPs >= 1.5x, latency
<= 0.85x.  NVMe over RDMA cells (fio through nvme-rdma and nvmet-rdma,
issue 15) have no goal: they are reported.
"""
import statistics
import sys
from collections import defaultdict

raw, table, png = sys.argv[1:4]
vals = defaultdict(lambda: defaultdict(dict))  # cell -> driver -> round -> value
units = {}
memcpy = None
fails = []
for line in open(raw, errors="replace"):
    f = line.split()
    if len(f) == 9 and f[0] == "bench":
        tool, mtu, size, qps, drv, v, unit, rnd = f[1], int(f[2]), int(f[3]), int(f[4]), f[5], float(f[6]), f[7], int(f[8])
        cell = (tool, mtu, size, qps)
        vals[cell][drv][rnd] = v
        units[cell] = unit
    elif len(f) == 3 and f[0] == "memcpy":
        memcpy = float(f[2])
    elif f and f[0] == "bench-fail":
        fails.append(" ".join(f[1:]))


def goal(cell):
    tool, _, _, qps = cell
    if tool.startswith("nvme"):
        return None
    if units[cell] == "usec":
        return ("<=", 0.85)
    return (">=", 1.5 if qps > 1 else 1.2)


def fmt(xs):
    if not xs:
        return "      -"
    return f"{statistics.median(xs):9.2f} [{min(xs):.1f}-{max(xs):.1f}]"


out = ["rrxe vs C rxe, one VM boot, medians over rounds [min-max]; perftest and pingpong: two "
       "namespaces over veth; nvme_*: two devices at the ends of a veth in the initial namespace",
       f"{'cell':34s} {'C rxe':>22s} {'rrxe':>22s} {'rrxe/C':>8s} {'[spread]':>13s}  goal"]
order = sorted(vals, key=lambda c: (units[c], c[0], c[3], c[1], c[2]))
met = 0
for cell in order:
    tool, mtu, size, qps = cell
    c = vals[cell].get("rxe", {})
    r = vals[cell].get("rrxe", {})
    ratios = [r[k] / c[k] for k in r if k in c and c[k] > 0]
    name = f"{tool} {size}B mtu{mtu}" + (f" q{qps}" if qps > 1 else "")
    if goal(cell) is None:
        rs = f"{statistics.median(ratios):8.2f} [{min(ratios):.2f}-{max(ratios):.2f}]" if ratios else f"{'-':>8s}"
        out.append(f"{name:34s} {fmt(list(c.values())):>22s} {fmt(list(r.values())):>22s} {rs}  (no goal)  ({units[cell]}, {len(ratios)} rounds)")
        continue
    op, g = goal(cell)
    if ratios:
        m = statistics.median(ratios)
        ok = m >= g if op == ">=" else m <= g
        met += ok
        rs = f"{m:8.2f} [{min(ratios):.2f}-{max(ratios):.2f}]"
        verdict = f"{op}{g} {'met' if ok else 'SHORT'}"
    else:
        rs, verdict = f"{'-':>8s}", f"{op}{g} no data"
    out.append(f"{name:34s} {fmt(list(c.values())):>22s} {fmt(list(r.values())):>22s} {rs}  {verdict}  ({units[cell]}, {len(ratios)} rounds)")
out.append(f"goals met: {met} of {sum(goal(c) is not None for c in order)} cells")
if memcpy:
    bw = [(statistics.median(vals[c]["rrxe"].values()), c) for c in order
          if units[c] == "MB/s" and vals[c].get("rrxe")]
    if bw:
        best, c = max(bw)
        out.append(f"in-VM memcpy: {memcpy:.0f} MB/s (2^20 B); rrxe's best cell ({c[0]} {c[2]}B mtu{c[1]}"
                   f"{' q%d' % c[3] if c[3] > 1 else ''}) moves {best:.0f} MB/s = {100 * best / memcpy:.1f}% of it")
for f in fails:
    out.append(f"FAILED RUN: {f}")
open(table, "w").write("\n".join(out) + "\n")
print("\n".join(out))

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("no matplotlib: no plot", file=sys.stderr)
    sys.exit(0)
fig, ax = plt.subplots(figsize=(7, 4.5))
for drv, style in (("rxe", "o--"), ("rrxe", "s-")):
    for mtu in sorted({c[1] for c in vals if c[0] == "ib_write_bw" and c[3] == 1}):
        pts = sorted((c[2], statistics.median(vals[c][drv].values())) for c in vals
                     if c[0] == "ib_write_bw" and c[1] == mtu and c[3] == 1 and vals[c].get(drv))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style,
                    label=f"{'C rxe' if drv == 'rxe' else 'rrxe'}, MTU {mtu}")
ax.set_xscale("log", base=2)
ax.set_xlabel("message size (bytes)")
ax.set_ylabel("ib_write_bw, MB/s (median)")
ax.set_title("RDMA WRITE bandwidth by size, same VM boot (qemu TCG)")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(png, dpi=110)
print(f"plot: {png}")
