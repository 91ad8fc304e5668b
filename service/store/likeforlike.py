"""Stored history like for like: every run against the roof its kernel is usually bound by.

``rules.like_for_like_history`` recomputes each run's percent of roof against its series'
reference binding from the stored counters; this reads the roofs the runs were placed on
(``runs.roof_json``) for it, each run on its card's newest datasheet figures
(``service.store.roofread``). Trends, the dashboard's tables and the digest read history through
here, so a GEMM that fell off the tensor cores drops on the chart instead of staying flat.
"""

from __future__ import annotations

import pandas as pd

from rules import like_for_like_history
from service.store.roofread import on_newest_roofs
from service.store.sessions import StoreSession


def with_like_for_like(
    *, session: StoreSession, frame: pd.DataFrame, first_held: bool = False
) -> pd.DataFrame:
    """``frame`` (history rows) with ``percent_of_roof`` like for like (see the module).

    ``first_held``: against the binding each series held first (the digest's reference,
    ``rules.like_for_like_history``).
    """
    if frame.empty:
        return like_for_like_history(frame, {})
    frame, roofs, _ = on_newest_roofs(session, frame)  # a corrected datasheet figure
    return like_for_like_history(frame, roofs, first_held=first_held)
