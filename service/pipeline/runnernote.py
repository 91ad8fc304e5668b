"""The note on a verdict measured on another runner than its baseline's (a runner swap).

A swap moves every kernel at once (the new card's clocks, cooling, driver), and the gate
confirms a move on the nights after it: the first night on the new runner warns, the next
ones fail. Each of those verdicts says the runner changed, so that a move shared by many
kernels is read as the runner's, until the new runner has measured as many of the baseline's
runs as the runners before it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pandas as pd

from collectors.schema import RunRecord
from rules import NEW_RUNNER_NOTE, KernelVerdict, Verdict
from service.store.queries import runners_of
from service.store.sessions import StoreSession

#: A run on another runner than its baseline's is noted when the baseline came from at most
#: this many runners (a pinned runner or a pair; a pool rotates through more).
SWAP_RUNNERS = 2


def runner_noted(
    session: StoreSession,
    verdict: Verdict,
    run: RunRecord,
    baseline_runs: Sequence[int],
    history: pd.DataFrame,
) -> Verdict:
    """The verdict with a note when its runner is new to its baseline (runs ids, oldest first).

    New: it measured none of the baseline's runs, or only its newest ones in a row, fewer
    than the runners before it. Only where the baseline came from at most ``SWAP_RUNNERS``
    runners; in a pool's rotation a run on a runner outside the window is the norm. Baseline
    runs that name no runner say nothing either way. Each kernel's baseline then says where
    in its trend the runner's runs begin (``runner_since``), from its rows of ``history``
    (``rules.frames.HISTORY_COLUMNS``).
    """
    if not run.runner:
        return verdict
    named = runners_of(session=session, run_ids=baseline_runs)
    runners = [named[run_id] for run_id in baseline_runs if run_id in named]
    counts = Counter(runners)
    newest = _newest_in_a_row(runners, run.runner)
    if not counts or len(counts) > SWAP_RUNNERS or counts[run.runner] != newest:
        return verdict  # no runner named, a pool, or the runner ran older runs too
    before = counts - Counter({run.runner: newest})
    if newest >= before.total():
        return verdict  # the new runner is the baseline's now
    kernels = _marked(verdict.kernels, history, baseline_runs[len(baseline_runs) - newest :])
    notes = (*verdict.notes, _note(run, newest, before))
    return verdict.model_copy(update={"notes": notes, "kernels": kernels})


def _marked(
    kernels: Sequence[KernelVerdict], history: pd.DataFrame, on_runner: Sequence[int]
) -> tuple[KernelVerdict, ...]:
    """``kernels``, each baseline of its own card saying where the runner's runs begin.

    A kernel's trend shows its known figures, newest last: its rows of the runs
    ``on_runner`` with a known figure are the newest of them.
    """
    rows = history[history["run_id"].isin(on_runner)].groupby("kernel_key")
    known = {"percent_of_roof": rows["percent_of_roof"].count(), "time_s": rows["time_s"].count()}
    marked = []
    for kernel in kernels:
        base = kernel.baseline
        if base is None or base.device is not None or base.metric not in known:
            marked.append(kernel)
            continue
        since = max(len(base.history) - int(known[base.metric].get(kernel.key, 0)), 0)
        baseline = base.model_copy(update={"runner_since": since})
        marked.append(kernel.model_copy(update={"baseline": baseline}))
    return tuple(marked)


def _newest_in_a_row(runners: Sequence[str], runner: str) -> int:
    """How many of the newest ``runners`` in a row are ``runner``."""
    count = 0
    for name in reversed(runners):
        if name != runner:
            break
        count += 1
    return count


def _note(run: RunRecord, newest: int, before: Counter[str]) -> str:
    named = ", ".join(f"{name} ({count})" for name, count in before.most_common())
    measured = (
        "its baseline's runs were on"
        if not newest
        else f"it measured only the newest {newest} of its baseline's runs; before them:"
    )
    return (
        f"{NEW_RUNNER_NOTE}{run.runner}; {measured} {named}: a move shared by many "
        "kernels may be the runner's"
    )
