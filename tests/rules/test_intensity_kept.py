"""A DRAM intensity the base branch changed and kept is the baseline's intensity now.

Main lost a GEMM's fusion (500 → 2 FLOP/B). Against the majority of its window, every PR of
the next week was warned `intensity-shift` for main's loss at the same time as main.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from factories import make_kernel, night_run

from rules import RuleContext, builtin_catalog, evaluate
from rules.catalog.intensity_shift import kept_levels, since_kept_change
from rules.frames import history_from_runs

START = datetime(2026, 11, 1, 2, tzinfo=UTC)
FLOPS = 1e12
A100 = builtin_catalog().lookup("A100-SXM4-80GB").roof()
DRAM = A100.bandwidth_byte_per_s["dram"]


def _gemm_run(nbytes: float, night: int, kind: str = "nightly"):
    time_s = FLOPS / 2 / DRAM / 0.8
    kernel = make_kernel("gemm", flops={"fp32": FLOPS}, dram_bytes=nbytes, time_s=time_s)
    return night_run(kernel, night, start=START, kind=kind)


def _shift_findings(broken_nights: int) -> list[str]:
    """intensity-shift's messages on a PR (2 FLOP/B) after 9 fused nights and the broken ones."""
    nights = [FLOPS / 500] * 9 + [FLOPS / 2] * broken_nights
    history = [_gemm_run(nbytes, night) for night, nbytes in enumerate(nights)]
    ctx = RuleContext(
        run=_gemm_run(FLOPS / 2, len(nights), kind="pr"),
        roof=A100,
        history=history_from_runs(history, A100),
    )
    return [f.message for f in evaluate(ctx).verdict.findings if f.rule == "intensity-shift"]


def test_a_pr_after_main_kept_the_loss_is_not_warned_for_it() -> None:
    assert _shift_findings(broken_nights=2) == []
    assert _shift_findings(broken_nights=5) == []


def test_the_loss_is_still_flagged_while_one_base_run_holds_it() -> None:
    (message,) = _shift_findings(broken_nights=1)
    assert "DRAM intensity 2 FLOP/B, baseline 500" in message


@pytest.mark.parametrize(
    ("values", "kept"),
    [
        ([500.0] * 9 + [2.0, 2.02], [2.0, 2.02]),
        ([500.0] * 9 + [2.0], [500.0] * 9 + [2.0]),  # one run is no level yet
        ([500.0, 2.0, 500.0, 501.0], [500.0, 501.0]),
        ([500.0, 520.0, 480.0], [500.0, 520.0, 480.0]),  # one level within 10%
        ([7.0], [7.0]),
        ([], []),
    ],
)
def test_since_kept_change_keeps_the_newest_agreeing_runs(
    values: list[float], kept: list[float]
) -> None:
    assert since_kept_change(np.array(values), 0.10).tolist() == kept


def test_kept_levels_trims_each_history_as_since_kept_change_does() -> None:
    histories = [
        np.array([500.0] * 9 + [2.0, 2.02]),
        np.array([12.0] * 30),
        np.array([3.0]),
        np.array([]),
        np.array([500.0, 2.0, 500.0, 501.0]),
        np.array([100.0, 104.0, 96.0, 100.5]),
    ]
    trimmed = kept_levels(histories, 0.10)
    expected = [since_kept_change(h, 0.10) for h in histories]
    assert [t.tolist() for t in trimmed] == [e.tolist() for e in expected]
    assert trimmed[0].tolist() == [2.0, 2.02]
