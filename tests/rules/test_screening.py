"""The screens over every kernel at once never clear a kernel the exact test would flag."""

from __future__ import annotations

import numpy as np

from rules.screening import may_change
from rules.stats import (
    CompareOptions,
    GateOptions,
    Level,
    OwnDips,
    compare_to_baseline,
    judge_measurement,
    judge_measurements,
)


def _fleet(seed: int) -> tuple[list[np.ndarray], list[float]]:
    """Baselines of mixed lengths and noise, and values from flat to far off (a few odd)."""
    rng = np.random.default_rng(seed)
    baselines, currents = [], []
    for i in range(400):
        n = int(rng.choice([0, 1, 4, 5, 14, 30, 90]))
        base = 10 * rng.lognormal(0, rng.choice([0.0, 0.01, 0.05]), n)
        if n and i % 37 == 0:
            base[0] = np.inf
        baselines.append(base)
        value = 10 * float(rng.choice([1.0, 0.9, 0.99, 1.3, 0.5]))
        currents.append(np.inf if i % 53 == 0 else value)
    return baselines, currents


def test_the_screen_keeps_every_kernel_the_comparison_flags() -> None:
    opts = CompareOptions()
    for seed in range(3):
        baselines, currents = _fleet(seed)
        kept = may_change(baselines, currents, opts)
        flagged = [
            cmp.regressed or cmp.improved
            for cmp in (
                compare_to_baseline(b, c, options=opts)
                for b, c in zip(baselines, currents, strict=True)
            )
        ]
        assert all(k for k, f in zip(kept, flagged, strict=True) if f)
        assert sum(flagged) >= 50  # the fleet exercises the bars
        assert sum(kept) < len(kept) - 100  # and the screen clears most of the rest


def test_the_pr_gate_judges_a_fleet_as_it_judges_each_kernel() -> None:
    """``judge_measurements`` (quiet kernels at once) equals ``judge_measurement`` one by one."""
    rng = np.random.default_rng(5)
    levels = [
        Level(float(v), float(v) * float(rng.choice([0.0, 0.005, 0.02])), n, 0, 0.2, 20)
        for v, n in zip(
            rng.choice([0.0, 1.0, 50.0, np.nan], 600), rng.integers(0, 30, 600), strict=True
        )
    ]
    steps = rng.choice([1.0, 1.001, 0.97, 0.9, 1.2, 0.5, np.inf], len(levels))
    currents = [float(lv.level * s if lv.level else s) for lv, s in zip(levels, steps, strict=True)]
    reruns = [(c * 0.9,) if i % 7 == 0 else () for i, c in enumerate(currents)]
    dips = [OwnDips(0.01, 40.0, 60.0) if i % 2 else None for i in range(len(levels))]
    for mode in ("single", "screen", "confirm"):
        for up in (True, False):
            opts = GateOptions(family_size=len(levels))
            fleet = judge_measurements(
                levels,
                currents,
                reruns,
                higher_is_better=up,
                mode=mode,
                options=opts,
                own_dips=dips,
            )
            each = [
                judge_measurement(
                    lv, c, r, higher_is_better=up, mode=mode, options=opts, own_dips=d
                )
                for lv, c, r, d in zip(levels, currents, reruns, dips, strict=True)
            ]
            assert repr(fleet) == repr(each)
            assert sum(j.regressed or j.suspect for j in each) >= 20  # the bars are exercised
