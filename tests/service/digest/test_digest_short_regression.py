"""A regression fixed within a few nights is one regression and its recovery, not unresolved.

The change-point scan tells a level's start from its end once it has held about half its
shortest window (4 nights): a kernel 20% slower for three nights, then back, was one change
and one level over six nights, "-10%, unresolved" in the digest though it was back.
"""

from __future__ import annotations

import pandas as pd
import pytest
from digest_history import (
    FIRST_NIGHT,
    PERIOD_END,
    PERIOD_START,
    make_digest_history,
    night_of,
)

from service.digest.build import build_digest

KERNEL, DEVICE, FIRST_SLOW = "attention_fwd", "A100-SXM4-80GB", 34


def slower_for(
    nights: int, first: int = FIRST_SLOW, after: float = 1.0, factor: float = 0.8
) -> pd.DataFrame:
    """The generated history with ``KERNEL`` at ``factor`` times its percent of roof for
    ``nights`` nights from ``first``, then at ``after`` times its level."""
    frame = make_digest_history()
    night = (frame["timestamp"] - FIRST_NIGHT).dt.days
    ours = (frame["kernel_key"] == KERNEL) & (frame["device"] == DEVICE)
    slow = ours & night.between(first, first + nights - 1)
    for rows, times in ((slow, factor), (ours & (night >= first + nights), after)):
        frame.loc[rows, "percent_of_roof"] *= times
        frame.loc[rows, "time_s"] /= times
    return frame


def _of_kernel(entries: list) -> list:
    return [e for e in entries if (e.kernel, e.device) == (KERNEL, DEVICE)]


@pytest.mark.parametrize("nights", [3, 4])
def test_a_regression_fixed_within_the_week_is_reported_with_its_recovery(nights: int) -> None:
    digest = build_digest(slower_for(nights), start=PERIOD_START, end=PERIOD_END)
    [regression] = _of_kernel(digest.regressions)
    assert night_of(regression.since) == FIRST_SLOW
    assert regression.relative_change == pytest.approx(-0.20, abs=0.01)
    [recovery] = _of_kernel(digest.recoveries)
    assert night_of(recovery.recovered_at) == FIRST_SLOW + nights
    assert not _of_kernel(digest.unresolved)
    assert not _of_kernel(digest.improvements), "the way back is the recovery"


def test_a_level_too_young_to_have_held_is_not_yet_a_recovery() -> None:
    """Back on the last night only: it has not held ``min_segment`` nights yet."""
    digest = build_digest(slower_for(5), start=PERIOD_START, end=PERIOD_END)
    assert [night_of(e.since) for e in _of_kernel(digest.unresolved)] == [FIRST_SLOW]
    assert not _of_kernel(digest.recoveries)


def test_a_dip_before_the_period_back_for_longer_is_recovered_in_it() -> None:
    """Three nights away, seven back: the level's median was back, and it stayed a change of
    -0.5%, unresolved for good."""
    digest = build_digest(slower_for(3, first=30), start=PERIOD_START, end=PERIOD_END)
    [recovery] = _of_kernel(digest.recoveries)
    assert night_of(recovery.since) == 30 and night_of(recovery.recovered_at) == 33
    assert recovery.relative_change == pytest.approx(-0.20, abs=0.01)
    assert not _of_kernel(digest.unresolved) and not _of_kernel(digest.regressions)


def test_a_return_past_the_old_level_is_a_recovery() -> None:
    """Back 4% faster than before: a recovery, as ``classify`` reads one, not an improvement."""
    digest = build_digest(slower_for(3, first=35, after=1.04), start=PERIOD_START, end=PERIOD_END)
    [recovery] = _of_kernel(digest.recoveries)
    assert night_of(recovery.recovered_at) == 38
    assert not _of_kernel(digest.unresolved) and not _of_kernel(digest.improvements)


def test_a_short_gain_that_went_back_leaves_no_regression_unresolved() -> None:
    """Split, its way back would be a regression of -17% unresolved until the gain returned:
    a runner fast for three nights would leave one for good."""
    digest = build_digest(slower_for(3, factor=1.2), start=PERIOD_START, end=PERIOD_END)
    assert not _of_kernel(digest.unresolved) and not _of_kernel(digest.regressions)
