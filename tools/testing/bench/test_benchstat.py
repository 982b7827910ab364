# SPDX-License-Identifier: GPL-2.0
"""Host tests of benchstat.py on synthetic runs whose true ratio is
known (run by tools/testing/runner/host-tests.sh):

    python3 -m unittest discover -s tools/testing/bench -p 'test_*.py' -v

Every random draw is seeded, so a result never changes between runs.
"""
import contextlib
import csv
import io
import json
import math
import os
import random
import tempfile
import unittest

import benchstat

BW = "ib_write_bw/65536/4096/1"
LAT = "ib_read_lat/2/1024/1"


def runs_of(cell, cmp, n, ratio, unit="MB/s", sigma=0.05, seed=0, drift=0.0, orders=("AB", "BA")):
    """N A-B or B-A pairs (orders alternate as given) of a cell whose arm A
    measures RATIO times arm B, each run with lognormal noise SIGMA; DRIFT
    scales every value by (1 + DRIFT) per run slot, as a machine whose
    speed creeps during the benchmark would."""
    rng = random.Random(seed)
    runs, slot = [], 0
    for pair in range(n):
        order = orders[pair % len(orders)]
        for arm in order:
            base = 40.0 * (ratio if arm == "A" else 1.0)
            value = base * math.exp(rng.gauss(0, sigma)) * (1 + drift) ** slot
            slot += 1
            runs.append(benchstat.Run(cell, cmp, arm, pair, order, value, unit, cpu_s=2.0,
                                      sys_s=0.5, ctxt=1000, bytes=100 * benchstat.MB, warmup=False))
    return runs


def one(runs, **kw):
    """The only Summary of RUNS (fewer resamples: the tests must be quick)."""
    kw.setdefault("resamples", 2000)
    (s,) = benchstat.summarize(runs, **kw)
    return s


class Intervals(unittest.TestCase):
    def test_known_ratio_inside_interval(self):
        """A bandwidth ratio of 1.3 lies in the interval, which is narrow
        enough with 20 pairs at 5% noise to meet the 1.2 goal."""
        s = one(runs_of(BW, "rrxe/rxe", 20, 1.3))
        self.assertLessEqual(s.lo, 1.3)
        self.assertGreaterEqual(s.hi, 1.3)
        self.assertLess(s.hi / s.lo, 1.1)
        self.assertEqual((s.verdict, s.passed), ("met", True))
        self.assertEqual(s.wins, 1.0)

    def test_coverage(self):
        """Over 40 seeded data sets of 15 pairs (10% noise), the interval
        holds the true ratio 1.3 in at least 32 (nominal: 38)."""
        hits = 0
        for seed in range(40):
            s = one(runs_of(BW, "rrxe/rxe", 15, 1.3, sigma=0.1, seed=seed), resamples=1000)
            hits += s.lo <= 1.3 <= s.hi
        self.assertGreaterEqual(hits, 32)

    def test_latency_orientation(self):
        """rrxe at 0.7x C rxe's latency: A/B is 0.7 and meets the upper
        bound 0.85; the speedup is 1/0.7; A wins every pair."""
        s = one(runs_of(LAT, "rrxe/rxe", 20, 0.7, unit="usec"))
        self.assertLessEqual(s.lo, 0.7)
        self.assertGreaterEqual(s.hi, 0.7)
        self.assertEqual((s.goal, s.verdict), ("hi<=0.85", "met"))
        point, lo, hi = s.speedup()
        self.assertAlmostEqual(point, 1 / s.ratio)
        self.assertEqual((lo, hi), (1 / s.hi, 1 / s.lo))
        self.assertEqual(s.wins, 1.0)

    def test_short_of_goal(self):
        """A true 1.1 is short of 1.2 even though A wins most pairs."""
        s = one(runs_of(BW, "rrxe/rxe", 20, 1.1))
        self.assertEqual((s.verdict, s.passed), ("SHORT", False))
        self.assertGreater(s.wins, 0.5)

    def test_seeded(self):
        """The same runs give the same interval, whatever else is in the file."""
        runs = runs_of(BW, "rrxe/rxe", 15, 1.3, sigma=0.2)
        alone = one(runs)
        with_other = [s for s in benchstat.summarize(runs + runs_of(LAT, "rrxe/rxe", 15, 1.0, unit="usec"),
                                                     resamples=2000) if s.cell == BW]
        self.assertEqual((alone.lo, alone.hi), (with_other[0].lo, with_other[0].hi))


class Controls(unittest.TestCase):
    def test_identical_arms_contain_one(self):
        """C rxe against C rxe: the interval contains 1.0, the control passes."""
        s = one(runs_of(BW, "rxe/rxe", 20, 1.0, sigma=0.1, seed=7))
        self.assertTrue(s.control())
        self.assertLessEqual(s.lo, 1.0)
        self.assertGreaterEqual(s.hi, 1.0)
        self.assertEqual((s.goal, s.verdict, s.passed), ("CI has 1.0", "noise ok", True))

    def test_identical_arms_coverage(self):
        """Over 40 seeded rrxe-against-rrxe latency data sets, at least 34
        intervals contain 1.0."""
        hits = sum(one(runs_of(LAT, "rrxe/rrxe", 15, 1.0, unit="usec", sigma=0.2, seed=seed),
                       resamples=1000).passed for seed in range(40))
        self.assertGreaterEqual(hits, 34)

    def test_biased_control_fails(self):
        """A control whose arms differ by 15% (an unfair setup) is caught."""
        s = one(runs_of(BW, "rxe/rxe", 20, 1.15))
        self.assertEqual((s.verdict, s.passed), ("NOISE: CI excludes 1.0", False))

    def test_abba_cancels_drift(self):
        """Identical arms on a machine that speeds up 2% per run: pairs
        alternating AB and BA keep 1.0 in the interval; AB pairs only
        would not (what alternation is for)."""
        alternating = one(runs_of(BW, "rxe/rxe", 20, 1.0, sigma=0.01, drift=0.02))
        self.assertTrue(alternating.passed)
        one_way = one(runs_of(BW, "rxe/rxe", 20, 1.0, sigma=0.01, drift=0.02, orders=("AB",)))
        self.assertFalse(one_way.passed)


class FewPairs(unittest.TestCase):
    def test_too_few_pairs(self):
        """Five pairs with a clear 1.5: an interval, but no verdict."""
        s = one(runs_of(BW, "rrxe/rxe", 5, 1.5))
        self.assertIsNotNone(s.lo)
        self.assertEqual((s.verdict, s.passed), ("too few pairs (5 < 15)", False))

    def test_one_pair(self):
        """One pair: a ratio, no interval, no verdict; nor for a control."""
        s = one(runs_of(BW, "rrxe/rxe", 1, 1.5))
        self.assertAlmostEqual(s.ratio, 1.5, delta=0.2)
        self.assertIsNone(s.lo)
        self.assertEqual(s.verdict, "too few pairs (1 < 15)")
        c = one(runs_of(LAT, "rxe/rxe", 1, 1.0, unit="usec"))
        self.assertEqual((c.verdict, c.passed), ("too few pairs (1 < 15)", False))

    def test_min_pairs_option(self):
        """--min-pairs lowers the bar for a quick look."""
        s = one(runs_of(BW, "rrxe/rxe", 5, 1.5), min_pairs=5)
        self.assertEqual(s.verdict, "met")

    def test_failed_runs_drop_their_pairs(self):
        """A failed run (null value) and a missing run drop two of 16
        pairs, leaving 14: too few; warm-ups are not pairs."""
        runs = runs_of(BW, "rrxe/rxe", 16, 1.3)
        runs[0] = benchstat.Run(**{**runs[0].__dict__, "value": None})
        del runs[3]
        warm = benchstat.Run(**{**runs[5].__dict__, "pair": 99, "warmup": True})
        s = one(runs + [warm])
        self.assertEqual((s.pairs, s.dropped), (14, 2))
        self.assertEqual(s.verdict, "too few pairs (14 < 15)")
        self.assertIn("warm-up runs discarded: 1; pairs dropped for a failed run: 2",
                      benchstat.table([s], warmups=1))


class Goals(unittest.TestCase):
    def test_goal_per_cell(self):
        """The issue's goals: bandwidth, atomics, pingpong and NVMe >= 1.2
        (lower bound), four QPs >= 1.5, latency <= 0.85 (upper bound)."""
        cases = {"ib_send_bw/4096/1024/1": "lo>=1.2", "ib_atomic_bw:FAA/8/1024/1": "lo>=1.2",
                 "ibv_rc_pingpong/65536/1024/1": "lo>=1.2", "nvme_seq_read/131072/4096/2": "lo>=1.2",
                 "ib_write_bw/65536/1024/4": "lo>=1.5", "ib_send_lat/2/1024/1": "hi<=0.85",
                 "ib_atomic_lat:CAS/8/1024/1": "hi<=0.85"}
        for cell, goal in cases.items():
            self.assertEqual(benchstat.goal_of(cell, "rrxe/rxe")[0], goal, cell)
        self.assertEqual(benchstat.goal_of("ib_send_bw/4096/1024/1", "rrxe/rrxe")[0], "CI has 1.0")

    def test_gso_goals(self):
        """Issue 33: 64 KiB WRITE and SEND at MTU 1024 >= 2.0 against C
        rxe; every cell against gso off: not worse (upper bound >= 1.0)."""
        for cell in ("ib_write_bw/65536/1024/1", "ib_send_bw/65536/1024/1"):
            self.assertEqual(benchstat.goal_of(cell, "rrxe/rxe")[0], "lo>=2.0", cell)
        self.assertEqual(benchstat.goal_of("ib_write_bw/65536/4096/1", "rrxe/rxe")[0], "lo>=1.2")
        text, test = benchstat.goal_of("ib_send_bw/4096/1024/1", "gso/nogso")
        self.assertEqual(text, "hi>=1.0")
        self.assertTrue(test(0.9, 1.02))
        self.assertFalse(test(0.85, 0.97))
        # Any parameter's on/off arm (BENCH_ARM_OFF): the same rule.
        self.assertEqual(benchstat.goal_of(BW, "bulk_home/nobulk_home")[0], "hi>=1.0")
        self.assertFalse(benchstat.is_param_cmp("rrxe/rxe"))


class Input(unittest.TestCase):
    def record(self, **kw):
        r = {"cell": BW, "cmp": "rrxe/rxe", "arm": "A", "pair": 0, "order": "AB", "value": 40.0,
             "unit": "MB/s", "cpu_s": 2.0, "sys_s": 0.5, "ctxt": 1000, "bytes": 1 << 20}
        r.update(kw)
        return json.dumps(r)

    def test_malformed_named_by_line(self):
        """A record without a field, or with an unknown unit, names its line."""
        bad = self.record()
        bad = json.dumps({k: v for k, v in json.loads(bad).items() if k != "ctxt"})
        with self.assertRaisesRegex(ValueError, "line 2: missing ctxt"):
            benchstat.read_runs([self.record(), bad])
        with self.assertRaisesRegex(ValueError, "line 1: .*unit"):
            benchstat.read_runs([self.record(unit="Gb/s")])

    def test_inconsistent_pairs(self):
        """Two runs of one arm in a pair, or a pair's runs in two orders,
        are the producer's bug: an error, not a guess."""
        twice = benchstat.read_runs([self.record(), self.record(value=41.0)])
        with self.assertRaisesRegex(ValueError, "two runs of arm A"):
            benchstat.pair_up(twice)
        orders = benchstat.read_runs([self.record(), self.record(arm="B", order="BA")])
        with self.assertRaisesRegex(ValueError, "AB and BA"):
            benchstat.pair_up(orders)


class Output(unittest.TestCase):
    def test_table_csv_and_costs(self):
        """main() writes the table and one CSV row per comparison, with the
        costs per MB: arm A used 2 CPU seconds and 1000 switches per 100 MB."""
        runs = runs_of(BW, "rrxe/rxe", 15, 1.3) + runs_of(LAT, "rxe/rxe", 15, 1.0, unit="usec")
        with tempfile.TemporaryDirectory() as d:
            raw, txt, out = (os.path.join(d, f) for f in ("raw.jsonl", "t.txt", "c.csv"))
            with open(raw, "w") as f:
                for r in runs:
                    f.write(json.dumps({k: v for k, v in r.__dict__.items() if k != "warmup"}) + "\n")
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                self.assertEqual(benchstat.main([raw, "--table", txt, "--csv", out, "--resamples", "500"]), 0)
            with open(out) as f:
                rows = list(csv.DictReader(f))
            with open(txt) as f:
                text = f.read()
        self.assertEqual([(r["cell"], r["cmp"], r["control"]) for r in rows],
                         [(BW, "rrxe/rxe", "0"), (LAT, "rxe/rxe", "1")])
        self.assertAlmostEqual(float(rows[0]["cpu_per_mb_a"]), 0.02)
        self.assertAlmostEqual(float(rows[0]["ctxt_per_mb_b"]), 10.0)
        self.assertLessEqual(float(rows[0]["ratio_lo"]), float(rows[0]["ratio"]))
        self.assertEqual(printed.getvalue(), text)
        self.assertIn("ib_write_bw 65536B mtu4096", text)
        self.assertIn("goals met: 1 of 1 cells", text)
        self.assertIn("noise-floor controls containing 1.0: 1 of 1 (0 with too few pairs", text)


if __name__ == "__main__":
    unittest.main()
