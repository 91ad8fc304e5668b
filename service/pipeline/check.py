"""The check pipeline: collect -> ingest (one transaction) -> baseline -> rules -> render.

Used by ``roofguard check``, ``roofguard ingest``, the demo and the HTTP upload route, so
all of them judge a run exactly the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pandas as pd
from pydantic import BaseModel, ConfigDict
from sqlmodel import Session

from collectors import CollectOptions
from collectors.schema import RunKind, RunRecord
from collectors.workmodel import apply_work_models
from rules.context import RuleContext
from rules.engine import evaluate, with_findings
from rules.hardware import Catalog, builtin_catalog
from rules.placement import place_run
from rules.roofline import Placement, Roof
from rules.verdict import Verdict
from service.config import RoofguardConfig
from service.errors import BadInput
from service.pipeline.intake import collect_run as intake_collect
from service.pipeline.intake import stamp_run
from service.pipeline.roofs import RoofChoice, choose_roof, names_device, run_device
from service.render.markdown import VerdictLinks, render_verdict
from service.store.history import BaselineQuery, baseline_frame
from service.store.ingest import IngestResult, ingest_run, replace_findings, save_findings
from service.store.levels import load_levels, save_levels
from service.store.queries import list_findings


class RunMeta(BaseModel):
    """What the command line or an upload says about a run (overrides what files say)."""

    model_config = ConfigDict(frozen=True)

    repo: str
    commit: str
    branch: str | None = None
    kind: str | None = None
    pr: int | None = None
    device: str | None = None
    #: Where ``device`` comes from, named when a report names another device.
    device_origin: str = "--device"
    timestamp: datetime | None = None
    runner: str | None = None

    def apply(self, run: RunRecord) -> RunRecord:
        """``run`` stamped with this meta (a PR number implies kind ``pr``)."""
        return stamp_run(
            run,
            repo=self.repo,
            commit=self.commit,
            branch=self.branch,
            kind=self.kind,
            pull_request=self.pr,
            timestamp=self.timestamp,
            runner=self.runner,
        )


@dataclass(frozen=True)
class CheckOutcome:
    """A judged run: the verdict, its markdown, and where it is stored."""

    verdict: Verdict
    markdown: str
    run_id: int
    created: bool
    roof: Roof
    placements: Mapping[str, Placement]


def catalog_for(config: RoofguardConfig) -> Catalog:
    """The built-in catalog with the config's ``[devices.*]`` overrides and additions."""
    return builtin_catalog().with_overrides(config.devices)


@dataclass(frozen=True)
class Remeasures:
    """The PR gate's re-measure step (issue 16: screen, re-measure, decide).

    Attributes:
        runs: Re-measurements of the run's commit (``check --rerun``); not stored.
        expected: The caller will re-measure the suspects (``check --suspects``), so no
            kernel fails on one measurement.
    """

    runs: tuple[RunRecord, ...] = ()
    expected: bool = False


def _read(paths: Sequence[Path], meta: RunMeta, config: RoofguardConfig) -> RunRecord:
    """Read the files of one run (no meta applied yet), checking the device they name.

    A device given by the meta (``--device``, an upload's field) or else the config names the
    device of files that name none; a file naming another device is an error.

    Raises:
        DeviceConflict: A report names another device than the one given.
    """
    given = meta.device or config.device
    run = intake_collect(paths, CollectOptions(keys=config.keys, device=given))
    origin = meta.device_origin if meta.device else "the config's `device`"
    run_device(run, given=given, catalog=catalog_for(config), origin=origin)
    if config.work_models:
        run = apply_work_models(run, config.work_models, source="roofguard config")
    return run


def collect_run(paths: Sequence[Path], *, meta: RunMeta, config: RoofguardConfig) -> RunRecord:
    """Read every file of one run, apply declared work models and the meta."""
    return meta.apply(_read(paths, meta, config))


def _check_rerun(path: Path, rerun: RunRecord, run: RunRecord, commits: set[str]) -> None:
    if rerun.commit and rerun.commit not in commits:
        raise BadInput(
            f"{path}: --rerun measured commit {rerun.commit!r}, but the run is "
            f"{sorted(commits)[0]!r}; re-measurements must be of the same commit"
        )
    if rerun.device.name != run.device.name:
        raise BadInput(
            f"{path}: --rerun measured on {rerun.device.name!r}, but the run on "
            f"{run.device.name!r}; re-measure on the same device"
        )
    if not rerun.kernels:
        raise BadInput(
            f"{path}: --rerun holds no kernels: the profiling command re-measured nothing "
            "(does its kernel filter match the names --suspects-regex writes?), so no "
            "suspect could be confirmed"
        )
    keys = {k.key for k in run.kernels}
    for kernel in rerun.kernels:
        if kernel.key not in keys:
            raise BadInput(
                f"{path}: --rerun kernel {kernel.name!r} (key {kernel.key!r}) is not in the "
                "run; re-measure the run's own kernels"
            )


def collect_with_reruns(
    paths: Sequence[Path], reruns: Sequence[Path], *, meta: RunMeta, config: RoofguardConfig
) -> tuple[RunRecord, tuple[RunRecord, ...]]:
    """The run and its re-measurements (``check --rerun``), all checked before anything is stored.

    A re-measurement must be of the same commit (the one its files name, or ``meta``'s) and
    device, and hold kernels, only kernels of the run.

    Raises:
        BadInput: A re-measurement file breaks that; the error names the file and the kernel.
    """
    raw = _read(paths, meta, config)
    commits = {c for c in (meta.commit, raw.commit) if c}
    again = [(path, _read([path], meta, config)) for path in reruns]
    for path, rerun in again:
        _check_rerun(path, rerun, raw, commits)
    return meta.apply(raw), tuple(meta.apply(rerun) for _, rerun in again)


def verify_device(run: RunRecord, config: RoofguardConfig) -> None:
    """Refuse a RunRecord (an upload's JSON) naming another device than the config's.

    Raises:
        DeviceConflict: It names a device that is not the config's ``device``.
    """
    run_device(
        run, given=config.device, catalog=catalog_for(config), origin="the config's `device`"
    )


def choose_for(run: RunRecord, config: RoofguardConfig, measured: Roof | None = None) -> RoofChoice:
    """The roof the run is judged against, as the config chooses, and why when not asked.

    The note says when the report's own roof stands in for a device the catalog lacks. The
    config's ``device`` only names runs whose reports name none (see ``roofs``).
    """
    default = None if names_device(run.device.name) else config.device
    return choose_roof(
        run, device=default, source=config.roof, catalog=catalog_for(config), measured=measured
    )


def roof_for(run: RunRecord, config: RoofguardConfig, measured: Roof | None = None) -> Roof:
    """The roof the run is judged against, as the config chooses."""
    return choose_for(run, config, measured).roof


def noted(run: RunRecord, choice: RoofChoice) -> RunRecord:
    """``run`` with the roof choice's note (if any) among its notes, shown in the verdict."""
    if choice.note is None or choice.note in run.notes:
        return run
    return run.model_copy(update={"notes": (*run.notes, choice.note)})


def roofs_beside(
    judged: Roof, run: RunRecord, config: RoofguardConfig, measured: Roof | None
) -> tuple[Roof, ...]:
    """Roofs shown next to the judged one (every verdict states its roof).

    The runner's measured roof beside the datasheet's, and the datasheet's beside a measured
    or report-derived one.
    """
    others: list[Roof] = []
    if measured is not None and judged.source != "measured":
        others.append(measured)
    if judged.source != "datasheet":
        catalog = catalog_for(config)
        spec = catalog.find(judged.device) or catalog.find(run.device.name)
        if spec is not None:
            others.append(spec.roof())
    return tuple(others)


def store_run(
    *, session: Session, run: RunRecord, config: RoofguardConfig, roof: Roof, trusted: bool = True
) -> tuple[IngestResult, Mapping[str, Placement]]:
    """Place ``run`` on ``roof`` and ingest it (one transaction; the same content is a no-op)."""
    placements = place_run(run, roof, band=config.rules.borderline_band)
    stored = ingest_run(session=session, run=run, placements=placements, roof=roof, trusted=trusted)
    return stored, placements


def check_run(
    *,
    session: Session,
    run: RunRecord,
    config: RoofguardConfig,
    base_sha: str | None = None,
    links: VerdictLinks | Callable[[int], VerdictLinks] | None = None,
    measured: Roof | None = None,
    trusted: bool = True,
    remeasures: Remeasures | None = None,
) -> CheckOutcome:
    """Ingest ``run`` (idempotent) and judge it against its baseline.

    ``links`` may be a function of the stored run's id (the service links to the run's page,
    whose id exists only once the run is stored). ``remeasures`` are the PR gate's
    reruns: they judge the run, they are not stored; the findings of the verdict they give
    replace those stored with the run. The gate's levels are read from the store into the
    context and, for a newly stored run, the ones ``evaluate`` computed are stored
    (``service.store.levels``).
    """
    choice = choose_for(run, config, measured)
    run, roof = noted(run, choice), choice.roof
    stored, placements = store_run(
        session=session, run=run, config=config, roof=roof, trusted=trusted
    )
    rows = _history(session, run, roof, config, base_sha, stored.run_id)
    history, gate_history = _windows(rows, config)
    levels_run = _levels_run(run, rows, stored)
    context = RuleContext(
        run=run,
        roof=roof,
        history=history,
        gate_history=gate_history,
        config=config.rules,
        trusted=trusted,
        other_roofs=roofs_beside(roof, run, config, measured),
        reruns=(remeasures or Remeasures()).runs,
        reruns_expected=(remeasures or Remeasures()).expected,
        stored_levels=None if levels_run is None else load_levels(session, levels_run),
        placed=placements,
    )
    judged = _evaluate(session, context, levels_run if stored.created else None)
    verdict = _stored_findings(session, _stamped(judged, run, stored.run_id), stored, context)
    resolved = links(stored.run_id) if callable(links) else links
    markdown = render_verdict(verdict, links=resolved)
    return CheckOutcome(verdict, markdown, stored.run_id, stored.created, roof, placements)


def _evaluate(session: Session, context: RuleContext, levels_run: int | None) -> Verdict:
    """Judge ``context``; store the levels the gate computed under ``levels_run`` (if any).

    None for a run stored before: it is judged again read-only (its page, the same upload
    again).
    """
    judged = evaluate(context)
    if levels_run is not None:
        save_levels(session, levels_run, judged.levels_to_store)
    return judged.verdict


def _history(
    session: Session,
    run: RunRecord,
    roof: Roof,
    config: RoofguardConfig,
    base_sha: str | None,
    run_id: int,
) -> pd.DataFrame:
    """The run's baseline on its roof, without the run itself (stored before it is judged).

    The gate's window of runs or the baseline's, whichever is longer (``_windows`` cuts
    each from it); the runs before the baseline's window carry only what the gate reads.
    """
    query = BaselineQuery(
        repo=run.repo or "",
        device=roof.device,
        roof_source=roof.source,
        base_branch=config.base_branch,
        window=max(config.baseline.window, config.baseline.gate_window),
        before_commit=base_sha,
        full_runs=config.baseline.window,
    )
    history = baseline_frame(session=session, query=query)
    return history[history["run_id"] != run_id]


def _windows(
    rows: pd.DataFrame, config: RoofguardConfig
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The baseline's window of ``rows`` and the gate's (None where it is the same runs)."""
    history = _newest_runs(rows, config.baseline.window)
    gate = _newest_runs(rows, config.baseline.gate_window)
    return history, None if gate.attrs["runs"] == history.attrs["runs"] else gate


def _newest_runs(frame: pd.DataFrame, count: int) -> pd.DataFrame:
    """The rows of the ``count`` newest runs of ``frame`` (``attrs["runs"]``, oldest first).

    Counted before the judged run is left out, as the store counts its window.
    """
    runs = list(frame.attrs["runs"])
    if len(runs) <= count:
        return frame
    kept = runs[-count:]
    rows = frame[frame["run_id"].isin(kept)]
    rows.attrs = {**frame.attrs, "runs": kept}
    return rows


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


def _stored_findings(
    session: Session, verdict: Verdict, stored: IngestResult, context: RuleContext
) -> Verdict:
    """The stored findings of a run are those of its final verdict.

    A new run saves its findings. A run stored before keeps the findings saved then, unless
    re-measurements judged it anew (``check --rerun``, after the screening pass stored it):
    then this verdict's findings replace the first pass's in the caller's transaction, and
    the same check again writes nothing (``replace_findings`` is idempotent). A run checked
    again keeps its verdict: the stored findings, and the conclusion and kernel statuses
    they give, not fresh ones against a history that has moved on since.
    """
    if stored.created:
        save_findings(session=session, run_id=stored.run_id, findings=verdict.findings)
        return verdict
    if context.reruns:
        replace_findings(session=session, run_id=stored.run_id, findings=verdict.findings)
        return verdict
    findings = tuple(list_findings(session=session, run_id=stored.run_id))
    return with_findings(verdict, findings, context.config.fail_on)
