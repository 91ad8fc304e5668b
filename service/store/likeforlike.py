"""Stored history as the check reads it: today's roofs, today's work, then like for like.

``rules.like_for_like_history`` recomputes each run's percent of roof against its series'
reference binding from the stored counters; this reads the roofs the runs were placed on
(``runs.roof_json``) for it, each run on its card's newest datasheet figures
(``service.store.roofread``), and each kernel's nights before an edit of its declared work
model on the new work (``service.store.workedits``). Trends, the kernel pages, ``roofguard
plot`` and the digest read history through here, so a GEMM that fell off the tensor cores
drops on the chart instead of staying flat, and neither a corrected figure nor an edited work
model moves a series.
"""

from __future__ import annotations

import pandas as pd

from rules import Roof, like_for_like_history
from service.store.baselines import work_model_edits
from service.store.roofread import on_newest_roofs
from service.store.sessions import StoreSession
from service.store.workedits import on_new_work


def as_checked(
    session: StoreSession, frame: pd.DataFrame, repo: str | None
) -> tuple[pd.DataFrame, dict[int, Roof]]:
    """``frame`` on today's roofs, then on today's work, in the check's order; every run's roof.

    The roof re-read places each run's *stored* work on its card's newest figures, so it comes
    first, as in ``check`` (``service.pipeline.check``): done after the work edit's rescale, it
    put the old work back on the nights before the edit (twice their percent of roof for a
    model that halved). ``repo``: whose recorded edits apply (None: none; another repository's
    kernel of the same key is its own). The roofs (the re-read ones as read now) are for
    ``rules.like_for_like_history``.
    """
    frame, roofs, _ = on_newest_roofs(session, frame)  # a corrected datasheet figure
    if repo is not None:
        frame = on_new_work(frame, work_model_edits(session=session, repo=repo))
    return frame, roofs


def with_like_for_like(
    *, session: StoreSession, frame: pd.DataFrame, repo: str | None, first_held: bool = False
) -> pd.DataFrame:
    """``frame`` (history rows of ``repo``) as checked today, then like for like (see the module).

    ``first_held``: against the binding each series held first (the digest's reference,
    ``rules.like_for_like_history``).
    """
    if frame.empty:
        return like_for_like_history(frame, {})
    frame, roofs = as_checked(session, frame, repo)
    return like_for_like_history(frame, roofs, first_held=first_held)
