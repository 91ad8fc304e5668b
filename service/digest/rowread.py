"""The digest's device changes from its compact history: full columns for the judged rows only.

The command used to read the whole history with every column (``nightly_history``, about 5 KB
a measurement) as soon as a card started in the period: a fleet's 2.5 years with a runner moved
to new hardware did not fit in memory. Here the cards are paired on the compact history
(``compact_history`` with its ids and ``trusted``: the runs of a runner whose health
preflight failed left out, as a check leaves them out), and only the rows a change judges, the
card before's placed rows and the new card's, get the columns ``rules.device_levels`` reads
beyond it: the work counters (read a batch of runs at a time, as ``digest_history`` reads
them) and each run's roof source. ``service.digest.devices.judge_card`` then judges them as it
judges the full history, so the changes are the same.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import numpy.typing as npt
import pandas as pd

from service.digest.devices import GATE_WINDOW, card_starts
from service.store.sessions import StoreSession
from service.store.workread import run_roof_sources, run_work

#: The compact history's columns the judged rows keep.
_KEPT = ("commit", "timestamp", "kernel_key", "kernel_name", "device", "percent_of_roof")


def judged_rows(
    session: StoreSession, frame: pd.DataFrame, rows: npt.NDArray[np.intp]
) -> pd.DataFrame:
    """``frame``'s rows ``rows`` with what ``judge_card`` reads (``rules.LEVEL_COLUMNS``).

    ``frame`` is the compact history with its ids (``run_id``, ``kernel_id``).
    """
    run_id = frame["run_id"].to_numpy()[rows]
    kernel_id = frame["kernel_id"].to_numpy()[rows]
    sources = run_roof_sources(session, pd.unique(run_id))
    source = pd.Series(run_id).map(sources)
    return pd.DataFrame(
        {
            **{c: frame[c].array.take(rows) for c in _KEPT},
            "run_id": run_id,
            "kernel_id": kernel_id,
            "roof_source": source.astype("category").array,
            "binding": frame["binding"].array.take(rows),
            "time_s": frame["time_s"].to_numpy()[rows],
            **run_work(session, run_id, kernel_id),
        }
    )


#: The card before's judged rows and the new card's, in that order (``judge_card``'s ``old``,
#: ``new``).
CardRows = tuple[pd.DataFrame, pd.DataFrame]


def compact_card_rows(
    session: StoreSession,
    frame: pd.DataFrame,
    period: tuple[datetime, datetime],
    window: int = GATE_WINDOW,
) -> list[CardRows]:
    """The rows that judge each card that started in ``period`` (``old``, ``new``).

    Args:
        session: An open session on the store.
        frame: The compact history with its ids (``compact_history(..., with_ids=True)``).
        period: The digest's period.
        window: The card before's last nights judged against (``card_starts``).
    """
    # Its ``trusted`` column (``compact_history``) leaves a failed runner's nights out.
    starts = card_starts(frame, start=period[0], end=period[1], window=window)
    return [
        (judged_rows(session, frame, old), judged_rows(session, frame, new)) for old, new in starts
    ]
