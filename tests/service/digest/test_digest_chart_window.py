"""Each trend chart of the HTML digest draws its own window, not the oldest listed change's.

The history has an old unresolved regression (softmax on the H100 from night 10) beside the
week's (the GEMV on the H100 from night 35): the week's chart starts a context before the
period, the old one's a context before its change.
"""

from __future__ import annotations

from datetime import timedelta

import pandas as pd
import pytest
from digest_history import PERIOD_END, PERIOD_START, make_digest_history

import service.render.digest_charts as digest_charts
from service.digest.build import build_digest

CONTEXT = timedelta(days=3)


@pytest.fixture(scope="module")
def history() -> pd.DataFrame:
    return make_digest_history()


def _drawn(history: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> dict[str, pd.DataFrame]:
    """The rows each trend chart is drawn from, by its title."""
    drawn: dict[str, pd.DataFrame] = {}
    real = digest_charts.trend_chart

    def kept(series: pd.DataFrame, *, title: str, **kw):
        drawn[title] = series
        return real(series, title=title, **kw)

    monkeypatch.setattr(digest_charts, "trend_chart", kept)
    digest = build_digest(history, start=PERIOD_START, end=PERIOD_END)
    digest_charts.trend_charts(history, digest, context_days=CONTEXT.days)
    return drawn


def test_the_weeks_regression_is_drawn_from_a_context_before_the_period(history, monkeypatch):
    drawn = _drawn(history, monkeypatch)
    week = drawn["gemv_bf16 on H100-SXM5"]["timestamp"]
    assert week.min() >= pd.Timestamp(PERIOD_START - CONTEXT)
    assert week.max() <= pd.Timestamp(PERIOD_END)


def test_an_old_regression_is_drawn_from_a_context_before_its_change(history, monkeypatch):
    drawn = _drawn(history, monkeypatch)
    old = drawn["softmax_fwd on H100-SXM5"]["timestamp"]
    week = drawn["gemv_bf16 on H100-SXM5"]["timestamp"]
    assert old.min() < week.min() - timedelta(days=14)  # the old change is 25 nights earlier
    assert (old.diff().dropna() <= timedelta(days=1)).all()  # every night since, none skipped
