"""``on_new_work``: a work model's edit reads its kernel's earlier nights on the new work."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from service.store.workedits import on_new_work

DAY0 = datetime(2026, 11, 1, 2, tzinfo=UTC)
EDIT = DAY0 + timedelta(days=2) - timedelta(microseconds=1)


def _frame(categorical: bool, slower_after: float = 1.0) -> pd.DataFrame:
    """gemm and copy on two cards, 4 nights; gemm's percent halves at the edit (night 2)."""
    rows = []
    for key in ("gemm", "copy"):
        for device in ("H100-SXM5", "A100-SXM4-80GB"):
            for night in range(4):
                edited = key == "gemm" and device == "H100-SXM5" and night >= 2
                time = 1e-3 * (slower_after if edited else 1.0)
                percent = (40.0 if edited else 80.0) / (slower_after if edited else 1.0)
                rows.append((key, device, DAY0 + timedelta(days=night), percent, time))
    columns = ["kernel_key", "device", "timestamp", "percent_of_roof", "time_s"]
    frame = pd.DataFrame(rows, columns=columns)
    if categorical:  # the digest's compact history; the dashboard's is objects
        frame = frame.astype({"kernel_key": "category", "device": "category"})
    return frame


@pytest.mark.parametrize("categorical", [True, False])
def test_the_nights_before_the_edit_read_on_the_new_work(categorical: bool) -> None:
    out = on_new_work(_frame(categorical), [("gemm", "H100-SXM5", EDIT)])
    gemm = out[(out["kernel_key"] == "gemm") & (out["device"] == "H100-SXM5")]
    assert list(gemm["percent_of_roof"]) == pytest.approx([40.0] * 4)  # one level: no step
    others = out[(out["kernel_key"] != "gemm") | (out["device"] != "H100-SXM5")]
    assert set(others["percent_of_roof"]) == {80.0}


def test_a_slowdown_on_the_night_of_the_edit_still_shows() -> None:
    out = on_new_work(_frame(True, slower_after=2.0), [("gemm", None, EDIT)])
    gemm = out[(out["kernel_key"] == "gemm") & (out["device"] == "H100-SXM5")]
    assert list(gemm["percent_of_roof"]) == pytest.approx([40.0, 40.0, 20.0, 20.0])


def test_no_edit_or_none_of_its_kernels_leaves_the_frame() -> None:
    frame = _frame(True)
    assert on_new_work(frame, []) is frame
    assert on_new_work(frame, [("other", None, EDIT)]) is frame
