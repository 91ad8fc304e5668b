"""Device changes: kernels correctly called unchanged or not-kept-up, against the naive ratio.

Synthetic fleets where the truth is known. For each real catalog pair (A100 -> H100,
V100 -> A100, L4 -> L40S, RTX 3090 -> RTX 4090) and seed, 500 kernels get a work (memory-bound
streams, tensor-core GEMMs, fp32 kernels and some near the ridge, so the ridge moves between
the cards) and a true percent of roof on the old card (40-90%). A fifth of them do not keep
up with the new card: their percent of roof falls 20-50%. The others keep it up to what
cards differ by: compute-bound kernels lose 0-12% (the best BF16 GEMM reaches 86.9% of the
datasheet peak on an A100, 80.3% on an H100, 77.6% on a B200: the MAMF table of
stas00/ml-engineering), memory-bound ones -5..+3%, each with a 4% per-kernel spread.

The old card has 30 nights: per-kernel noise log-uniform 0.5-8% (lognormal), a per-night
clock wobble of 1.5% shared by every kernel, and the odd dip (1% of nights 5-20% slower).
The new card is one PR measurement: the same per-kernel noise and a clock offset of the new
runner drawn once per fleet (2.5%: cards of one model differ by 5% and more on one node).

Called side by side on the same fleets:

* **roofguard**: ``rules.device_levels`` on the old card, ``rules.scale`` of the new time
  (the whole roofline of the old work on both roofs), ``rules.keeping`` with the shipped
  tolerance (15%);
* **binding ratio**: the same, the expected ratio being the ratio of the old binding
  resource's peak or bandwidth alone (what a one-resource rule would do: wrong where the
  ridge moved);
* **naive ratio**: no roofs, time only: a kernel did not keep up when it got slower
  (new / old median time > 1.03), the best a tracker without hardware knowledge can say per
  kernel;
* **fleet-relative ratio**: no roofs, but the fleet's median time ratio as the expectation:
  behind when a kernel's ratio is 15% worse than the median (mixed regimes defeat it: a GEMM
  that sped up like the memory-bound kernels did not keep up with the tensor cores).

Plus the tolerance sweep of roofguard (5-25%) that chose 15%.

Run: ``python tests/bench/bench_devices.py [--kernels 500] [--seeds 3] [--markdown FILE]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tables import publish

from rules import (
    HISTORY_COLUMNS,
    DeviceLevel,
    Keeping,
    Roof,
    builtin_catalog,
    device_levels,
    keeping,
    scale,
)

PAIRS = (
    ("A100-SXM4-80GB", "H100-SXM5", "tensor_bf16"),
    ("V100-SXM2-32GB", "A100-SXM4-80GB", "tensor_fp16"),
    ("L4", "L40S", "tensor_bf16"),
    ("RTX-3090", "RTX-4090", "tensor_bf16"),
)
NIGHTS = 30
BEHIND_SHARE = 0.2
TOLERANCES = (0.05, 0.10, 0.15, 0.20, 0.25)


@dataclass(frozen=True)
class Fleet:
    """Kernels' work, true percent of roof on both cards and the truth, and their times."""

    flops: np.ndarray  # total FLOPs at the kernel's precision (0: fp32-free copy)
    precision: list[str]
    dram: np.ndarray
    old_pct: np.ndarray
    new_pct: np.ndarray
    behind: np.ndarray  # the truth: did not keep up
    history: pd.DataFrame  # the old card's nights (HISTORY_COLUMNS)
    new_time: np.ndarray  # one PR measurement per kernel on the new card
    levels: dict[str, DeviceLevel]  # the old card's levels (rules.device_levels)


def roof(name: str) -> Roof:
    return builtin_catalog().lookup(name).roof()


def roof_time(flops: float, precision: str, dram: float, card: Roof) -> tuple[float, str]:
    """T_roof of one kernel's work on ``card`` and what binds it."""
    compute = flops / card.peak_flop_per_s[precision] if flops else 0.0
    memory = dram / card.bandwidth_byte_per_s["dram"]
    return (compute, precision) if compute >= memory else (memory, "dram")


def works(
    rng: np.random.Generator, n: int, tensor: str
) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Memory-bound streams, tensor GEMMs, fp32 kernels; intensities spread over the ridges."""
    dram = rng.uniform(2e8, 4e9, n)
    kind = rng.choice(["stream", "gemm", "fp32"], size=n, p=[0.45, 0.4, 0.15])
    intensity = np.where(
        kind == "stream",
        10 ** rng.uniform(-1.0, 1.3, n),
        np.where(kind == "gemm", 10 ** rng.uniform(1.5, 3.0, n), 10 ** rng.uniform(0.3, 1.6, n)),
    )
    precision = [tensor if k == "gemm" else "fp32" for k in kind]
    return intensity * dram, precision, dram


def kept_factor(rng: np.random.Generator, compute_bound: bool) -> float:
    """How much of its percent of roof a kernel that kept up keeps (cards differ this much)."""
    base = rng.uniform(0.88, 1.0) if compute_bound else rng.uniform(0.95, 1.03)
    return float(base * rng.lognormal(0.0, 0.04))


def _history(
    rng: np.random.Generator, t_roof: np.ndarray, binding: list[str], pct: np.ndarray, fleet
) -> tuple[pd.DataFrame, np.ndarray]:
    flops, precision, dram, old = fleet
    n = t_roof.size
    noise = 10 ** rng.uniform(np.log10(0.005), np.log10(0.08), n)
    rows = []
    for night in range(NIGHTS):
        clock = rng.normal(1.0, 0.015) * (rng.uniform(1.05, 1.2) if rng.random() < 0.01 else 1.0)
        times = t_roof / (pct / 100) * clock * rng.lognormal(0.0, noise)
        for i in range(n):
            peak_time = flops[i] / old.peak_flop_per_s[precision[i]] if flops[i] else np.nan
            rows.append(
                (
                    night,
                    f"{night:04d}",
                    pd.Timestamp("2026-01-01", tz="UTC") + pd.Timedelta(days=night),
                    "nightly",
                    f"k{i}",
                    f"k{i}",
                    old.device,
                    "datasheet",
                    100 * t_roof[i] / times[i],
                    None,
                    binding[i],
                    times[i],
                    flops[i],
                    peak_time,
                    dram[i],
                    np.nan,
                    np.nan,
                    None,
                    None,
                    None,
                    True,
                )
            )
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS)), noise


def make_fleet(rng: np.random.Generator, n: int, old: Roof, new: Roof, tensor: str) -> Fleet:
    flops, precision, dram = works(rng, n, tensor)
    placed_old = [roof_time(f, p, d, old) for f, p, d in zip(flops, precision, dram, strict=True)]
    placed_new = [roof_time(f, p, d, new) for f, p, d in zip(flops, precision, dram, strict=True)]
    t_old = np.array([t for t, _ in placed_old])
    t_new = np.array([t for t, _ in placed_new])
    old_pct = rng.uniform(40, 90, n)
    behind = rng.random(n) < BEHIND_SHARE
    kept = np.array([kept_factor(rng, b != "dram") for _, b in placed_old])
    new_pct = np.where(behind, old_pct * (1 - rng.uniform(0.2, 0.5, n)), old_pct * kept)
    history, noise = _history(
        rng, t_old, [b for _, b in placed_old], old_pct, (flops, precision, dram, old)
    )
    runner = rng.normal(1.0, 0.025)
    new_time = t_new / (new_pct / 100) * runner * rng.lognormal(0.0, noise)
    levels = device_levels(history)
    return Fleet(flops, precision, dram, old_pct, new_pct, behind, history, new_time, levels)


def call_roofguard(fleet: Fleet, old: Roof, new: Roof, tolerance: float) -> np.ndarray:
    levels = fleet.levels
    calls = []
    for i, t in enumerate(fleet.new_time):
        scaled = scale(levels[f"k{i}"], old, new, [float(t)])
        calls.append(scaled is not None and keeping(scaled, tolerance=tolerance) == Keeping.BEHIND)
    return np.array(calls)


def call_binding_ratio(fleet: Fleet, old: Roof, new: Roof, tolerance: float) -> np.ndarray:
    levels = fleet.levels
    calls = []
    for i, t in enumerate(fleet.new_time):
        level = levels[f"k{i}"]
        b = level.work.binding or "dram"
        table_old = old.peak_flop_per_s if b in old.peak_flop_per_s else old.bandwidth_byte_per_s
        table_new = new.peak_flop_per_s if b in new.peak_flop_per_s else new.bandwidth_byte_per_s
        expected = table_old[b] / table_new[b]
        judged = level.percent * expected / (float(t) / level.time_s)
        change, z = judged / level.percent - 1, level.z(judged)
        calls.append(change <= -tolerance and z <= -4.0)
    return np.array(calls)


def _ratios(fleet: Fleet) -> np.ndarray:
    medians = fleet.history.groupby("kernel_key")["time_s"].median()
    old = np.array([medians[f"k{i}"] for i in range(fleet.new_time.size)])
    return fleet.new_time / old


def call_naive(fleet: Fleet, *_: object) -> np.ndarray:
    return _ratios(fleet) > 1.03


def call_fleet_relative(fleet: Fleet, *_: object) -> np.ndarray:
    ratios = _ratios(fleet)
    return ratios > np.median(ratios) * 1.15


Method = Callable[[Fleet, Roof, Roof, float], np.ndarray]
METHODS: tuple[tuple[str, Method], ...] = (
    ("roofguard (whole roofline, 15%)", call_roofguard),
    ("binding-resource ratio (15%)", call_binding_ratio),
    ("naive time ratio (slower than before)", call_naive),
    ("fleet-relative time ratio (15% worse than the median)", call_fleet_relative),
)


@dataclass
class Score:
    right: int = 0
    total: int = 0
    found: int = 0
    behind: int = 0
    false: int = 0
    kept: int = 0

    def add(self, calls: np.ndarray, truth: np.ndarray) -> None:
        self.right += int(np.sum(calls == truth))
        self.total += truth.size
        self.found += int(np.sum(calls & truth))
        self.behind += int(np.sum(truth))
        self.false += int(np.sum(calls & ~truth))
        self.kept += int(np.sum(~truth))

    def row(self) -> str:
        return (
            f"{100 * self.right / self.total:.1f}% | {100 * self.found / self.behind:.1f}% | "
            f"{100 * self.false / self.kept:.1f}%"
        )


def run(kernels: int, seeds: int) -> str:
    lines = [
        "| pair | method | correct | not-kept-up found | kept-up called behind |",
        "|---|---|--:|--:|--:|",
    ]
    sweep = {t: Score() for t in TOLERANCES}
    for pair, (old_name, new_name, tensor) in enumerate(PAIRS):
        old, new = roof(old_name), roof(new_name)
        scores = {name: Score() for name, _ in METHODS}
        for seed in range(1, seeds + 1):
            rng = np.random.default_rng([seed, pair])
            fleet = make_fleet(rng, kernels, old, new, tensor)
            for name, method in METHODS:
                scores[name].add(method(fleet, old, new, 0.15), fleet.behind)
            for tolerance, score in sweep.items():
                score.add(call_roofguard(fleet, old, new, tolerance), fleet.behind)
        for name, score in scores.items():
            lines.append(f"| {old_name} → {new_name} | {name} | {score.row()} |")
    lines += [
        "",
        "| roofguard tolerance | correct | not-kept-up found | kept-up called behind |",
        "|--:|--:|--:|--:|",
    ]
    lines += [f"| {100 * t:.0f}% | {s.row()} |" for t, s in sweep.items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=500)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    publish(lambda: run(args.kernels, args.seeds), args.markdown)


if __name__ == "__main__":
    main()
