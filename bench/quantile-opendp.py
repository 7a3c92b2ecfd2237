#!/usr/bin/env python3
"""Group cells' percentiles, three ways on the same cells: the table of `make bench`'s group-quantiles step.

`d4h-dev bench group-quantiles --out DIR` reads each cell of the accuracy bench once (its contributors' figures,
clamped to the type's bounds), releases it many times by the server's mechanism (the exponential mechanism over the
type's grid, `QuantileMechanism`) and by the old noisy-histogram percentiles (the baseline), and writes DIR/cells.json
(the clamped figures, exact percentiles and grid of every cell) and DIR/swift.json (those errors). This script adds
the third column: OpenDP's quantile mechanism (`make_private_quantile`, zero-concentrated divergence) on the same
figures, with the same candidates (lower + j·step, j = 0…bins) and the same ρ per percentile as the server's, drawn
--draws times per cell; then prints the comparison as a Markdown table. Per-person figures are read from the file
only; nothing about a person is printed.

For speed, each draw runs OpenDP's own two halves of `make_private_quantile`, `make_quantile_score_candidates` once
per cell and `make_noisy_max` per draw, with the noisy max's scale found by OpenDP's binary search so that the chain's
privacy map gives the same ρ. The script checks that this chain draws as `make_private_quantile` itself does, on one
cell per type (χ² homogeneity of the two samples' candidates), and fails if not.

"No worse than OpenDP": each 95th-percentile error comes with a distribution-free 95 % interval (order statistics of
the draws' errors). The server's mechanism is worse only when its interval lies wholly above OpenDP's, by more than a
relative 1e-9 (TIE_TOLERANCE: the same grid distance computed two ways, 0.20000000000000018 against 0.2, is a tie).
The median's goal: its 95th-percentile error at most twice the mean's.

Exit status: 0 when every goal is met (or with --no-goals, as bench/smoke runs it), 1 when one is missed (the table
says where), 2 on any other failure.
Usage: quantile-opendp.py DIR [--draws N] [--no-goals]
"""

import argparse
import json
import math
import sys
import time

import numpy as np

PERCENTILES = [(0.1, "p10"), (0.5, "p50"), (0.9, "p90")]
# "Worse than OpenDP" needs the new error's interval wholly above OpenDP's by more than this relative
# tolerance: the same grid distance can be computed in two ways (0.20000000000000018 against 0.2).
TIE_TOLERANCE = 1e-9
# The level of the self-check that the two-part chain draws as make_private_quantile does.
CHAIN_LEVEL = 1e-4
CHAIN_DRAWS = 1000


def summary(errors):
    """The 95th percentile (nearest rank, as the Swift bench's) and a distribution-free 95 % interval for it."""
    ordered = np.sort(np.asarray(errors, dtype=np.float64))
    n = len(ordered)
    spread = 1.96 * math.sqrt(n * 0.95 * 0.05)

    def at(rank):
        return float(ordered[min(n - 1, max(0, int(round(rank))))])

    return {"p95": at((n - 1) * 0.95), "low": at((n - 1) * 0.95 - spread), "high": at((n - 1) * 0.95 + spread), "draws": n}


def worse_than(low, high):
    """Whether an interval starting at `low` lies wholly above one ending at `high`, beyond floating point."""
    return low > high and not math.isclose(low, high, rel_tol=TIE_TOLERANCE, abs_tol=0.0)


def candidates_of(cell):
    step = (cell["upper"] - cell["lower"]) / cell["bins"]
    return [cell["lower"] + j * step for j in range(cell["bins"] + 1)]


class OpenDPQuantile:
    """OpenDP's quantile mechanism for one type's grid, one percentile and one ρ."""

    def __init__(self, dp, candidates, alpha, rho):
        self.dp = dp
        self.candidates = candidates
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
        metric = dp.symmetric_distance()
        zcdp = dp.zero_concentrated_divergence()
        self.domain, self.metric = domain, metric
        self.whole = dp.binary_search_chain(
            lambda s: dp.m.make_private_quantile(domain, metric, zcdp, candidates, alpha, s), d_in=1, d_out=rho)
        self.score = dp.t.make_quantile_score_candidates(domain, metric, candidates, alpha)
        self.noisy_max = dp.binary_search_chain(
            lambda s: dp.m.make_noisy_max(self.score.output_domain, self.score.output_metric, zcdp, scale=s, negate=True),
            d_in=self.score.map(1), d_out=rho)
        self.rho = rho

    def scores(self, figures):
        return self.score(figures)

    def draw_index(self, scores):
        return self.noisy_max(scores)


def check_chain(mechanism, figures, draws, stats):
    """χ² homogeneity of make_private_quantile's draws and the chain's on one cell: the same distribution."""
    whole = [mechanism.candidates.index(mechanism.whole(figures)) for _ in range(draws)]
    scores = mechanism.scores(figures)
    chain = [mechanism.draw_index(scores) for _ in range(draws)]
    values = sorted(set(whole) | set(chain))
    table = np.array([[whole.count(v) for v in values], [chain.count(v) for v in values]])
    # Cells expected fewer than 5 times are pooled into one.
    expected = table.sum(axis=0) / 2
    small = expected < 5
    if small.any():
        table = np.column_stack([table[:, ~small], table[:, small].sum(axis=1)])
    if table.shape[1] < 2:
        return 1.0, mechanism.whole.map(1), mechanism.noisy_max.map(mechanism.score.map(1))
    result = stats.chi2_contingency(table, correction=False)
    return float(result.pvalue), mechanism.whole.map(1), mechanism.noisy_max.map(mechanism.score.map(1))


def fmt(value):
    if not math.isfinite(value):
        return "–"
    if value == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(value)))))
    return f"{value:.{min(digits, 6)}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--draws", type=int, default=None, help="OpenDP draws per cell and percentile (default: the Swift bench's)")
    parser.add_argument("--no-goals", action="store_true", help="print the table without judging the goals (exit 0 when missed)")
    arguments = parser.parse_args()
    started = time.monotonic()

    with open(f"{arguments.directory}/cells.json") as file:
        cells = json.load(file)
    with open(f"{arguments.directory}/swift.json") as file:
        run = json.load(file)
    draws = arguments.draws or run["draws"]

    try:
        import opendp.prelude as dp
        from scipy import stats

        dp.enable_features("contrib")
    except ImportError as error:
        print(f"quantile-opendp: OpenDP or scipy is not importable ({error}); install them into var/venv "
              "(bash scripts/privacy-noise-check.sh does)", file=sys.stderr)
        return 2

    mechanisms = {}
    checked = set()
    smallest = {}
    for row in run["rows"]:
        if row["type"] not in smallest or row["peoplePerCell"] < next(
                r["peoplePerCell"] for r in run["rows"] if r["type"] == row["type"] and r["cohort"] == smallest[row["type"]]):
            smallest[row["type"]] = row["cohort"]
    chain_checks = []
    opendp = {}
    for row in run["rows"]:
        group = [c for c in cells if c["type"] == row["type"] and c["cohort"] == row["cohort"]]
        errors = [[], [], []]
        for cell in group:
            figures = [float(x) for x in cell["figures"]]
            for index, (alpha, _) in enumerate(PERCENTILES):
                key = (row["type"], alpha, row["percentileRho"])
                if key not in mechanisms:
                    mechanisms[key] = OpenDPQuantile(dp, candidates_of(cell), alpha, row["percentileRho"])
                mechanism = mechanisms[key]
                # Once per type, on its smallest cohort's first cell (make_private_quantile reads every figure per draw).
                if row["type"] not in checked and alpha == 0.5 and row["cohort"] == smallest[row["type"]]:
                    checked.add(row["type"])
                    p, whole_rho, chain_rho = check_chain(mechanism, figures, CHAIN_DRAWS, stats)
                    chain_checks.append((row["type"], row["cohort"], cell["day"], row["percentileRho"], whole_rho, chain_rho, p))
                scores = mechanism.scores(figures)
                exact = cell["exact"][index]
                candidates = mechanism.candidates
                errors[index] += [abs(candidates[mechanism.draw_index(scores)] - exact) for _ in range(draws)]
        opendp[(row["type"], row["cohort"], row["rho"])] = [summary(e) for e in errors]

    missed = []
    print(f"## Percentiles of group cells: the exponential mechanism, the old noisy histogram and OpenDP "
          f"({run['population']}; day cells of the {run['days']} days to {run['lastDay']}; {run['draws']} releases of each "
          f"cell per method and ρ; Swift {run['seconds']:.0f} s, OpenDP {time.monotonic() - started:.0f} s)")
    print()
    print("95th-percentile absolute error against the exact percentile (and mean) of the same clamped figures, over every "
          "draw of every cell. **new**: the server (`CellMechanism`, exponential mechanism over the type's grid, 15 % of "
          "the cell's ρ per percentile); **old**: the baseline, percentiles read from a noisy histogram of the old bins "
          "with a fifth of ρ (as released until issue 32); **OpenDP**: `make_private_quantile` (zCDP) at the same ρ per "
          "percentile and the same candidates. new ÷ OpenDP is per percentile; \"no worse\" fails only when the new "
          "error's 95 % interval lies wholly above OpenDP's (by more than a relative 1e-9, so floating-point ties count "
          "as equal).")
    print()
    print("| type (grid step) | cohort | people per cell | ρ per cell (per percentile) | mean | p10 new / old / OpenDP "
          "| p50 new / old / OpenDP | p90 new / old / OpenDP | p50 ÷ mean (≤ 2) | new ÷ OpenDP (p10, p50, p90) | no worse than OpenDP |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for row in run["rows"]:
        theirs = opendp[(row["type"], row["cohort"], row["rho"])]
        mean = row["mean"]["p95"]
        columns = []
        ratios = []
        worse = []
        for index, (_, name) in enumerate(PERCENTILES):
            new, old, other = row["new"][index], row["old"][index], theirs[index]
            columns.append(f"{fmt(new['p95'])} / {fmt(old['p95'])} / {fmt(other['p95'])}")
            ratios.append(new["p95"] / other["p95"] if other["p95"] > 0 else (1.0 if new["p95"] == 0 else math.inf))
            if worse_than(new["low"], other["high"]):
                worse.append(name)
        median_ratio = row["new"][1]["p95"] / mean if mean > 0 else math.inf
        label = f"{row['type']} ({fmt(row['step'])})"
        if worse:
            missed.append(f"{label}, {row['cohort']}, ρ {row['rho']:g}: worse than OpenDP at {', '.join(worse)}")
        if median_ratio > 2:
            missed.append(f"{label}, {row['cohort']}, ρ {row['rho']:g}: median error {median_ratio:.2f} × the mean's")
        print(f"| {label} | {row['cohort']} | {row['peoplePerCell']:.0f} | {row['rho']:g} ({row['percentileRho']:g}) | {fmt(mean)} | "
              + " | ".join(columns)
              + f" | {median_ratio:.2f} | {', '.join(f'{r:.2f}' for r in ratios)} | {'yes' if not worse else 'no: ' + ', '.join(worse)} |")
    print()
    print("Time of a release's percentile draws (`SecureNoise`; the bench's cells over and over):")
    print()
    print("| ρ per cell | cells | release | of which the percentiles' draws | per cell |")
    print("|---:|---:|---:|---:|---:|")
    for timing in run["timings"]:
        print(f"| {timing['rho']:g} | {timing['cells']} | {timing['releaseSeconds']:.2f} s | {timing['percentileSeconds']:.2f} s "
              f"| {1000 * timing['releaseSeconds'] / timing['cells']:.1f} ms |")
    print()
    print(f"The chain (score once, noisy max per draw) against `make_private_quantile` itself, {CHAIN_DRAWS:,} draws each:")
    print()
    for type_name, cohort, day, rho, whole_rho, chain_rho, p in chain_checks:
        verdict = "same" if p >= CHAIN_LEVEL and abs(whole_rho - chain_rho) <= 1e-9 + 1e-6 * rho else "DIFFERENT"
        print(f"- {type_name}, {cohort}, {day}, p50 at ρ {rho:g}: privacy maps {whole_rho:.6g} and {chain_rho:.6g}, "
              f"χ² homogeneity p = {p:.3g}: {verdict}")
        if verdict != "same":
            print(f"quantile-opendp: the chain does not draw as make_private_quantile for {type_name}", file=sys.stderr)
            return 2
    if missed:
        print()
        print(("Goals missed (not judged): " if arguments.no_goals else "Goals missed: ") + "; ".join(missed))
        return 0 if arguments.no_goals else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
