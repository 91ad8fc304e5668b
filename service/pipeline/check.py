"""The check pipeline: collect -> ingest (one transaction) -> baseline -> rules -> render.

Used by ``roofguard check``, ``roofguard ingest``, the demo and the HTTP upload route, so
all of them judge a run exactly the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING

import pandas as pd

from collectors.schema import RunKind, RunRecord
from rules import (
    Placement,
    Roof,
    RuleContext,
    Severity,
    Verdict,
    evaluate,
    place_run,
    with_findings,
    with_profile_changes,
)
from service.config import RoofguardConfig
from service.pipeline.acceptnote import accepted_verdict, restarted_verdict
from service.pipeline.agenote import age_noted
from service.pipeline.basechoice import NONE_NAMED, AskedBase, BaseChoice, choose_base
from service.pipeline.branchnote import branch_noted
from service.pipeline.crossdevice import device_baseline
from service.pipeline.mergebasenote import merge_base_noted
from service.pipeline.reruns import Reruns
from service.pipeline.roofchange import on_todays_roof
from service.pipeline.roofs import choose_for, noted, roofs_beside
from service.pipeline.runnernote import runner_noted
from service.pipeline.verdictnotes import with_note
from service.pipeline.workchange import Judged, on_todays_work
from service.store.baselines import acceptances_at
from service.store.history import Baseline, BaselineQuery, MergeBase, read_baseline
from service.store.ingest import (
    IngestResult,
    ingest_run,
    replace_findings,
    save_findings,
    save_judged,
)
from service.store.levels import load_levels, save_levels
from service.store.profiles import baseline_kernels, keep_stored
from service.store.queries import judged_config, list_findings, run_judged
from service.store.sessions import StoreSession

if TYPE_CHECKING:  # jinja2 and the markdown templates: imported when the markdown is read
    from service.render.markdown import VerdictLinks

#: The note on the verdict of a run stored without a check, judged when first asked for.
NEVER_CHECKED = (
    "stored by `roofguard ingest` without a check: judged now, against the runs stored before it"
)
#: The note of a run judged again because its configuration changed since its first check.
CONFIG_CHANGED = (
    "judged again: the configuration changed since this run's stored verdict was judged"
)


@dataclass(frozen=True)
class CheckOutcome:
    """A judged run: the verdict, where it is stored, and its markdown (with ``links``)."""

    verdict: Verdict
    run_id: int
    created: bool
    roof: Roof
    placements: Mapping[str, Placement]
    links: VerdictLinks | None = None

    @cached_property
    def markdown(self) -> str:
        """The verdict's markdown, rendered once when first read (jinja2, on demand)."""
        from service.render.markdown import render_verdict

        return render_verdict(self.verdict, links=self.links)


def store_run(
    *,
    session: StoreSession,
    run: RunRecord,
    config: RoofguardConfig,
    roof: Roof,
    trusted: bool = True,
) -> tuple[IngestResult, Mapping[str, Placement]]:
    """Place ``run`` on ``roof`` and ingest it (one transaction; the same content is a no-op)."""
    placements = place_run(run, roof, band=config.rules.borderline_band)
    stored = ingest_run(session=session, run=run, placements=placements, roof=roof, trusted=trusted)
    if stored.created:  # the next night's check compares with it (``_explained``)
        keep_stored(session, stored.run_id, stored.content_hash, run)
    return stored, placements


@dataclass(frozen=True)
class RunnerState:
    """What a check knows of its runner: its measured roof, and whether it is healthy.

    Attributes:
        measured: The runner's measured roof, when it has one (``roof = "measured"``).
        trusted: False when the runner's health preflight found it degraded.
    """

    measured: Roof | None = None
    trusted: bool = True


def check_run(
    *,
    session: StoreSession,
    run: RunRecord,
    config: RoofguardConfig,
    base: AskedBase = NONE_NAMED,
    links: VerdictLinks | Callable[[int], VerdictLinks] | None = None,
    runner: RunnerState = RunnerState(),
    reruns: Reruns | None = None,
    rejudge: bool = False,
) -> CheckOutcome:
    """Ingest ``run`` (idempotent) and judge it against its baseline.

    ``base``: the base branch and merge base the caller names; a run stored before is judged
    against its stored verdict's where it names none (``service.pipeline.basechoice``).
    ``links`` may be a function of the stored run's id (a run's page has an id once stored).
    ``reruns``, the PR gate's re-measurements, judge the run unstored; their verdict's
    findings replace the stored ones, as do a run judged again's (``rejudge``) under a changed
    configuration (``_stored_findings``). A new run's gate levels are stored; the markdown
    is rendered when first read.
    """
    choice = choose_for(run, config, runner.measured)
    run, roof = noted(run, choice), choice.roof
    stored, placements = store_run(
        session=session, run=run, config=config, roof=roof, trusted=runner.trusted
    )
    chosen = choose_base(session, stored, base, config)
    config, merge_base = chosen.config, chosen.judged.merge_base
    rows, notes = _history(session, run, roof, config, merge_base, (stored, placements))
    history, gate_history = _windows(rows, config)
    levels_run = _levels_run(run, rows.frame, stored)
    context = RuleContext(
        run=run,
        roof=roof,
        history=history,
        gate_history=gate_history,
        config=config.rules,
        trusted=runner.trusted,
        other_roofs=roofs_beside(roof, run, config, runner.measured),
        reruns=(reruns or Reruns()).runs,
        reruns_expected=(reruns or Reruns()).expected,
        stored_levels=None if levels_run is None else load_levels(session, levels_run),
        placed=placements,
        cross_device=device_baseline(session, run, config, placements, rows, merge_base),
    )
    judged = _evaluate(session, context, levels_run if stored.created else None)
    judged = _with_notes(session, judged, (run, rows, notes), merge_base, config, stored.run_id)
    verdict = _stored_findings(session, judged, (stored, chosen), context, rejudge)
    resolved = links(stored.run_id) if callable(links) else links
    return CheckOutcome(verdict, stored.run_id, stored.created, roof, placements, resolved)


def _with_notes(
    session: StoreSession,
    verdict: Verdict,
    judged: tuple[RunRecord, Baseline, tuple[str, ...]],
    merge_base: MergeBase | None,
    config: RoofguardConfig,
    run_id: int,
) -> Verdict:
    """The verdict of ``judged`` (the run, its baseline, roof and edit notes) with their notes."""
    run, rows, notes = judged
    verdict = restarted_verdict(verdict, rows.restarted, run_id, config)
    verdict = _baseline_noted(session, verdict, (rows, run, config.base_branch), merge_base)
    verdict = branch_noted(session, verdict, run, config.base_branch, run_id)
    for note in notes:
        verdict = with_note(verdict, note)
    baseline_runs = [r for r in rows.runs[-config.baseline.window :] if r != run_id]
    return runner_noted(session, verdict, run, baseline_runs, rows.frame)


def _evaluate(session: StoreSession, context: RuleContext, levels_run: int | None) -> Verdict:
    """Judge ``context``; store the levels the gate computed under ``levels_run`` (if any).

    None for a run stored before: it is judged again read-only (its page, the same upload
    again).
    """
    judged = evaluate(context)
    if levels_run is not None:
        save_levels(session, levels_run, judged.levels_to_store)
    return _explained(session, judged.verdict, context)


def _explained(session: StoreSession, verdict: Verdict, context: RuleContext) -> Verdict:
    """The verdict with what the profiler saw move on each failing or warned kernel's finding.

    Compared with the newest baseline run that has the kernel (its stored record).
    """
    keys = {f.kernel for f in verdict.findings if f.kernel and f.severity != Severity.INFO}
    baseline = baseline_kernels(session, context.history, keys)
    return with_profile_changes(verdict, context.run, baseline)


def _history(
    session: StoreSession,
    run: RunRecord,
    roof: Roof,
    config: RoofguardConfig,
    merge_base: MergeBase | None,
    stored_as: tuple[IngestResult, Mapping[str, Placement]],
) -> tuple[Baseline, tuple[str, ...]]:
    """The run's baseline on its roof, without the run itself (stored before it is judged).

    Runs placed on other datasheet figures are read on today's (``roofchange``); each
    kernel's nights before an edit of its declared work model are on today's work
    (``workchange``); the notes say so.

    The gate's window of runs or the baseline's, whichever is longer (``_windows`` cuts
    each from it); the runs before the baseline's window carry only what the gate reads.
    A check that stored its run (so it writes anyway) keeps the baseline runs' columns
    (``service.store.columnar``); judged again, read-only, it writes nothing.
    """
    stored, placements = stored_as
    query = BaselineQuery(
        repo=run.repo or "",
        device=roof.device,
        roof_source=roof.source,
        base_branch=config.base_branch,
        window=max(config.baseline.window, config.baseline.gate_window),
        before_commit=merge_base.sha if merge_base else None,
        before_timestamp=_baseline_ends(run, merge_base),
        full_runs=config.baseline.window,
        keep_columns=stored.created,
        up_to_run=stored.run_id,
        accepted_until=run.timestamp,  # an accept made since does not restart its baseline
    )
    rows = read_baseline(session=session, query=query).without_run(stored.run_id)
    rows, roof_note = on_todays_roof(session, rows, roof, config)
    judged = Judged(run, placements, stored, roof.device, config.base_branch)
    rows, edit_note = on_todays_work(session, judged, rows)
    return rows, tuple(note for note in (roof_note, edit_note) if note)


def _baseline_ends(run: RunRecord, merge_base: MergeBase | None) -> datetime | None:
    """Where the baseline stops when no run of the merge base is stored (or none is given).

    At the merge base's commit time, when known. A nightly or local run is judged against
    the runs measured before it: one uploaded late (a retried upload, a backfill through
    ``check``) does not read the nights measured after it. A PR otherwise reads the newest.
    """
    if merge_base is not None and merge_base.time is not None:
        return merge_base.time
    return None if run.kind == RunKind.PR else run.timestamp


def _windows(rows: Baseline, config: RoofguardConfig) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The baseline's window of ``rows`` and the gate's (None where it is the same runs).

    Counted before the judged run is left out, as the store counts its window.
    """
    history = rows.newest(config.baseline.window)
    gate = rows.newest(config.baseline.gate_window)
    return history.frame, None if gate.runs == history.runs else gate.frame


def _levels_run(run: RunRecord, history: pd.DataFrame, stored: IngestResult) -> int | None:
    """The run the gate's levels are kept under: the newest of the histories they come from.

    A nightly run is that run for the next PR: its levels are computed as it is judged, and
    only when it is new (judged again, for its page, they would be computed to be dropped).
    A PR run reads (and adds to) the levels of its baseline's newest run.
    """
    if run.kind == RunKind.NIGHTLY:
        return stored.run_id if stored.created else None
    if history.empty:
        return None
    return int(history["run_id"].iloc[int(history["timestamp"].argmax())])


def _baseline_noted(
    session: StoreSession,
    verdict: Verdict,
    judged: tuple[Baseline, RunRecord, str],
    merge_base: MergeBase | None,
) -> Verdict:
    """The verdict with the notes on where its baseline stops and how old its newest run is.

    ``judged``: the baseline, the run and the base branch.
    """
    rows, _, branch = judged
    verdict = merge_base_noted(verdict, rows, merge_base, branch)
    return age_noted(session, verdict, judged, merge_base)


def _stamped(verdict: Verdict, run: RunRecord, run_id: int) -> Verdict:
    """The verdict naming the stored run it judged."""
    return verdict.model_copy(
        update={
            "run_id": run_id,
            "repo": run.repo,
            "commit": run.commit,
            "pull_request": run.pull_request,
        }
    )


def config_digest(config: RoofguardConfig) -> str:
    """The sha256 of ``config``: what a stored verdict was judged with (``judged_config``)."""
    return hashlib.sha256(config.model_dump_json().encode()).hexdigest()


def _stored_findings(
    session: StoreSession,
    verdict: Verdict,
    judged: tuple[IngestResult, BaseChoice],
    context: RuleContext,
    rejudge: bool,
) -> Verdict:
    """The stored findings of a run are those of its final verdict, naming the run.

    A new run saves its findings. A run stored before keeps the findings saved then, unless
    re-measurements judged it anew (``check --rerun``, after the screening pass stored it):
    then this verdict's findings replace the first pass's in the caller's transaction, and
    the same check again writes nothing (``replace_findings`` is idempotent). A run checked
    again keeps its verdict: the stored findings, and the conclusion and kernel statuses
    they give, not fresh ones against a history that has moved on since; unless a check that
    may judge again (``rejudge``) runs under another configuration than the stored verdict
    was judged with, or a maintainer accepted some of its changes since
    (``service.pipeline.acceptnote``): then it is judged again, and says so. A check naming
    another baseline than the stored verdict's (``judged``: the run as stored, and the
    baseline chosen) gets this verdict, noted and not stored. A run stored by ``ingest`` has
    no verdict to keep: it is judged now, against the runs stored before it (its "no
    findings" is not a pass). A verdict saved also records whether it judged anything, for
    the lists that read no verdict, and under which configuration and baseline.
    """
    stored, base = judged
    verdict = _stamped(verdict, context.run, stored.run_id)
    digest = config_digest(base.config) if rejudge or stored.created or context.reruns else None
    looked_up = digest is not None and not stored.created  # a new run has no verdict yet
    before = judged_config(session=session, run_id=stored.run_id) if looked_up else None
    changed = before is not None and before != digest
    accepted = [] if stored.created else acceptances_at(session=session, run_id=stored.run_id)
    if accepted:
        verdict = accepted_verdict(verdict, accepted, context.config.fail_on)
    if base.other and not context.reruns:  # the caller's answer; the page keeps the stored one
        return with_note(verdict, base.note())
    if stored.created or context.reruns or changed or accepted:
        save = save_findings if stored.created else replace_findings
        save(session=session, run_id=stored.run_id, findings=verdict.findings)
        save_judged(
            session=session,
            run_id=stored.run_id,
            judged=not verdict.judged_nothing,
            config=digest,
            base=base.judged if digest is not None else None,  # a check's; a page's is stored
        )
        return with_note(verdict, CONFIG_CHANGED) if changed else verdict
    if run_judged(session=session, run_id=stored.run_id) is None:
        return with_note(verdict, NEVER_CHECKED)
    findings = tuple(list_findings(session=session, run_id=stored.run_id))
    return with_findings(verdict, findings, context.config.fail_on)
