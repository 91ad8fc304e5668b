"""A declared work model edited in roofguard.toml: earlier nights judged on the new work.

Percent of roof is work over time: fixing ``2*M*N*K`` to ``M*N*K`` halves it at the same
time, and the next night failed "regressed (confirmed)" (work-change said "fewer launches or a
smaller shape"). A kernel's measured time does not depend on how its work is counted, so its
nights before the edit are judged as if counted the new way: each one's percent of roof is
``100 * T_roof / T`` with today's ``T_roof`` (``rescaled``). A slowdown on the night of the
edit is then still one, as it is on any other night.

Each stored record keeps the expressions that made its declared work (in its provenance,
``collectors.declared_definition``): a kernel whose expressions differ from those of its
newest baseline run changed model. A base-branch nightly or local run that finds it records
where (an acceptance by roofguard, ``EDITS_RECORDED_BY``), so every later check knows which of its
baseline nights are counted the old way; a pull request's run only rescales its own baseline.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import pandas as pd

from collectors import declared_definition
from collectors.schema import RunRecord
from rules import Placement, Roof
from service.store.baselines import (
    BASELINE_KINDS,
    EDIT_REASON,
    EDITS_RECORDED_BY,
    Baseline,
    accept_baseline,
    latest_edits,
    work_model_edits,
)
from service.store.history import BaselineQuery, read_baseline
from service.store.ingest import IngestResult
from service.store.profiles import baseline_definitions
from service.store.sessions import StoreSession

#: Kernels the verdict's note names; the rest are counted.
NAMED = 3


@dataclass(frozen=True)
class WorkModelChange:
    """One kernel whose declared work is defined otherwise than in its newest baseline run.

    Attributes:
        key: The kernel's identity key.
        before: Its expressions then, by ``flops.<precision>`` or ``bytes.<tier>``.
        after: Its expressions now.
    """

    key: str
    before: Mapping[str, str]
    after: Mapping[str, str]

    def words(self) -> str:
        """``gemm: flops.tensor_bf16 '2*M*N*K' → 'M*N*K'``."""
        slots = sorted(set(self.before) | set(self.after))
        moved = [s for s in slots if self.before.get(s) != self.after.get(s)]
        parts = [f"{s} {self.before.get(s, '–')!r} → {self.after.get(s, '–')!r}" for s in moved]
        return f"{self.key}: {', '.join(parts)}"


def work_model_changes(
    session: StoreSession, run: RunRecord, history: Baseline
) -> list[WorkModelChange]:
    """The kernels of ``run`` whose declared work changed since their newest baseline run."""
    declared = {k.key: d for k in run.kernels if (d := declared_definition(k))}
    if not declared:
        return []
    before = baseline_definitions(session, history.frame, declared)
    changes = [
        WorkModelChange(key, old, declared[key])
        for key, old in before.items()
        if old and old != declared[key]
    ]
    return sorted(changes, key=lambda change: change.key)


@dataclass(frozen=True)
class Judged:
    """What the work model edit check needs of the run being judged.

    Attributes:
        run: The run.
        placements: Its kernels on its roof, by key.
        stored: How it was stored (a new base-branch run records its edits).
        device: The card it is judged on.
        base_branch: The branch whose nightly runs are the baseline.
    """

    run: RunRecord
    placements: Mapping[str, Placement]
    stored: IngestResult
    device: str
    base_branch: str


def on_todays_work(
    session: StoreSession, judged: Judged, rows: Baseline
) -> tuple[Baseline, str | None]:
    """``rows`` with each kernel's nights before its work model's edit on today's work.

    Also the verdict's note when the edit shows in this run; a base-branch baseline run stored
    now records it (see the module).
    """
    run = judged.run
    changes = work_model_changes(session, run, rows)
    if changes and judged.stored.created and _is_baseline(run, judged.base_branch):
        _record(session, run, judged.device, changes)
    cuts = _cuts(session, judged, changes)
    if not cuts:
        return rows, None
    frame = rescaled(rows.frame, cuts, run, judged.placements)
    return replace(rows, frame=frame), edit_note(changes) if changes else None


def record_edits(
    session: StoreSession, run: RunRecord, roof: Roof, base_branch: str, stored: IngestResult
) -> None:
    """Record the work model edits of a base-branch run ``ingest`` stored.

    ``check`` records them as it judges; a night ingested with an edited model recorded none,
    and the nights after it were judged against nights of the old work.
    """
    if not (stored.created and _is_baseline(run, base_branch)):
        return
    query = BaselineQuery(
        repo=run.repo or "",
        device=roof.device,
        roof_source=roof.source,
        base_branch=base_branch,
        window=1,
        before_timestamp=run.timestamp - timedelta(microseconds=1),  # the night before it
        up_to_run=stored.run_id,
    )
    rows = read_baseline(session=session, query=query)
    changes = work_model_changes(session, run, rows)
    if changes:
        _record(session, run, roof.device, changes)


def _is_baseline(run: RunRecord, base_branch: str) -> bool:
    return run.kind in BASELINE_KINDS and run.branch == base_branch


def _cuts(
    session: StoreSession, judged: Judged, changes: Sequence[WorkModelChange]
) -> dict[str, datetime]:
    """Each kernel's latest edit on this card: stored ones, and those this run finds."""
    edits = work_model_edits(session=session, repo=judged.run.repo or "")
    cuts = latest_edits(edits, judged.device)
    for change in changes:  # up to the run itself (a PR's edit is recorded nowhere)
        cuts[change.key] = judged.run.timestamp
    return cuts


def _record(
    session: StoreSession, run: RunRecord, device: str, changes: Sequence[WorkModelChange]
) -> None:
    """Record each changed kernel's edit just before ``run`` (its nights up to it: old work)."""
    just_before = run.timestamp - timedelta(microseconds=1)
    for change in changes:
        accept_baseline(
            session=session,
            repo=run.repo or "",
            kernel_key=change.key,
            device=device,
            accepted_by=EDITS_RECORDED_BY,
            reason=f"{EDIT_REASON} ({change.words()})",
            accepted_at=just_before,
        )


def rescaled(
    frame: pd.DataFrame,
    cuts: Mapping[str, datetime],
    run: RunRecord,
    placements: Mapping[str, Placement],
) -> pd.DataFrame:
    """``frame`` with each kernel's rows up to its cut counted with ``run``'s work.

    Percent of roof ``100 * T_roof / T`` with the run's ``T_roof`` and each row's time; the
    work, regime and binding columns are the run's. A kernel the run has no roof time for is
    left as it is.
    """
    now = _today(run, placements, cuts)
    if frame.empty or now.empty:
        return frame
    cut = pd.to_datetime(frame["kernel_key"].map(now["cut"]), utc=True)
    rows = (cut.notna() & (pd.to_datetime(frame["timestamp"], utc=True) <= cut)).to_numpy()
    if not rows.any():
        return frame
    out = frame.copy()
    keys = out.loc[rows, "kernel_key"]
    t_roof = keys.map(now["t_roof_s"]).to_numpy(dtype=float)
    out.loc[rows, "percent_of_roof"] = 100.0 * t_roof / out.loc[rows, "time_s"].to_numpy(float)
    for column in ("total_flops", "peak_flop_time_s", "bytes_dram", "bytes_l2", "bytes_l1"):
        if column in out:
            out.loc[rows, column] = keys.map(now[column]).to_numpy(dtype=float)
    for column in ("regime", "binding"):
        if column in out:
            out.loc[rows, column] = keys.map(now[column]).to_numpy(dtype=object)
    return out


def _today(
    run: RunRecord, placements: Mapping[str, Placement], cuts: Mapping[str, datetime]
) -> pd.DataFrame:
    """One row a kernel with a cut and a roof time today: its cut, roof time and work now."""
    rows = {}
    for kernel in run.kernels:
        placed = placements.get(kernel.key)
        if kernel.key not in cuts or placed is None or not placed.t_roof_s:
            continue
        flops, nbytes = kernel.work()
        rows[kernel.key] = {
            "cut": cuts[kernel.key],
            "t_roof_s": placed.t_roof_s,
            "total_flops": float(sum(flops.values())) if flops else math.nan,
            "peak_flop_time_s": placed.peak_flop_time_s or math.nan,
            **{f"bytes_{tier}": nbytes.get(tier, math.nan) for tier in ("dram", "l2", "l1")},
            "regime": placed.regime,
            "binding": placed.binding,
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def edit_note(changes: Sequence[WorkModelChange]) -> str:
    """The verdict's note: which kernels' work is counted anew, and what changed in it."""
    named = "; ".join(change.words() for change in changes[:NAMED])
    more = f"; and {len(changes) - NAMED} more" if len(changes) > NAMED else ""
    s = "" if len(changes) == 1 else "s"
    return (
        f"The declared work model of {len(changes)} kernel{s} changed since the baseline "
        f"({named}{more}): each earlier night is judged on the new model's work, its percent "
        "of roof 100 × T_roof / T from its own time."
    )
