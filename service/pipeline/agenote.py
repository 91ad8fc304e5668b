"""The note on a verdict whose baseline is old: a nightly job that stopped, said out loud.

A run is judged against the base branch's nightly runs before it (up to the PR's merge base).
When the nightly job stopped (a runner down, a workflow broken) and nobody noticed, the
newest of those runs can be weeks older than the branch: every change merged in between is
read as this run's, and nothing said so. Where the newest baseline run is more than
``STALE_DAYS`` older than the merge base's commit time (or, without one, than the run), the
verdict says how old it is and from which commit. A baseline that stops at the merge base's
own stored run is the branch's starting point however old it is: no note.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd

from collectors.schema import RunRecord
from rules import Verdict
from service.pipeline.verdictnotes import with_note
from service.store.baselines import Baseline, MergeBase
from service.store.ids import as_utc
from service.store.queries import first_nightly_elsewhere
from service.store.sessions import StoreSession

#: A baseline whose newest run is older than the run's starting point by more than this is
#: noted (a week: a suite measured on weekdays or weekly still reads fresh).
STALE_DAYS = 7


def age_noted(
    session: StoreSession,
    verdict: Verdict,
    judged: tuple[Baseline, RunRecord, str],
    merge_base: MergeBase | None,
) -> Verdict:
    """The verdict with a note when its baseline's newest run is stale (see the module).

    ``judged``: the baseline, the run and the base branch.
    """
    rows, run, branch = judged
    if rows.frame.empty or (merge_base is not None and rows.merge_base_found):
        return verdict
    since, what = _starting_point(run, merge_base)
    stamps = pd.to_datetime(rows.frame["timestamp"], utc=True)
    newest = int(stamps.argmax())  # on the int64 stamps: no Timestamp object per row
    last = stamps.iloc[newest].to_pydatetime()
    if since - last <= timedelta(days=STALE_DAYS):
        return verdict
    device = str(rows.frame["device"].iloc[newest])
    moved = first_nightly_elsewhere(
        session=session, repo=str(run.repo), branch=branch, device=device, after=last, until=since
    )
    commit = str(rows.frame["commit"].iloc[newest])[:12]
    note = (
        f"the newest baseline run ({last:%Y-%m-%d}, commit {commit}) is {(since - last).days} "
        f"days older than {what}: changes merged in between read as this run's; "
        + _why_stale(device, moved)
    )
    return with_note(verdict, note)


def _why_stale(device: str, moved: tuple[str, datetime] | None) -> str:
    """Where the nightly runs went (a runner on another card), else the question to ask."""
    if moved is None:
        return "is the nightly job still running?"
    other, first = moved
    return f"the nightly runs measured {other} from {first:%Y-%m-%d}, not {device}"


def _starting_point(run: RunRecord, merge_base: MergeBase | None) -> tuple[datetime, str]:
    """Where the run's code starts from: its merge base's commit time, else the run itself."""
    if merge_base is not None and merge_base.time is not None:
        return as_utc(merge_base.time), "this branch's merge base"
    return as_utc(run.timestamp), "this run"
