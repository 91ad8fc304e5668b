"""The notes on where a PR's baseline ends: at its merge base, or at the card's runs after it.

A PR is judged on its own diff: its baseline runs to its merge base's run. When no run of that
commit is stored, the baseline runs to the nights measured up to its commit time, and the
verdict says so. When the merge base was measured on another card only (the branch left
before a runner swap) and the run's card has no run up to it, the card's nearest runs after
it are the baseline (``service.store.history``): the verdict names them, and that they may
hold changes merged after the branch left.
"""

from __future__ import annotations

from rules import Verdict
from service.pipeline.verdictnotes import with_note
from service.store.baselines import Baseline, MergeBase
from service.store.ids import as_utc


def merge_base_noted(
    verdict: Verdict, rows: Baseline, merge_base: MergeBase | None, base_branch: str
) -> Verdict:
    """The verdict with a note when its baseline does not end at the merge base's run.

    Only where that baseline has runs: a card with none of its own (judged across cards) cut
    nothing, whatever the other card holds.
    """
    if merge_base is None or not rows.runs:
        return verdict
    if rows.after_merge_base:
        return with_note(verdict, _after_note(rows, merge_base, base_branch))
    if rows.merge_base_found:
        return verdict
    judged = (
        f"judged against the {base_branch} runs measured up to its commit time, "
        f"{as_utc(merge_base.time):%Y-%m-%d %H:%M} UTC"
        if merge_base.time is not None
        else f"judged against the newest {base_branch} runs, which may hold changes merged "
        "after this branch left it"
    )
    return with_note(
        verdict, f"merge base {merge_base.sha[:12]} has no stored {base_branch} run: {judged}"
    )


def _after_note(rows: Baseline, merge_base: MergeBase, base_branch: str) -> str:
    """``merge base a025 was measured on another card only: ... (h001 to h008) ...``."""
    frame = rows.frame.sort_values("timestamp", kind="stable")
    commits = [str(c) for c in frame["commit"] if isinstance(c, str) and c]
    devices = [str(d) for d in frame["device"] if isinstance(d, str) and d]
    card = devices[-1] if devices else "this card"
    span = f" ({commits[0][:12]} to {commits[-1][:12]})" if commits else ""
    return (
        f"merge base {merge_base.sha[:12]} was measured on another card only, and {card} has "
        f"no {base_branch} run up to it: judged against its {len(rows.runs)} {base_branch} "
        f"runs nearest after it{span}, the kernels' level on this card, which may hold "
        "changes merged after this branch left it"
    )
