"""What a weekly digest reports as new: large enough, and once over consecutive weeks.

A change is new in the week the digest's scan first finds it (through the week's end, not
through its start), and only when its reported figure (the change of segment medians) is
``min_effect`` or more. Before, a step in a week's last two nights was held in that week,
found by neither digest; and a bimodal kernel read as "-0.4 %, new regression".
"""

from __future__ import annotations

from datetime import timedelta

import pandas as pd
import pytest
from digest_history import (
    FIRST_NIGHT,
    NIGHTS,
    PLANTED,
    make_digest_history,
    night_of,
    series_history,
)

from service.digest.build import build_digest
from service.digest.model import Digest
from service.render.digest_render import render_digest_markdown

#: CUDA.jl's ``array/copyto!/gpu_to_gpu`` on an RTX 2080, percent of its roof a night: two
#: modes (about 75 and 87), whose share shifts from week to week.
BIMODAL = [
    *(77.9, 73.6, 74.9, 76.7, 76.4, 76.7, 76.7, 76.2, 74.4, 74.8, 75.2, 75.5, 75.3, 77.2),
    *(74.7, 75.3, 75.9, 76.7, 75.8, 75.7, 88.9, 74.5, 86.9, 86.6, 75.4, 73.6, 74.2, 75.0),
    *(75.2, 87.4, 76.5, 89.6, 89.7, 90.0, 89.1, 76.6, 76.7, 77.5, 87.9, 85.6, 75.5, 77.1),
    *(74.8, 88.6, 76.5, 88.5, 89.0, 87.7, 75.7, 87.8, 88.2, 76.9, 75.7, 76.4, 75.1, 88.7),
    *(74.4, 85.6, 74.4, 86.6, 74.7, 76.0, 74.5, 87.7, 76.3, 88.5, 75.0, 87.0, 75.8, 87.0),
    *(75.5, 75.1, 85.5, 74.7, 75.7, 74.5, 85.7, 86.3, 88.6, 74.3, 87.0, 85.9, 75.3, 74.9),
    *(73.5, 86.4, 85.9, 88.1, 75.0, 75.7, 75.8, 75.4, 75.8, 74.5, 88.1, 74.4, 75.8, 87.0),
    *(85.9, 74.7, 74.9, 85.3, 88.0, 86.6, 75.3, 74.3, 75.8, 74.6, 75.7, 74.3, 76.3, 87.0),
    *(74.5, 86.5, 76.6, 88.8, 86.9, 87.6, 74.6, 85.5),
]
LOOKBACK = timedelta(days=90)


def weekly(history: pd.DataFrame, week: int, weeks: int = 1) -> Digest:
    """The digest of ``weeks`` weeks from the ``week``-th, of the history the CLI reads."""
    start = FIRST_NIGHT + timedelta(days=7 * week, hours=-2)
    end = start + timedelta(days=7 * weeks) - timedelta(microseconds=1)
    stamps = history["timestamp"]
    read = history[(stamps >= start - LOOKBACK) & (stamps <= end)]
    return build_digest(read.reset_index(drop=True), start=start, end=end)


def _figures(digest: Digest) -> list[tuple[str, float]]:
    moves = [
        (name, m.relative_change)
        for name in ("regressions", "improvements", "recoveries", "unresolved")
        for m in getattr(digest, name)
    ]
    times = [(f"time {t.kernel}", t.ratio - 1.0) for t in digest.time_regressions]
    return (
        moves
        + [(f"unresolved time {t.kernel}", t.ratio - 1.0) for t in digest.unresolved_time]
        + times
    )


@pytest.mark.parametrize("weeks", [1, 4])
def test_no_change_below_min_effect_is_reported(weeks: int) -> None:
    history = series_history(BIMODAL)
    for week in range(0, len(BIMODAL) // 7 - weeks + 1, weeks):
        small = [(n, f) for n, f in _figures(weekly(history, week, weeks)) if abs(f) < 0.03]
        assert not small, f"week {week}: {small}"


def step_in_last_nights(first: int = 26, factor: float = 0.9) -> pd.DataFrame:
    """The generated history at 2% noise, attention_fwd on the A100 at ``factor`` from night
    ``first`` on (26: the Saturday, the fourth week's last two nights; the scan finds it in
    the fifth)."""
    frame = make_digest_history(noise=0.02)
    ours = (frame["kernel_key"] == "attention_fwd") & (frame["device"] == "A100-SXM4-80GB")
    later = ours & ((frame["timestamp"] - FIRST_NIGHT).dt.days >= first)
    frame.loc[later, "percent_of_roof"] *= factor
    frame.loc[later, "time_s"] /= factor
    return frame


def _new_in(digests: list[Digest], kernel: str, device: str) -> list[tuple[int, int]]:
    """(week, night of ``since``) of every weekly digest listing the kernel's new regression."""
    return [
        (week, night_of(m.since))
        for week, digest in enumerate(digests)
        for m in digest.regressions
        if (m.kernel, m.device) == (kernel, device)
    ]


def test_a_step_in_a_weeks_last_nights_is_new_the_week_after() -> None:
    history = step_in_last_nights()
    digests = [weekly(history, week) for week in range(NIGHTS // 7 + 1)]
    assert _new_in(digests, "attention_fwd", "A100-SXM4-80GB") == [(4, 26)]
    slower = [
        (week, night_of(t.since))
        for week, digest in enumerate(digests)
        for t in digest.time_regressions
        if (t.kernel, t.device) == ("attention_fwd", "A100-SXM4-80GB")
    ]
    assert slower == [(4, 26)]
    markdown = render_digest_markdown(digests[4])
    assert f"{(FIRST_NIGHT + timedelta(days=26)):%Y-%m-%d}, found this week" in markdown


def test_every_planted_regression_is_new_in_exactly_one_week() -> None:
    history = make_digest_history()
    digests = [weekly(history, week) for week in range(NIGHTS // 7 + 1)]
    for step in (s for s in PLANTED if s.factor < 1):
        assert [n for _, n in _new_in(digests, step.kernel, step.device)] == [step.night], step
