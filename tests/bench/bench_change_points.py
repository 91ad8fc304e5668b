"""Speed of the batch change-point scan: 2,000 kernels x 4 devices x 365 nights.

The digest scans every (kernel, device) series of a year at once. Side by side in the same
run: ``change_points_many`` over the whole matrix, the same detector called series by
series (``change_points`` in a loop, timed on a sample and scaled up), and Apache Otava
(e-divisive) on a smaller sample, scaled up.

Run: ``python tests/bench/bench_change_points.py [--kernels 2000] [--devices 4]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rules.stats import change_points, change_points_many


def year_of_nights(series: int, nights: int, seed: int = 0) -> np.ndarray:
    """Percent-of-roof series with 2% noise, clock dips, and a step in one series of ten."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(30, 90, (series, 1)) * (1 + 0.02 * rng.standard_normal((series, nights)))
    dips = rng.random((series, nights)) < 0.02
    values[dips] *= 0.8
    stepped = rng.random(series) < 0.1
    at = rng.integers(30, nights - 5, series)
    for row in np.flatnonzero(stepped):
        values[row, at[row] :] *= 0.9
    return values


def timed(label: str, seconds: float, series: int, total: int) -> str:
    scaled = seconds * total / series
    return f"| {label} | {series:,} | {seconds:.2f} s | {scaled:.1f} s |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--nights", type=int, default=365)
    args = parser.parse_args()
    total = args.kernels * args.devices
    values = year_of_nights(total, args.nights)
    rows = ["| method | series timed | time | for all series |", "|---|---|---|---|"]
    started = time.perf_counter()
    scan = change_points_many(values)
    rows.append(timed("change_points_many (batch)", time.perf_counter() - started, total, total))
    sample = values[:400]
    started = time.perf_counter()
    for row in sample:
        change_points(row)
    rows.append(timed("change_points per series", time.perf_counter() - started, 400, total))
    from otava.analysis import compute_change_points

    started = time.perf_counter()
    for row in values[:40]:
        compute_change_points([float(v) for v in row], window_len=50, max_pvalue=1e-6)
    rows.append(timed("Apache Otava per series", time.perf_counter() - started, 40, total))
    print(f"{total:,} series x {args.nights} nights; {int(scan.is_change.sum()):,} change points")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
