"""``without_restarted``: a work model's restart cuts its kernel's series, on its card only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd

from service.digest.restarts import without_restarted

DAY0 = datetime(2026, 11, 1, 2, tzinfo=UTC)


def _frame(categorical: bool) -> pd.DataFrame:
    rows = [
        (key, device, DAY0 + timedelta(days=night))
        for key in ("gemm", "copy")
        for device in ("H100-SXM5", "A100-SXM4-80GB")
        for night in range(4)
    ]
    frame = pd.DataFrame(rows, columns=["kernel_key", "device", "timestamp"])
    if categorical:  # the digest's compact history; the dashboard's is objects
        frame = frame.astype({"kernel_key": "category", "device": "category"})
    return frame


def test_rows_up_to_the_restart_of_that_kernel_on_that_card_are_left_out() -> None:
    for categorical in (True, False):
        restart = ("gemm", "H100-SXM5", DAY0 + timedelta(days=2) - timedelta(microseconds=1))
        kept = without_restarted(_frame(categorical), [restart])
        assert len(kept) == 16 - 2  # gemm's first two H100 nights
        gemm_h100 = kept[(kept["kernel_key"] == "gemm") & (kept["device"] == "H100-SXM5")]
        assert list(gemm_h100["timestamp"]) == [DAY0 + timedelta(days=n) for n in (2, 3)]
        assert list(kept.index) == list(range(len(kept)))


def test_a_restart_on_every_card_and_none_at_all() -> None:
    frame = _frame(categorical=True)
    every = without_restarted(frame, [("copy", None, DAY0 + timedelta(days=1))])
    assert len(every) == 16 - 4  # copy's first two nights on both cards
    assert without_restarted(frame, []) is frame
    assert without_restarted(frame, [("other", None, DAY0 + timedelta(days=9))]) is frame
