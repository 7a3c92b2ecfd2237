#!/usr/bin/env python3
"""Cross-check of the noise samplers (Sources/BrokerDomain/Privacy/Noise) from outside Swift.

The discrete Gaussian:

Runs `d4h-dev privacy noise` for a few variances and checks its draws
  1. against the exact, normalised pmf of N_Z(0, σ²), P(y) = exp(−y²/(2σ²)) / Σ_z exp(−z²/(2σ²)), computed here
     independently of the Swift code: Pearson's χ² over cells of about equal probability, and a KS-type test
     (the largest gap between the empirical and the exact CDF at the integers);
  2. when `opendp` is importable, against OpenDP's own exact discrete Gaussian sampler: a two-sample KS test and
     a χ² test of homogeneity on the same cells.

The exponential mechanism (`ExponentialMechanism`, the percentiles' sampler): `d4h-dev privacy exponential` for a few
score vectors — a quantile's V (|5·Bⱼ − 5·Aⱼ| over a small histogram), ties, a single candidate, a steep one where all
but a few weights are below 10^−20 — against the exact pmf p(i) ∝ exp(−(sᵢ − s_min)·numerator/denominator) computed
here: Pearson's χ² over the candidates expected at least 5 times (the rest pooled into one cell), and no draw of a
candidate whose probability is below 10^−12. Then `QuantileMechanism` end to end (`d4h-dev privacy quantile`): p50
and p90 of known histograms at a given ρ, against the distribution computed here from the histogram and ρ alone
(scores in tenths, Δ = max(q, 1 − q), ε = ⌊√(8ρ)·10⁶⌋/10⁶, weights exp(−ε·score/(2Δ))).

The Swift draws come from fixed seeds (`--seed`), so that part is deterministic: a seed that passes passes on every
run. Two checks cannot be seeded — one run of the production source (SecureNoise, the operating system's CSPRNG)
and OpenDP, which draws from the operating system too — so they use a level of 10^−6: a correct sampler fails them
once in a million runs (the exponential mechanism's SecureNoise run is one of them). Exits 0 when every check passes,
1 otherwise.

Usage: privacy-noise-check.py [--d4h-dev PATH] [--draws N] [--exponential-draws N]   (D4H_DEV in the environment also names the executable)
"""

import argparse
import math
import os
import subprocess
import sys
import time

import numpy as np
from scipy import stats

# (variance, seed): σ² = 1 is the coarsest lattice, 10^10 takes every product into 128 bits (2σ²t² ≈ 2·10^30).
SEEDED_RUNS = [(1, 11), (2, 12), (10, 13), (1000, 14), (10**10, 15)]
# The production source, unseeded.
SECURE_VARIANCE = 1000
# Levels: seeded checks are deterministic, so their level only says how unlucky a newly chosen seed could be;
# the unseeded ones are drawn afresh on every run, so theirs is the false-alarm rate of the check itself.
SEEDED_LEVEL = 1e-5
UNSEEDED_LEVEL = 1e-6
# Target number of cells for χ²: equal-probability cells, but never less than one integer, so a small σ² gets one
# cell per likely value.
CELLS = 100


# The exponential mechanism: (label, scores, numerator, denominator, seed).
V_HISTOGRAM = [2, 5, 9, 14, 20, 14, 9, 5, 2, 1]


def quantile_scores(histogram, tenths):
    """Scores in tenths of a rank, as QuantileMechanism computes them: histogram[j] counts the figures at candidate j;
    candidate j scores |(10 − tenths)·below − tenths·above|, those at it counting in neither."""
    people = sum(histogram)
    below, scores = 0, []
    for count in histogram:
        above = people - below - count
        scores.append(abs((10 - tenths) * below - tenths * above))
        below += count
    return scores


EXPONENTIAL_RUNS = [
    ("V (median of a 10-bin histogram)", quantile_scores(V_HISTOGRAM, 5), 1, 30, 21),
    ("ties", [3, 3, 3, 7, 3, 10, 7, 3], 1, 4, 22),
    ("one candidate", [42], 7, 3, 23),
    ("steep", [0, 1, 3, 50, 200, 10**6, 80, 2, 10**12, 5000] + [1000 + i for i in range(40)], 1, 1, 24),
]
SECURE_EXPONENTIAL = ("V, SecureNoise", quantile_scores(V_HISTOGRAM, 5), 1, 30)
# QuantileMechanism end to end: (label, histogram, percentile, ρ in millionths, seed).
QUANTILE_RUNS = [
    ("p50 of 994 normal-like people over 200 bins at ρ 0.0015", [int(1000 * (math.erf((j - 99) / 40 / math.sqrt(2)) - math.erf((j - 100) / 40 / math.sqrt(2))) / 2 + 0.5)
                                                        for j in range(200)], 50, 1500, 31),
    ("p90 of a skewed 12-bin histogram at ρ 0.0002", [0, 3, 40, 90, 60, 30, 20, 12, 8, 5, 2, 1], 90, 200, 32),
]
# Probabilities below this must never be drawn in the runs' sizes (a draw there is a sampler bug, not bad luck).
NEGLIGIBLE = 1e-12


def exponential_pmf(scores, numerator, denominator):
    """The exact pmf ∝ exp(−(s − s_min)·numerator/denominator), in floating point (far within χ²'s resolution)."""
    best = min(scores)
    exponents = np.array([-(s - best) * numerator / denominator for s in scores], dtype=np.float64)
    weights = np.exp(exponents)
    return weights / weights.sum()


def quantile_pmf(histogram, tenths, rho_micro):
    """The distribution `QuantileMechanism` should draw from, computed from the histogram and ρ alone."""
    epsilon_micro = math.isqrt(8 * rho_micro * 10**6)
    sensitivity = max(tenths, 10 - tenths)
    return exponential_pmf(quantile_scores(histogram, tenths), epsilon_micro, 2 * sensitivity * 10**6)


def draw_indices(d4h, arguments, count, seed=None):
    arguments = [d4h, "privacy", *arguments, "--count", str(count)]
    if seed is not None:
        arguments += ["--seed", str(seed)]
    run = subprocess.run(arguments, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise SystemExit(f"privacy-noise-check: {' '.join(arguments)} failed ({run.returncode}): {run.stderr.strip()}")
    values = np.array(run.stdout.split(), dtype=np.int64)
    if len(values) != count:
        raise SystemExit(f"privacy-noise-check: expected {count} draws, got {len(values)}")
    return values


def against_pmf(report, label, values, pmf, level):
    """χ² over the candidates expected at least 5 times, the others pooled; and none drawn of negligible ones."""
    n = len(values)
    if values.min() < 0 or values.max() >= len(pmf):
        report.check(label, "indices in range", f"{values.min()}…{values.max()}", 0.0, level)
        return
    observed = np.bincount(values, minlength=len(pmf))
    impossible = int(observed[pmf < NEGLIGIBLE].sum())
    report.check(label, f"draws of candidates below {NEGLIGIBLE:g}", impossible, 1.0 if impossible == 0 else 0.0, level)
    expected = pmf * n
    big = expected >= 5
    cells_observed, cells_expected = list(observed[big]), list(expected[big])
    if (~big).any():
        rest_observed, rest_expected = observed[~big].sum(), expected[~big].sum()
        if rest_expected >= 5 or not cells_expected:
            cells_observed.append(rest_observed)
            cells_expected.append(rest_expected)
        else:
            # Too little mass to stand alone: pooled with the least likely of the others.
            smallest = int(np.argmin(cells_expected))
            cells_observed[smallest] += rest_observed
            cells_expected[smallest] += rest_expected
    if len(cells_expected) < 2:
        # One candidate holds (nearly) everything: every draw must be it.
        only = int(np.argmax(pmf))
        stray = int(n - observed[only])
        report.check(label, "draws of the only likely candidate", f"{n - stray}/{n}", 1.0 if stray == 0 else 0.0, level)
        return
    cells_expected = np.array(cells_expected) * n / np.sum(cells_expected)
    chi2, p = stats.chisquare(cells_observed, cells_expected)
    report.check(label, f"χ² on {len(cells_expected) - 1} d.f.", f"{chi2:.1f}", p, level)


class ExactDiscreteGaussian:
    """The pmf and CDF of N_Z(0, σ²) on −reach…reach; beyond 12σ the mass is below 10^−32."""

    def __init__(self, variance):
        self.variance = variance
        sigma = math.sqrt(variance)
        self.reach = int(math.ceil(12 * sigma)) + 10
        self.support = np.arange(-self.reach, self.reach + 1, dtype=np.int64)
        weights = np.exp(-(self.support.astype(np.float64) ** 2) / (2.0 * variance))
        self.pmf = weights / weights.sum()
        self.cdf = np.cumsum(self.pmf)
        self.cdf[-1] = 1.0

    def cells(self, draws):
        """Cell edges (upper ends, inclusive, as values) of about equal probability, each expected ≥ 5 times."""
        quantiles = np.arange(1, CELLS) / CELLS
        uppers = np.unique(np.append(self.support[np.searchsorted(self.cdf, quantiles)], self.reach))
        # Merge any cell expected fewer than 5 times into the next one.
        merged, lower_cdf = [], 0.0
        for upper in uppers:
            mass = self.cdf[upper + self.reach] - lower_cdf
            if mass * draws >= 5 or upper == self.reach:
                merged.append(upper)
                lower_cdf = self.cdf[upper + self.reach]
        if len(merged) > 1 and (1.0 - self.cdf[merged[-2] + self.reach]) * draws < 5:
            merged.pop(-2)
        return np.array(merged, dtype=np.int64)

    def cell_probabilities(self, uppers):
        at = self.cdf[uppers + self.reach]
        return np.diff(np.concatenate(([0.0], at)))


def cell_counts(values, uppers):
    """How many values fall in each cell; the first cell takes everything below, the last everything above."""
    index = np.searchsorted(uppers, values, side="left")
    return np.bincount(np.minimum(index, len(uppers) - 1), minlength=len(uppers))


def ks_distance(values, exact):
    """max over integers y of |F_n(y) − F(y)|. Both CDFs are step functions that jump only at integers, so the
    integers of the support are the only places to look (a draw beyond the support counts as a gap of its own)."""
    inside = np.clip(values, -exact.reach, exact.reach)
    counts = np.bincount(inside + exact.reach, minlength=len(exact.support))
    empirical = np.cumsum(counts) / len(values)
    outside = np.count_nonzero(np.abs(values) > exact.reach) / len(values)
    return max(float(np.max(np.abs(empirical - exact.cdf))), outside)


def draw_d4h(d4h, variance, count, seed=None):
    arguments = [d4h, "privacy", "noise", "--variance", str(variance), "--count", str(count)]
    if seed is not None:
        arguments += ["--seed", str(seed)]
    run = subprocess.run(arguments, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise SystemExit(f"privacy-noise-check: {' '.join(arguments)} failed ({run.returncode}): {run.stderr.strip()}")
    values = np.array(run.stdout.split(), dtype=np.int64)
    if len(values) != count:
        raise SystemExit(f"privacy-noise-check: expected {count} draws, got {len(values)}")
    return values


def draw_opendp(dp, variance, count):
    # OpenDP takes the standard deviation as a float and samples exactly for the rational that float is; √σ² as a
    # double squares back to σ² within 10^−16 relative, far below what any test here can see.
    measurement = dp.m.make_gaussian(
        dp.vector_domain(dp.atom_domain(T="i64"), size=count), dp.l2_distance(T="i64"), scale=math.sqrt(variance))
    return np.array(measurement([0] * count), dtype=np.int64)


class Report:
    def __init__(self):
        self.failures = []

    def check(self, label, name, statistic, p_value, level):
        passed = p_value >= level
        print(f"  {'ok  ' if passed else 'FAIL'} {label}: {name} = {statistic}, p = {p_value:.3g} (level {level:g})")
        if not passed:
            self.failures.append(f"{label}: {name}")


def against_exact(report, label, values, exact, level):
    n = len(values)
    uppers = exact.cells(n)
    observed = cell_counts(values, uppers)
    expected = exact.cell_probabilities(uppers) * n
    chi2, p = stats.chisquare(observed, expected)
    report.check(label, f"χ² on {len(uppers) - 1} d.f.", f"{chi2:.1f}", p, level)
    distance = ks_distance(values, exact)
    # kstwo is the exact null law of D for a continuous distribution; for a discrete one D is stochastically smaller,
    # so this p-value is conservative (it can only overstate the evidence for the sampler, never fail it unfairly).
    report.check(label, "KS D", f"{distance:.5f}", float(stats.kstwo.sf(distance, n)), level)
    mean, variance = float(np.mean(values)), float(np.mean(values.astype(np.float64) ** 2))
    print(f"       mean {mean:.4g}, mean square {variance:.6g} (σ² = {exact.variance})")


def against_opendp(report, label, values, reference, exact, level):
    ks = stats.ks_2samp(values, reference)
    report.check(label, "two-sample KS D", f"{ks.statistic:.5f}", float(ks.pvalue), level)
    uppers = exact.cells(min(len(values), len(reference)))
    table = np.vstack([cell_counts(values, uppers), cell_counts(reference, uppers)])
    table = table[:, table.sum(axis=0) > 0]
    result = stats.chi2_contingency(table, correction=False)
    report.check(label, f"χ² homogeneity on {result.dof} d.f.", f"{result.statistic:.1f}", float(result.pvalue), level)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d4h-dev", dest="d4h", default=os.environ.get("D4H_DEV", ".build/debug/d4h-dev"))
    parser.add_argument("--draws", type=int, default=200_000)
    parser.add_argument("--exponential-draws", type=int, default=100_000)
    arguments = parser.parse_args()
    started = time.monotonic()

    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        print(f"privacy-noise-check: comparing with OpenDP {getattr(dp, '__version__', '')}".rstrip())
    except ImportError:
        dp = None
        print("privacy-noise-check: opendp is not importable; skipping the comparison with OpenDP")

    report = Report()
    n = arguments.draws
    for variance, seed in SEEDED_RUNS:
        exact = ExactDiscreteGaussian(variance)
        print(f"σ² = {variance} ({n} draws, seed {seed})")
        values = draw_d4h(arguments.d4h, variance, n, seed)
        against_exact(report, f"σ² = {variance}, seeded", values, exact, SEEDED_LEVEL)
        if dp is not None:
            against_opendp(report, f"σ² = {variance}, vs OpenDP", values, draw_opendp(dp, variance, n), exact,
                           UNSEEDED_LEVEL)

    print(f"σ² = {SECURE_VARIANCE} ({n} draws, SecureNoise: the operating system's CSPRNG)")
    against_exact(report, f"σ² = {SECURE_VARIANCE}, SecureNoise",
                  draw_d4h(arguments.d4h, SECURE_VARIANCE, n), ExactDiscreteGaussian(SECURE_VARIANCE), UNSEEDED_LEVEL)

    m = arguments.exponential_draws
    for label, scores, numerator, denominator, seed in EXPONENTIAL_RUNS:
        print(f"exponential mechanism, {label}: {len(scores)} candidates, rate {numerator}/{denominator} ({m} draws, seed {seed})")
        values = draw_indices(arguments.d4h, ["exponential", "--scores", ",".join(map(str, scores)), "--numerator", str(numerator),
                                              "--denominator", str(denominator)], m, seed)
        against_pmf(report, f"exponential, {label}, seeded", values, exponential_pmf(scores, numerator, denominator), SEEDED_LEVEL)
    label, scores, numerator, denominator = SECURE_EXPONENTIAL
    secure_draws = max(1, m // 5)
    print(f"exponential mechanism, {label} ({secure_draws} draws, SecureNoise: the operating system's CSPRNG)")
    values = draw_indices(arguments.d4h, ["exponential", "--scores", ",".join(map(str, scores)), "--numerator", str(numerator),
                                          "--denominator", str(denominator)], secure_draws)
    against_pmf(report, f"exponential, {label}", values, exponential_pmf(scores, numerator, denominator), UNSEEDED_LEVEL)
    for label, histogram, percentile, rho_micro, seed in QUANTILE_RUNS:
        print(f"QuantileMechanism, {label} ({m} draws, seed {seed})")
        values = draw_indices(arguments.d4h, ["quantile", "--histogram", ",".join(map(str, histogram)), "--percentile", str(percentile),
                                              "--rho-micro", str(rho_micro)], m, seed)
        against_pmf(report, f"quantile, {label}, seeded", values, quantile_pmf(histogram, percentile // 10, rho_micro), SEEDED_LEVEL)

    elapsed = time.monotonic() - started
    if report.failures:
        print(f"privacy-noise-check: {len(report.failures)} check(s) failed in {elapsed:.1f} s: "
              + "; ".join(report.failures), file=sys.stderr)
        return 1
    print(f"privacy-noise-check: passed in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
