"""Store verbs (keyword-only): ingest a run, save findings, read runs back, accept baselines.

Every verb works inside the caller's session (``service.store.db.session_scope``), so one
``session_scope`` is one transaction: an ingest that fails half-way leaves nothing behind.
Bulk rows go through SQLAlchemy Core ``executemany`` (2,000 measurements per run), never one
ORM object per row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from collectors.schema import KernelRecord, RunKind, RunRecord
from rules.roofline import Placement, Roof
from rules.verdict import Finding
from service.errors import BadInput, NotFound
from service.store.ids import (
    as_utc,
    canonical_json,
    device_id,
    kernel_ids,
    key_hash,
    repo_id,
)
from service.store.tables import (
    BaselineAcceptance,
    Device,
    FindingRow,
    Measurement,
    Repository,
    Run,
)

#: Run kinds that may become a baseline (pull-request runs never do).
BASELINE_KINDS: tuple[str, ...] = (RunKind.NIGHTLY.value, RunKind.LOCAL.value)


@dataclass(frozen=True)
class IngestResult:
    """What ``ingest_run`` did.

    Attributes:
        run_id: The stored run (the first one, when the content was already stored).
        created: False when the same content was already stored (nothing was written).
        content_hash: sha256 of the canonical RunRecord JSON.
        kernels: Number of kernels of the run.
    """

    run_id: int
    created: bool
    content_hash: str
    kernels: int = 0


@dataclass(frozen=True)
class RunSummary:
    """A stored run without its record (cheap to list).

    Attributes:
        id: Run id.
        repo: OWNER/NAME.
        device: Device name the run is stored under.
        commit: Commit SHA.
        branch: Branch.
        pull_request: PR number, for pr runs.
        kind: nightly, pr or local.
        timestamp: When it was measured (UTC).
        runner: Runner name.
        roof_source: datasheet, report, measured or custom.
        roof_label: The roof's label, e.g. "H100-SXM5 (datasheet)".
        trusted: False when the runner failed its health preflight.
        content_hash: sha256 of the canonical RunRecord JSON.
    """

    id: int
    repo: str
    device: str
    commit: str | None
    branch: str | None
    pull_request: int | None
    kind: str
    timestamp: datetime
    runner: str | None
    roof_source: str
    roof_label: str
    trusted: bool
    content_hash: str


def _roof_json(roof: Roof) -> dict[str, Any]:
    return {
        "device": roof.device,
        "source": roof.source,
        "peak_flop_per_s": dict(roof.peak_flop_per_s),
        "bandwidth_byte_per_s": dict(roof.bandwidth_byte_per_s),
    }


def _run_row(
    run: RunRecord, *, repo: int, device: int, roof: Roof, trusted: bool, digest: str, record: str
) -> dict[str, Any]:
    return {
        "repo_id": repo,
        "device_id": device,
        "commit": run.commit,
        "branch": run.branch,
        "pull_request": run.pull_request,
        "kind": run.kind.value,
        "timestamp": as_utc(run.timestamp),
        "runner": run.runner,
        "device_reported": run.device.name,
        "driver": run.device.driver,
        "profiler_tool": run.profiler.tool,
        "profiler_version": run.profiler.version,
        "clock_control": run.profiler.clock_control,
        "cache_control": run.profiler.cache_control,
        "roof_source": roof.source,
        "roof_label": roof.label,
        "roof_json": _roof_json(roof),
        "trusted": trusted,
        "content_hash": digest,
        "record_json": record,
        "created_at": datetime.now(UTC),
    }


def _finite(value: float | None) -> float | None:
    """None for missing or infinite figures (intensity over zero bytes is infinite)."""
    if value is None or value != value or value in (float("inf"), float("-inf")):
        return None
    return float(value)


def measurement_row(
    kernel: KernelRecord,
    placement: Placement | None,
    *,
    run_id: int,
    kernel_id: int,
    roof_source: str,
) -> dict[str, Any]:
    """The measurements row of one kernel: raw counters and the derived figures beside them."""
    flops, nbytes = kernel.work()
    p = placement
    intensity = p.intensity if p else {}
    return {
        "run_id": run_id,
        "kernel_id": kernel_id,
        "launches": kernel.launches,
        "time_s": kernel.duration_s,
        "flops_json": dict(flops),
        "total_flops": float(sum(flops.values())) if flops else None,
        "bytes_dram": nbytes.get("dram"),
        "bytes_l2": nbytes.get("l2"),
        "bytes_l1": nbytes.get("l1"),
        "percent_of_roof": p.percent_of_roof if p else None,
        "regime": p.regime if p else None,
        "binding": p.binding if p else None,
        "borderline": bool(p and p.borderline),
        "intensity_dram": _finite(intensity.get("dram")),
        "intensity_l2": _finite(intensity.get("l2")),
        "intensity_l1": _finite(intensity.get("l1")),
        "t_roof_s": p.t_roof_s if p else None,
        "peak_flop_time_s": p.peak_flop_time_s if p else None,
        "roof_source": roof_source,
    }


def find_run(*, session: Session, repo: str, content_hash: str) -> int | None:
    """Id of the run of ``repo`` with this content hash, None when not stored."""
    rid = repo_id(session=session, repo=repo)
    if rid is None:
        return None
    runs = Run.__table__  # type: ignore[attr-defined]
    stmt = sa.select(runs.c.id).where(runs.c.repo_id == rid, runs.c.content_hash == content_hash)
    found = session.execute(stmt).scalar()
    return None if found is None else int(found)


def _insert_run(session: Session, row: Mapping[str, Any]) -> int | None:
    """Insert the run row; None when a concurrent ingest committed the same content first.

    The savepoint keeps the caller's transaction usable after the unique-key violation
    (PostgreSQL; SQLite writers are serialised by ``BEGIN IMMEDIATE``).
    """
    runs = Run.__table__  # type: ignore[attr-defined]
    try:
        with session.begin_nested():
            return int(session.execute(sa.insert(runs).returning(runs.c.id), row).scalar_one())
    except sa.exc.IntegrityError as exc:
        if "content_hash" not in str(exc.orig):
            raise
        return None


def ingest_run(
    *,
    session: Session,
    run: RunRecord,
    placements: Mapping[str, Placement],
    roof: Roof,
    trusted: bool = True,
) -> IngestResult:
    """Store a run with its placements on ``roof`` (one transaction: the caller's session).

    The device is stored under ``roof.device`` (the catalog id when the catalog knows it).
    Ingesting the same content again writes nothing and returns the first run's id.

    Raises:
        BadInput: The run names no repository.
    """
    if not run.repo:
        raise BadInput("run has no repository; give --repo OWNER/NAME")
    record = canonical_json(run)
    digest = hashlib.sha256(record.encode("utf-8")).hexdigest()
    existing = find_run(session=session, repo=run.repo, content_hash=digest)
    if existing is not None:
        return IngestResult(existing, False, digest, len(run.kernels))
    rid = repo_id(session=session, repo=run.repo, create=True)
    did = device_id(session=session, device=roof.device, create=True)
    assert rid is not None and did is not None  # created above
    row = _run_row(
        run, repo=rid, device=did, roof=roof, trusted=trusted, digest=digest, record=record
    )
    run_id = _insert_run(session, row)
    if run_id is None:  # another process stored the same content meanwhile
        existing = find_run(session=session, repo=run.repo, content_hash=digest)
        assert existing is not None
        return IngestResult(existing, False, digest, len(run.kernels))
    ids = kernel_ids(session=session, repo_id=rid, kernels={k.key: k.name for k in run.kernels})
    rows = [
        measurement_row(
            k, placements.get(k.key), run_id=run_id, kernel_id=ids[k.key], roof_source=roof.source
        )
        for k in run.kernels
    ]
    if rows:
        session.execute(sa.insert(Measurement.__table__), rows)  # type: ignore[attr-defined]
    session.flush()
    return IngestResult(run_id, True, digest, len(run.kernels))


def save_findings(*, session: Session, run_id: int, findings: Iterable[Finding]) -> int:
    """Store the findings of a check on run ``run_id``, replacing earlier ones; returns count."""
    table = FindingRow.__table__  # type: ignore[attr-defined]
    session.execute(sa.delete(table).where(table.c.run_id == run_id))
    now = datetime.now(UTC)
    rows = [
        {
            "run_id": run_id,
            "kernel_key": f.kernel,
            "rule": f.rule,
            "severity": f.severity.value,
            "stability": f.stability.value,
            "message": f.message,
            "advice": f.advice.value if f.advice else None,
            "numbers_json": dict(f.numbers),
            "finding_json": f.model_dump(mode="json"),
            "created_at": now,
        }
        for f in findings
    ]
    if rows:
        session.execute(sa.insert(table), rows)
    return len(rows)


def list_findings(*, session: Session, run_id: int) -> list[Finding]:
    """The stored findings of run ``run_id``, in the order they were saved."""
    table = FindingRow.__table__  # type: ignore[attr-defined]
    stmt = sa.select(table.c.finding_json).where(table.c.run_id == run_id).order_by(table.c.id)
    return [Finding.model_validate(data) for data in session.execute(stmt).scalars()]


def _summary_select() -> sa.Select[Any]:
    runs, repos = Run.__table__, Repository.__table__  # type: ignore[attr-defined]
    devices = Device.__table__  # type: ignore[attr-defined]
    return (
        sa.select(
            runs.c.id,
            repos.c.name.label("repo"),
            devices.c.name.label("device"),
            runs.c.commit,
            runs.c.branch,
            runs.c.pull_request,
            runs.c.kind,
            runs.c.timestamp,
            runs.c.runner,
            runs.c.roof_source,
            runs.c.roof_label,
            runs.c.trusted,
            runs.c.content_hash,
        )
        .join(repos, repos.c.id == runs.c.repo_id)
        .join(devices, devices.c.id == runs.c.device_id)
    )


def _summary(row: sa.Row[Any]) -> RunSummary:
    data = row._asdict()
    data["timestamp"] = as_utc(data["timestamp"])
    data["trusted"] = bool(data["trusted"])
    return RunSummary(**data)


def get_run(*, session: Session, run_id: int) -> RunSummary:
    """The run ``run_id``.

    Raises:
        NotFound: No such run.
    """
    runs = Run.__table__  # type: ignore[attr-defined]
    row = session.execute(_summary_select().where(runs.c.id == run_id)).first()
    if row is None:
        raise NotFound(f"run {run_id} is not in the history store")
    return _summary(row)


def list_runs(
    *,
    session: Session,
    repo: str | None = None,
    kind: str | None = None,
    branch: str | None = None,
    device: str | None = None,
    pull_request: int | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[RunSummary]:
    """Stored runs, newest first, filtered by whatever is given."""
    runs, repos = Run.__table__, Repository.__table__  # type: ignore[attr-defined]
    devices = Device.__table__  # type: ignore[attr-defined]
    stmt = _summary_select()
    filters = [
        (repos.c.name, repo),
        (runs.c.kind, kind),
        (runs.c.branch, branch),
        (devices.c.name, device),
        (runs.c.pull_request, pull_request),
    ]
    for column, value in filters:
        if value is not None:
            stmt = stmt.where(column == value)
    stmt = stmt.order_by(runs.c.timestamp.desc(), runs.c.id.desc()).limit(limit).offset(offset)
    return [_summary(row) for row in session.execute(stmt)]


def get_run_record(*, session: Session, run_id: int) -> RunRecord:
    """The full RunRecord stored with run ``run_id`` (every verdict figure derives from it).

    Raises:
        NotFound: No such run.
    """
    runs = Run.__table__  # type: ignore[attr-defined]
    text = session.execute(sa.select(runs.c.record_json).where(runs.c.id == run_id)).scalar()
    if text is None:
        raise NotFound(f"run {run_id} is not in the history store")
    return RunRecord.model_validate_json(text)


def accept_baseline(
    *,
    session: Session,
    repo: str,
    kernel_key: str,
    device: str | None,
    accepted_by: str,
    reason: str = "",
    run_id: int | None = None,
    accepted_at: datetime | None = None,
) -> int:
    """Record a ``/roofguard accept``: the kernel's baseline restarts after ``accepted_at``.

    Args:
        session: The session.
        repo: OWNER/NAME.
        kernel_key: Identity key of the accepted kernel.
        device: Device name it applies to; None for every device.
        accepted_by: Who accepted (GitHub login).
        reason: Why, as written in the comment.
        run_id: The run whose change was accepted, when known.
        accepted_at: When (default: now); baselines use runs measured after it.

    Returns:
        The acceptance's id.
    """
    rid = repo_id(session=session, repo=repo, create=True)
    did = device_id(session=session, device=device, create=True) if device else None
    table = BaselineAcceptance.__table__  # type: ignore[attr-defined]
    row = {
        "repo_id": rid,
        "device_id": did,
        "kernel_key": kernel_key,
        "kernel_key_hash": key_hash(kernel_key),
        "run_id": run_id,
        "accepted_by": accepted_by,
        "reason": reason,
        "created_at": as_utc(accepted_at or datetime.now(UTC)),
    }
    return int(session.execute(sa.insert(table).returning(table.c.id), row).scalar_one())
