"""The record of the baseline a run was judged against, on its row: kept and read here.

The store's half of one concept: ``JudgedBase`` (a base branch and merge base) is written to
``runs.judged_base_*`` (migration 0015) with the run's findings, in the check's transaction
(``base_values``), and read back (``judged_base``). Which baseline a check reads (the one its
caller names, else this record, else the configured branch) is the pipeline's decision,
``service.pipeline.basechoice``. A run judged again (its page, the API's verdict, the same
upload or ``check`` again) needs the record: an upload's ``base_branch`` and ``base_sha`` are
not the service's defaults, and the stored findings of one baseline beside the kernels of
another read a 15x regression as unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from service.store.baselines import MergeBase
from service.store.coretables import RUNS as _RUNS
from service.store.ids import as_utc
from service.store.sessions import StoreSession


@dataclass(frozen=True)
class JudgedBase:
    """Where a run's baseline came from.

    Attributes:
        branch: The base branch whose runs were the baseline.
        merge_base: The PR's merge base the baseline stopped at (None: the newest runs).
    """

    branch: str
    merge_base: MergeBase | None = None


def judged_base(*, session: StoreSession, run_id: int) -> JudgedBase | None:
    """The baseline run ``run_id``'s stored verdict was judged against.

    None where none is kept: a run stored by ``ingest`` (never judged), or judged before
    migration 0015 (then judged again against the configured base branch, as it was then).
    """
    c = _RUNS.c
    stmt = sa.select(c.judged_base_branch, c.judged_base_sha, c.judged_base_time).where(
        c.id == run_id
    )
    row = session.execute(stmt).first()
    if row is None or row[0] is None:
        return None
    branch, sha, time = row
    if sha is None:
        return JudgedBase(str(branch))
    return JudgedBase(str(branch), MergeBase(str(sha), None if time is None else as_utc(time)))


def base_values(base: JudgedBase) -> dict[str, object]:
    """The ``runs`` columns that keep ``base`` (``service.store.ingest.save_judged``)."""
    merge_base = base.merge_base
    return {
        "judged_base_branch": base.branch,
        "judged_base_sha": None if merge_base is None else merge_base.sha,
        "judged_base_time": (
            None if merge_base is None or merge_base.time is None else as_utc(merge_base.time)
        ),
    }
