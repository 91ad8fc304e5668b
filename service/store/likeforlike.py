"""Stored history like for like: every run against the roof its kernel is usually bound by.

``rules.like_for_like_history`` recomputes each run's percent of roof against its series'
reference binding from the stored counters; this reads the roofs the runs were placed on
(``runs.roof_json``) for it. Trends, the dashboard's tables and the digest read history through
here, so a GEMM that fell off the tensor cores drops on the chart instead of staying flat.
"""

from __future__ import annotations

import pandas as pd

from rules import like_for_like_history
from service.store.devices import run_roofs
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
    ids = [int(i) for i in pd.unique(frame["run_id"])]
    roofs = run_roofs(session=session, run_ids=ids)
    return like_for_like_history(frame, roofs, first_held=first_held)
