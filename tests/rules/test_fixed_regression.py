"""A regression main fixed is over: its nights no longer set the level a PR is judged against.

Main dropped a GEMV from 85% to 64% of the dram roof for four nights, then fixed it. For the
week after, the gate read the fix as a stay at "the usual high mode" of a kernel that
"alternates between 64% and 85%", and judged PRs against the regression's level: a PR that
brought the regression back passed as unchanged.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from factories import make_kernel, night_run

from rules import RuleContext, builtin_catalog, evaluate
from rules.frames import history_from_runs
from rules.stats import GateOptions
from rules.stats.runs import segment_starts_by_night

START = datetime(2026, 10, 1, 2, tzinfo=UTC)
A100 = builtin_catalog().lookup("A100-SXM4-80GB").roof()
DRAM = A100.bandwidth_byte_per_s["dram"]
BYTES = 8e9
WOBBLE = (0.0, 0.004, -0.003, 0.002, -0.004, 0.003, -0.002)  # a quiet runner's night-to-night


def _percents(fixed_nights: int) -> list[float]:
    """19 nights at 85%, 4 regressed at 64%, then ``fixed_nights`` back at 85%."""
    levels = [85.0] * 19 + [64.0] * 4 + [85.0] * fixed_nights
    return [level * (1 + WOBBLE[i % len(WOBBLE)]) for i, level in enumerate(levels)]


def _run(percent: float, night: int, kind: str = "nightly"):
    time_s = BYTES / DRAM / (percent / 100)
    kernel = make_kernel("decode_gemv", flops={"fp32": 2e9}, dram_bytes=BYTES, time_s=time_s)
    return night_run(kernel, night, start=START, kind=kind)


def _pr_verdict(percent: float, fixed_nights: int = 4):
    history = [_run(p, night) for night, p in enumerate(_percents(fixed_nights))]
    ctx = RuleContext(
        run=_run(percent, len(history), kind="pr"),
        roof=A100,
        history=history_from_runs(history, A100),
    )
    return evaluate(ctx).verdict


def test_the_fix_starts_a_new_segment_once_two_nights_confirm_it() -> None:
    starts = segment_starts_by_night(np.asarray(_percents(fixed_nights=4)), GateOptions())
    assert starts[21] == 19, "the regression confirmed on its second night"
    assert starts[-1] == 23, "the fixed nights are the segment now"


def test_a_pr_that_brings_the_regression_back_is_flagged() -> None:
    verdict = _pr_verdict(64.5)
    (drop,) = [f for f in verdict.findings if f.rule == "roof-drop"]
    assert drop.severity.value in ("warn", "fail")
    assert drop.numbers["level"] == pytest.approx(85.0, rel=0.01)


def test_a_pr_at_the_fixed_level_reads_no_mixture() -> None:
    verdict = _pr_verdict(85.2)
    assert verdict.findings == ()
    (kernel,) = verdict.kernels
    assert kernel.status == "unchanged"
    assert kernel.baseline is not None
    assert kernel.baseline.center == pytest.approx(85.0, rel=0.01)


def test_the_regression_again_is_not_taken_for_a_return_to_it() -> None:
    """Main brings the regression back: its nights lie at the level before the fixed segment.

    That segment is settled, so a run back to the nights before it is no new segment: the
    regression is not taken as the level (as a young segment's return would be).
    """
    again = [*_percents(fixed_nights=9), 64.2, 64.5, 63.9]
    starts = segment_starts_by_night(np.asarray(again), GateOptions())
    assert starts[-1] == 23


def _nightly_verdict(percents: list[float]):
    history = [_run(p, night) for night, p in enumerate(percents[:-1])]
    ctx = RuleContext(
        run=_run(percents[-1], len(history)),
        roof=A100,
        history=history_from_runs(history, A100),
    )
    return evaluate(ctx).verdict


def test_main_at_the_regressions_level_again_warns_each_night() -> None:
    """Back at a level visited once: a regression brought back reads as a runner's other
    state to the mixture; it is a warning, not an excused stay at 'the usual low mode'."""
    fixed = _percents(fixed_nights=9)
    for nights in (1, 2, 3):
        verdict = _nightly_verdict([*fixed, *[64.4] * nights])
        (drop,) = [f for f in verdict.findings if f.rule == "roof-drop"]
        assert drop.severity.value == "warn", nights
        assert "at the 64% it held once before (85% of roof otherwise)" in drop.message
