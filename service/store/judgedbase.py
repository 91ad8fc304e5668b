"""The baseline a run's stored verdict was judged against: its base branch and merge base.

A run judged again (its page, the API's verdict, the same upload or ``check`` again) reads
the baseline its stored findings came from: an upload's ``base_branch`` and ``base_sha`` are
not the service's defaults, and the stored findings of one baseline beside the kernels of
another read a 15x regression as unchanged. Kept on the run (``runs.judged_base_*``,
migration 0015) with its findings, in the check's transaction.
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

    def describe(self) -> str:
        """The baseline in words, for a verdict's note: ``the main runs up to merge base 1a2b``."""
        runs = f"the {self.branch} runs"
        if self.merge_base is None:
            return runs
        cut = f"{runs} up to merge base {self.merge_base.sha[:12]}"
        time = self.merge_base.time
        return cut if time is None else f"{cut} (its commit time {as_utc(time):%Y-%m-%d %H:%M} UTC)"


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
