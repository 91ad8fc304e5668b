"""The re-read of a corrected datasheet figure placed by chunks equals it placed row by row.

``rules.reread_history`` placed every affected history row with ``rules.place`` (about 28 µs
a row: 60 nights of 2,000 kernels added 3 s to each check for 60 nights after a correction).
It now places the rows of one run and one shape at once (``rules.place_chunk``); each figure
must be the very float the row-by-row path (``tests/reread_rows.py``, the code at 7a52e42)
gives, on runs stored on the figures as they are, scaled to a clock and as ``ClockedRoof``s.
"""

from __future__ import annotations

import pandas as pd
import pytest

import rules.rereadhistory as rereadhistory
from rules import ClockedRoof, place, reread_history
from tests.reread_rows import history, reread_rows


@pytest.mark.parametrize("varied", [True, False], ids=["many-shapes", "two-shapes"])
@pytest.mark.parametrize("seed", range(6))
def test_chunks_give_the_figures_rows_give(seed: int, varied: bool) -> None:
    frame, work, rereads = history(12, 300, seed, varied=varied)
    expected = reread_rows(frame, work, rereads)
    assert (expected["percent_of_roof"] != frame["percent_of_roof"]).sum() > 0.8 * len(frame)
    pd.testing.assert_frame_equal(reread_history(frame, work, rereads), expected)


def test_a_compact_frame_keeps_its_categories() -> None:
    frame, work, rereads = history(6, 200, 11)
    compact = frame.astype({"regime": "category", "binding": "category"})
    out = reread_history(compact, work, rereads)
    pd.testing.assert_frame_equal(out, reread_rows(compact, work, rereads))
    assert isinstance(out["regime"].dtype, pd.CategoricalDtype)


def test_the_histories_hold_a_clocked_runs_kernels_on_both_its_roofs() -> None:
    """Those that recorded no clock on its datasheet roof, the others on the scaled one."""
    _, work, rereads = history(6, 400, 2, varied=False)
    run_id, reread = next((i, r) for i, r in rereads.items() if isinstance(r.stored, ClockedRoof))
    assert isinstance(reread.stored, ClockedRoof)
    rows = work[work["run_id"] == run_id].to_dict("records")
    on_sheet = 0
    for row in rows:
        nbytes = {t: row[f"bytes_{t}"] for t in ("dram", "l2") if row[f"bytes_{t}"] is not None}
        placed = place(row["flops"], nbytes, None, reread.stored.unscaled)
        on_sheet += placed.t_roof_s == row["t_roof_s"]
    assert 0.3 * len(rows) < on_sheet < 0.7 * len(rows)


def test_a_run_of_one_shape_is_placed_by_chunks_not_row_by_row(monkeypatch) -> None:
    """``place`` is left for shapes of fewer than ``MIN_CHUNK`` rows."""
    frame, work, rereads = history(4, 500, 5, varied=False)
    expected = reread_rows(frame, work, rereads)

    def one_row(*args: object, **kwargs: object) -> None:
        raise AssertionError("a row placed alone")

    monkeypatch.setattr(rereadhistory, "place", one_row)
    pd.testing.assert_frame_equal(reread_history(frame, work, rereads), expected)
