"""The note on a verdict with no baseline: the branch searched, and the branches that hold runs.

A misspelt base branch (``base_branch = "mian"`` in the configuration, or ``--base-branch``
on ``check``, upload or the API) finds no runs, and the verdict said only "no baseline yet",
as for a repository's first run: nothing named the branch it searched, so nobody looked for
the typo. Where the run's card holds nightly or local runs of other branches (stored before
the run, so the run's page says the same later), the verdict names the branch searched and
the branches that hold runs there, most runs first. A card with no such runs (a first run)
or a base branch that holds runs the baseline could not use (another roof, after the merge
base) gets no note: the branch is not what is wrong there.
"""

from __future__ import annotations

from collectors.schema import RunRecord
from rules import Verdict
from service.pipeline.verdictnotes import with_note
from service.store.queries import baseline_runs_by_branch
from service.store.sessions import StoreSession

#: Branches named in the note; the rest are counted.
NAMED = 3


def branch_noted(
    session: StoreSession, verdict: Verdict, run: RunRecord, base_branch: str, run_id: int
) -> Verdict:
    """The verdict with a note naming the branches that hold runs, when it has no baseline."""
    if verdict.baseline_runs or not run.repo or verdict.device is None:
        return verdict
    held = baseline_runs_by_branch(
        session=session, repo=run.repo, device=verdict.device, before_run=run_id
    )
    if not held or base_branch in dict(held):
        return verdict
    note = (
        f"no nightly or local run of base branch {base_branch!r} is stored on {verdict.device}; "
        f"this repository's are on {_listed(held)}"
    )
    return with_note(verdict, note)


def _listed(held: list[tuple[str, int]]) -> str:
    """``main (8), release/2.0 (3)``: the first ``NAMED`` branches, the rest counted."""
    named = ", ".join(f"{branch} ({runs})" for branch, runs in held[:NAMED])
    more = len(held) - NAMED
    return named + (f" and {more} more branch{'es' if more > 1 else ''}" if more > 0 else "")
