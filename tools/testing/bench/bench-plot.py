#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The plot of `make bench` from benchstat.py's CSV.

    bench-plot.py VM.CSV PNG

Left: each cell's speedup of rrxe over C rxe (above 1: rrxe better; B/A
for latency) with its 95% bootstrap interval as an error bar and the
goal as a mark, then the noise-floor controls (their bar must cross 1).
Right: bandwidth by message size, the medians of both drivers for
ib_write_bw, ib_send_bw and ib_read_bw at each path MTU measured.
"""
import csv
import sys


def num(x):
    """A CSV figure, or None where the cell has none."""
    return float(x) if x not in ("", None) else None


def goal_speedup(row):
    """The goal as a speedup (lo>=1.2 -> 1.2; hi<=0.85 -> 1/0.85), or None."""
    g = row["goal"]
    if g.startswith("lo>="):
        return float(g[4:])
    if g.startswith("hi<="):
        return 1 / float(g[4:])
    return None


def main(argv):
    src, png = argv
    rows = list(csv.DictReader(open(src)))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("no matplotlib: no plot", file=sys.stderr)
        return 0
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 6), gridspec_kw={"width_ratios": [3, 2]})
    shown = [r for r in rows if num(r["speedup"]) is not None]
    labels = []
    for i, r in enumerate(shown):
        s, lo, hi = num(r["speedup"]), num(r["speedup_lo"]), num(r["speedup_hi"])
        err = [[s - lo], [hi - s]] if lo is not None else None
        color = "gray" if r["control"] == "1" else ("tab:green" if r["passed"] == "1" else "tab:red")
        ax.errorbar([s], [i], xerr=err, fmt="o", color=color, capsize=3)
        g = goal_speedup(r)
        if g is not None and r["control"] != "1":
            ax.plot([g], [i], "|", color="black", markersize=12)
        labels.append(f"{r['name']} ({r['cmp']}, n={r['pairs']})")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log", base=2)
    ticks = [0.25, 0.5, 0.7, 0.85, 1, 1.2, 1.5, 2, 4]
    lo_x, hi_x = ax.get_xlim()
    ax.set_xticks([t for t in ticks if lo_x <= t <= hi_x] or [1], minor=False)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("speedup, A over B (> 1: A better), 95% bootstrap interval; | = goal")
    ax.set_title("rrxe vs C rxe, A-B-B-A pairs (gray: noise-floor controls)")
    ax.grid(True, axis="x", alpha=0.3)
    for tool, marker in (("ib_write_bw", "s"), ("ib_send_bw", "o"), ("ib_read_bw", "^")):
        for mtu in ("1024", "4096"):
            pts = sorted((int(r["cell"].split("/")[1]), num(r["median_a"]), num(r["median_b"])) for r in rows
                         if r["cmp"] == "rrxe/rxe" and r["cell"].startswith(f"{tool}/")
                         and r["cell"].endswith(f"/{mtu}/1") and num(r["median_a"]) is not None)
            if len(pts) < 2:
                continue
            xs = [p[0] for p in pts]
            bx.plot(xs, [p[1] for p in pts], marker + "-", label=f"rrxe {tool} MTU {mtu}")
            bx.plot(xs, [p[2] for p in pts], marker + "--", label=f"C rxe {tool} MTU {mtu}")
    bx.set_xscale("log", base=2)
    bx.set_xlabel("message size (bytes)")
    bx.set_ylabel("MB/s (median of the pairs)")
    bx.set_title("bandwidth by size, same VM boot (qemu TCG)")
    bx.grid(True, which="both", alpha=0.3)
    if bx.lines:
        bx.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"plot: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
