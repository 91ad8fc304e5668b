"""A declared work model edited in roofguard.toml restarts its kernels' history.

Percent of roof is work over time: fixing ``2*M*N*K`` to ``M*N*K`` halves it at the same
time, and the next night failed "regressed (confirmed)" (work-change said "fewer launches or a
smaller shape"). The measurements of one kernel are like for like only under one definition
of its work. Each stored record keeps the expressions that made its declared work (in its
provenance, ``collectors.declared_definition``): a kernel whose expressions differ from those
of its newest baseline run is judged as a new kernel, and the verdict says why.

A base-branch nightly or local run that finds the change records it as an acceptance at its
own time (``accepted_by`` roofguard), so every later check's baseline starts there too; a
pull request's run only leaves the old rows out of its own baseline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from collectors import declared_definition
from collectors.schema import RunRecord
from service.store.baselines import (
    BASELINE_KINDS,
    RESTART_REASON,
    RESTARTED_BY,
    Baseline,
    accept_baseline,
)
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


def restarted(
    session: StoreSession,
    run: RunRecord,
    rows: Baseline,
    stored: IngestResult,
    where: tuple[str, str],
) -> tuple[Baseline, str | None]:
    """``rows`` without the kernels whose work model changed, and the verdict's note on them.

    ``where``: the run's card and the base branch. A base-branch baseline run stored now
    records each restart as an acceptance (see the module).
    """
    changes = work_model_changes(session, run, rows)
    if not changes:
        return rows, None
    device, base_branch = where
    if stored.created and run.kind in BASELINE_KINDS and run.branch == base_branch:
        _accept(session, run, device, changes)
    return rows.without_kernels({c.key for c in changes}), restart_note(changes)


def _accept(
    session: StoreSession, run: RunRecord, device: str, changes: Sequence[WorkModelChange]
) -> None:
    """Restart each changed kernel's baseline at ``run`` (its rows from this run on count)."""
    just_before = run.timestamp - timedelta(microseconds=1)
    for change in changes:
        accept_baseline(
            session=session,
            repo=run.repo or "",
            kernel_key=change.key,
            device=device,
            accepted_by=RESTARTED_BY,
            reason=f"{RESTART_REASON} ({change.words()})",
            accepted_at=just_before,
        )


def restart_note(changes: Sequence[WorkModelChange]) -> str:
    """The verdict's note: which kernels restarted, and what changed in their definition."""
    named = "; ".join(change.words() for change in changes[:NAMED])
    more = f"; and {len(changes) - NAMED} more" if len(changes) > NAMED else ""
    s = "" if len(changes) == 1 else "s"
    return (
        f"The declared work model of {len(changes)} kernel{s} changed since the baseline "
        f"({named}{more}): percent of roof before it is not like for like, so each is judged "
        "as a new kernel from this run on."
    )
