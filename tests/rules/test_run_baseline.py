"""The run's GPU time at baseline is the level its totals hold now, not the window's median."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from factories import make_kernel, make_run

from rules.config import RulesConfig
from rules.frames import history_from_runs
from rules.hardware import builtin_catalog
from rules.timing import run_baseline

START = datetime(2026, 11, 1, 2, tzinfo=UTC)


def _history(times_ms: list[float]):
    roof = builtin_catalog().lookup("A100-SXM4-80GB").roof()
    runs = [
        make_run(
            commit=f"c{n:06d}",
            timestamp=START + timedelta(days=n),
            kernels=[make_kernel("gemm", time_s=t / 1e3), make_kernel("axpy", time_s=1e-3)],
        )
        for n, t in enumerate(times_ms)
    ]
    return history_from_runs(runs, roof)


def test_a_slowdown_main_kept_is_the_baseline_a_pr_reads() -> None:
    """Ten nights at 74 ms, then four at 307 ms: a PR at 308 ms is not 1.5x slower."""
    noise = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0]
    base = run_baseline(
        _history([73 * f for f in noise] + [306 * f for f in noise[:4]]), RulesConfig()
    )
    assert base.time_s == pytest.approx(0.307 + 0.001, rel=0.01)
    assert (base.n, base.runs) == (4, 14) and base.commits == ("c000010", "c000013")


def test_a_stable_history_is_one_level() -> None:
    base = run_baseline(_history([73.0, 74.0, 72.0, 73.5, 73.0]), RulesConfig())
    assert base.time_s == pytest.approx(0.074) and (base.n, base.runs) == (5, 5)
