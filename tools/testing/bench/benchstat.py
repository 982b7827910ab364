#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The statistics of the A-B-B-A benchmark (METHOD.md): reads one JSON
object per line, one per perftest (or fio) run, and prints per cell the
geometric mean of the paired ratios with a 95% bootstrap interval, the
share of pairs won, CPU time and context switches per MB, and the goal's
verdict; writes the same as CSV for the plot.

    benchstat.py RAW.jsonl [--table FILE] [--csv FILE]
                 [--min-pairs N] [--resamples N] [--seed S]

A record:

    {"cell": "ib_write_bw/65536/1024/1", "cmp": "rrxe/rxe", "arm": "A",
     "pair": 3, "order": "BA", "value": 41.7, "unit": "MB/s",
     "cpu_s": 5.9, "sys_s": 2.1, "ctxt": 48211, "bytes": 131203072}

cell is TOOL/SIZE/MTU/QPS; cmp names the drivers of arm A and arm B
("rrxe/rxe" compares rrxe with C rxe; "rxe/rxe" and "rrxe/rrxe" are the
noise-floor controls, one driver on both arms); pair numbers the A-B or
B-A pairs of a cell and order says which arm ran first in it; value is
MB/s or usec; cpu_s (all non-idle time), sys_s (system, irq and softirq
time), ctxt (context switches, all from /proc/stat) and bytes (on the
cell's veth, both directions) are the run's deltas over one window.  A
run with "warmup": true is discarded; one whose value is null or not
positive failed, and its pair is dropped.  Other fields are ignored.

Ratios are A/B of the measured value, the convention the goals are
stated in (bandwidth: lower bound >= 1.2, latency: upper bound <= 0.85);
the speedup is A/B for MB/s and B/A for usec, so that above 1 means A is
better for both, and a pair is won by A when its speedup is above 1.
"""
import argparse
import csv
import json
import math
import random
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass

MB = 2**20  # perftest's MB
MIN_PAIRS = 15  # the issue's minimum for a goal cell
RESAMPLES = 10000
SEED = "rrxe-bench"
UNITS = {"MB/s": "bw", "usec": "lat"}
FIELDS = ("cell", "cmp", "arm", "pair", "order", "value", "unit", "cpu_s", "sys_s", "ctxt", "bytes")


@dataclass(frozen=True)
class Run:
    """One measured run, as its record says."""
    cell: str
    cmp: str
    arm: str
    pair: int
    order: str
    value: float | None
    unit: str
    cpu_s: float
    sys_s: float
    ctxt: int
    bytes: int
    warmup: bool

    def ok(self):
        """The run produced a usable figure."""
        return self.value is not None and math.isfinite(self.value) and self.value > 0


@dataclass(frozen=True)
class Cost:
    """What one arm's runs cost the machine per MB moved."""
    cpu_per_mb: float | None
    sys_per_mb: float | None
    ctxt_per_mb: float | None


@dataclass(frozen=True)
class Summary:
    """One comparison of a cell: the figures of the table and the CSV."""
    cell: str
    cmp: str
    unit: str
    pairs: int
    dropped: int
    median_a: float | None
    median_b: float | None
    ratio: float | None
    lo: float | None
    hi: float | None
    wins: float | None
    cost_a: Cost
    cost_b: Cost
    goal: str
    verdict: str
    passed: bool

    def control(self):
        """A noise-floor control rather than a comparison with a goal."""
        return is_control(self.cmp)

    def speedup(self):
        """(point, lo, hi) oriented so that above 1 means A is better."""
        if self.ratio is None or UNITS[self.unit] == "bw":
            return self.ratio, self.lo, self.hi
        if self.lo is None:
            return 1 / self.ratio, None, None
        return 1 / self.ratio, 1 / self.hi, 1 / self.lo


# rrxe with a module parameter on (arm A) against off (arm B): PARAM/noPARAM,
# e.g. gso/nogso (make bench's BENCH_ARM_OFF).
def is_param_cmp(cmp):
    """A comparison of rrxe with one of its module parameters on and off."""
    a, b = cmp.split("/")
    return b == "no" + a
# Issue 33's goal: with UDP GSO, 64 KiB WRITEs and SENDs at MTU 1024 at
# least twice C rxe's bandwidth.
GSO_GOAL_CELLS = {("ib_write_bw", 65536, 1024, 1), ("ib_send_bw", 65536, 1024, 1)}


def is_control(cmp):
    """A noise-floor control: the same driver on both arms."""
    a, b = cmp.split("/")
    return a == b


def parse_cell(cell):
    """TOOL/SIZE/MTU/QPS -> (tool, size, mtu, qps)."""
    tool, size, mtu, qps = cell.rsplit("/", 3)
    return tool, int(size), int(mtu), int(qps)


def cell_name(cell):
    """The name the table prints: "ib_write_bw 65536B mtu1024 q4"."""
    tool, size, mtu, qps = parse_cell(cell)
    return f"{tool} {size}B mtu{mtu}" + (f" q{qps}" if qps > 1 else "")


def read_runs(lines):
    """Runs from JSON lines; blank lines are skipped, a malformed record is
    an error naming its line (the producer is ours: better stop than guess)."""
    runs = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            missing = [f for f in FIELDS if f not in r]
            if missing:
                raise ValueError(f"missing {', '.join(missing)}")
            run = Run(r["cell"], r["cmp"], r["arm"], int(r["pair"]), r["order"],
                      None if r["value"] is None else float(r["value"]), r["unit"],
                      float(r["cpu_s"]), float(r["sys_s"]), int(r["ctxt"]), int(r["bytes"]),
                      bool(r.get("warmup", False)))
            parse_cell(run.cell)
            if run.arm not in ("A", "B") or run.order not in ("AB", "BA") or run.unit not in UNITS:
                raise ValueError("arm must be A or B, order AB or BA, unit MB/s or usec")
            if len(run.cmp.split("/")) != 2:
                raise ValueError(f"cmp '{run.cmp}' is not DRIVER/DRIVER")
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise ValueError(f"line {no}: {e}") from None
        runs.append(run)
    return runs


def pair_up(runs):
    """{(cell, cmp): (kept [(A run, B run)...] by pair number, dropped
    pairs, unit)}; warm-ups are left out, a pair with a failed or missing
    run is dropped.  Two runs of one arm in a pair, two orders in a pair,
    or two units in a cell are errors."""
    slots = defaultdict(dict)  # (cell, cmp, pair) -> arm -> run
    units = {}
    for run in runs:
        if run.warmup:
            continue
        if units.setdefault((run.cell, run.cmp), run.unit) != run.unit:
            raise ValueError(f"{run.cell} {run.cmp}: runs in both MB/s and usec")
        slot = slots[(run.cell, run.cmp, run.pair)]
        if run.arm in slot:
            raise ValueError(f"{run.cell} {run.cmp} pair {run.pair}: two runs of arm {run.arm}")
        slot[run.arm] = run
    kept, dropped = defaultdict(list), defaultdict(int)
    for (cell, cmp, pair), slot in sorted(slots.items()):
        a, b = slot.get("A"), slot.get("B")
        if a and b and a.order != b.order:
            raise ValueError(f"{cell} {cmp} pair {pair}: its runs say AB and BA")
        if a and b and a.ok() and b.ok():
            kept[(cell, cmp)].append((a, b))
        else:
            dropped[(cell, cmp)] += 1
    return {key: (kept[key], dropped[key], unit) for key, unit in units.items()}


def geo_mean_ci(ratios, resamples, rng):
    """The geometric mean of RATIOS and its 95% percentile bootstrap
    interval (pairs resampled with replacement; None, None for fewer than
    two ratios, where resampling says nothing)."""
    logs = [math.log(r) for r in ratios]
    n = len(logs)
    point = math.exp(math.fsum(logs) / n)
    if n < 2:
        return point, None, None
    means = [sum(rng.choices(logs, k=n)) / n for _ in range(resamples)]
    q = statistics.quantiles(means, n=40, method="inclusive")  # 2.5% steps
    return point, math.exp(q[0]), math.exp(q[-1])


def cost(runs):
    """CPU seconds, kernel CPU seconds and context switches per MB over
    RUNS (sums over sums: long runs weigh more, as they should)."""
    mb = sum(r.bytes for r in runs) / MB
    if mb <= 0:
        return Cost(None, None, None)
    return Cost(sum(r.cpu_s for r in runs) / mb, sum(r.sys_s for r in runs) / mb,
                sum(r.ctxt for r in runs) / mb)


def goal_of(cell, cmp):
    """(text, test on (lo, hi)) of the issue's goal for the cell, or the
    controls' check that the interval contains 1.0."""
    if is_control(cmp):
        return "CI has 1.0", lambda lo, hi: lo <= 1.0 <= hi
    if is_param_cmp(cmp):
        # Issue 33: no cell worse with UDP GSO (or the placement of bulk
        # transfers) than without.
        return "hi>=1.0", lambda lo, hi: hi >= 1.0
    tool, size, mtu, qps = parse_cell(cell)
    if (tool, size, mtu, qps) in GSO_GOAL_CELLS:
        return "lo>=2.0", lambda lo, hi: lo >= 2.0
    if tool.split(":")[0].endswith("_lat"):  # ib_atomic_lat:FAA too
        return "hi<=0.85", lambda lo, hi: hi <= 0.85
    # fio's jobs (nvme_*'s QPS) are not the four-QP cell's QPs.
    floor = 1.5 if qps > 1 and not tool.startswith("nvme") else 1.2
    return f"lo>={floor}", lambda lo, hi: lo >= floor


def verdict(cell, cmp, n, lo, hi, min_pairs):
    """(goal text, verdict text, passed): no verdict on fewer than
    MIN_PAIRS pairs, whatever the point estimate says."""
    text, test = goal_of(cell, cmp)
    need = max(min_pairs, 2)
    if n < need:
        return text, f"too few pairs ({n} < {need})", False
    ok = test(lo, hi)
    if is_control(cmp):
        return text, "noise ok" if ok else "NOISE: CI excludes 1.0", ok
    return text, "met" if ok else "SHORT", ok


def summarize_group(cell, cmp, pairs, dropped, unit, min_pairs, resamples, seed):
    """The Summary of one (cell, cmp) from its kept pairs."""
    ratio = lo = hi = wins = None
    if pairs:
        ratios = [a.value / b.value for a, b in pairs]
        # Seeded per cell: a cell's interval does not depend on the others.
        ratio, lo, hi = geo_mean_ci(ratios, resamples, random.Random(f"{seed}/{cell}/{cmp}"))
        better = (lambda r: r > 1) if UNITS[unit] == "bw" else (lambda r: r < 1)
        wins = sum(map(better, ratios)) / len(ratios)
    goal, text, passed = verdict(cell, cmp, len(pairs), lo, hi, min_pairs)
    return Summary(cell, cmp, unit, len(pairs), dropped,
                   statistics.median(a.value for a, _ in pairs) if pairs else None,
                   statistics.median(b.value for _, b in pairs) if pairs else None,
                   ratio, lo, hi, wins,
                   cost([a for a, _ in pairs]), cost([b for _, b in pairs]), goal, text, passed)


def summarize(runs, min_pairs=MIN_PAIRS, resamples=RESAMPLES, seed=SEED):
    """Summaries of every (cell, cmp) in RUNS: comparisons first, then the
    controls; within each by unit, tool, QPs, MTU and size."""
    def sort_key(item):
        (cell, cmp), (_, _, unit) = item
        tool, size, mtu, qps = parse_cell(cell)
        return is_control(cmp), cmp, unit, tool, qps, mtu, size
    return [summarize_group(cell, cmp, *group, min_pairs, resamples, seed)
            for (cell, cmp), group in sorted(pair_up(runs).items(), key=sort_key)]


def fmt(x, spec=".2f"):
    """X formatted, or "-" for no figure."""
    return "-" if x is None else format(x, spec)


def interval(point, lo, hi):
    """"1.13 [0.96-1.34]", or the point alone when there is no interval."""
    if lo is None:
        return fmt(point)
    return f"{point:.2f} [{lo:.2f}-{hi:.2f}]"


def table(summaries, warmups):
    """The plain-text report: ratios and verdicts, costs, then the tally."""
    out = ["rrxe vs C rxe, A-B-B-A pairs in one VM boot; A/B: geometric mean of the per-pair ratios of the",
           "measured value [95% bootstrap interval]; speedup: the same oriented so that > 1 means A is better",
           "(B/A for usec); wins: share of pairs A is better in; controls: one driver on both arms",
           f"{'cell':32s} {'arms':9s} {'n':>3s} {'A median':>9s} {'B median':>9s} {'unit':5s} "
           f"{'A/B [95%]':>17s} {'speedup [95%]':>17s} {'wins':>5s}  {'goal':10s} verdict"]
    for s in summaries:
        sp = s.speedup()
        out.append(f"{cell_name(s.cell):32s} {s.cmp:9s} {s.pairs:3d} {fmt(s.median_a):>9s} {fmt(s.median_b):>9s} "
                   f"{s.unit:5s} {interval(s.ratio, s.lo, s.hi):>17s} {interval(*sp):>17s} "
                   f"{fmt(s.wins, '.0%'):>5s}  {s.goal:10s} {s.verdict}"
                   + (f" ({s.dropped} pairs dropped)" if s.dropped else ""))
    out += ["", "cost per MB moved (2^20 B, both directions on the wire), A | B; kernel = system + irq + softirq",
            f"{'cell':32s} {'arms':9s} {'CPU s/MB':>19s} {'kernel s/MB':>19s} {'ctxt/MB':>17s}"]
    for s in summaries:
        a, b = s.cost_a, s.cost_b
        out.append(f"{cell_name(s.cell):32s} {s.cmp:9s} "
                   f"{fmt(a.cpu_per_mb, '.4f'):>9s}|{fmt(b.cpu_per_mb, '.4f'):<9s} "
                   f"{fmt(a.sys_per_mb, '.4f'):>9s}|{fmt(b.sys_per_mb, '.4f'):<9s} "
                   f"{fmt(a.ctxt_per_mb, '.0f'):>8s}|{fmt(b.ctxt_per_mb, '.0f'):<8s}")
    cells = [s for s in summaries if not s.control()]
    controls = [s for s in summaries if s.control()]
    out += ["", f"goals met: {sum(s.passed for s in cells)} of {len(cells)} cells "
            f"({sum(s.verdict.startswith('too few') for s in cells)} with too few pairs for a verdict)",
            f"noise-floor controls containing 1.0: {sum(s.passed for s in controls)} of {len(controls)} "
            f"({sum(s.verdict.startswith('too few') for s in controls)} with too few pairs for a verdict)",
            f"warm-up runs discarded: {warmups}; pairs dropped for a failed run: {sum(s.dropped for s in summaries)}"]
    return "\n".join(out) + "\n"


CSV_COLUMNS = ("cell", "name", "cmp", "control", "unit", "pairs", "dropped", "median_a", "median_b",
               "ratio", "ratio_lo", "ratio_hi", "speedup", "speedup_lo", "speedup_hi", "wins",
               "goal", "verdict", "passed", "cpu_per_mb_a", "cpu_per_mb_b", "sys_per_mb_a",
               "sys_per_mb_b", "ctxt_per_mb_a", "ctxt_per_mb_b")


def write_csv(summaries, path):
    """One row per (cell, cmp), empty where there is no figure."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for s in summaries:
            row = (s.cell, cell_name(s.cell), s.cmp, int(s.control()), s.unit, s.pairs, s.dropped,
                   s.median_a, s.median_b, s.ratio, s.lo, s.hi, *s.speedup(), s.wins, s.goal,
                   s.verdict, int(s.passed), s.cost_a.cpu_per_mb, s.cost_b.cpu_per_mb,
                   s.cost_a.sys_per_mb, s.cost_b.sys_per_mb, s.cost_a.ctxt_per_mb, s.cost_b.ctxt_per_mb)
            w.writerow("" if v is None else v for v in row)


def main(argv):
    """The command line: read, summarize, print, write the files asked for."""
    p = argparse.ArgumentParser(description="A-B-B-A benchmark statistics (METHOD.md)")
    p.add_argument("raw", help="JSON lines, one per run")
    p.add_argument("--table", help="write the text report here too")
    p.add_argument("--csv", help="write one row per cell here, for the plot")
    p.add_argument("--min-pairs", type=int, default=MIN_PAIRS)
    p.add_argument("--resamples", type=int, default=RESAMPLES)
    p.add_argument("--seed", default=SEED)
    args = p.parse_args(argv)
    with open(args.raw, errors="replace") as f:
        runs = read_runs(f)
    summaries = summarize(runs, args.min_pairs, args.resamples, args.seed)
    text = table(summaries, sum(r.warmup for r in runs))
    print(text, end="")
    if args.table:
        with open(args.table, "w") as f:
            f.write(text)
    if args.csv:
        write_csv(summaries, args.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
