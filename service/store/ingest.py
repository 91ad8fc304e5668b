"""Store writes of a check: ingest a run with its placements, save the findings on it.

Every verb works inside the caller's session (``service.store.db.session_scope``), so one
``session_scope`` is one transaction: an ingest that fails half-way leaves nothing behind.
Bulk rows go through PostgreSQL's COPY or SQLAlchemy Core ``executemany`` (``service.store.bulk``),
never one ORM object per row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple

import sqlalchemy as sa

from collectors import paused_gc
from collectors.schema import KernelRecord, RunRecord
from rules import ClockedRoof, Finding, Placement, Roof
from service.errors import BadInput
from service.progress import progress_iter, stage
from service.store.bulk import insert_rows
from service.store.claims import forget_answers
from service.store.coretables import FINDINGS as _FINDINGS
from service.store.coretables import MEASUREMENTS as _MEASUREMENTS
from service.store.coretables import RUNS as _RUNS
from service.store.ids import as_utc, device_id, kernel_ids, repo_id, write_identity
from service.store.judgedbase import JudgedBase, base_values
from service.store.rows import FindingValues, MeasurementValues, RoofValues, RunValues
from service.store.runrecord import RecordWriter
from service.store.sessions import StoreSession


@dataclass(frozen=True)
class IngestResult:
    """What ``ingest_run`` did.

    Attributes:
        run_id: The stored run (the first one, when the content was already stored).
        created: False when the same content was already stored (nothing was written).
        content_hash: The run's content hash (``service.store.ids.identity``).
        kernels: Number of kernels of the run.
    """

    run_id: int
    created: bool
    content_hash: str
    kernels: int = 0


def _roof_json(roof: Roof) -> RoofValues:
    values: RoofValues = {
        "device": roof.device,
        "source": roof.source,
        "peak_flop_per_s": dict(roof.peak_flop_per_s),
        "bandwidth_byte_per_s": dict(roof.bandwidth_byte_per_s),
    }
    if roof.from_config:  # only then: the roofs stored before keep their bytes
        values["from_config"] = list(roof.from_config)
    if isinstance(roof, ClockedRoof):  # a run re-placed from the store places them alike
        values["unscaled"] = _roof_json(roof.unscaled)
    return values


def _run_row(
    run: RunRecord,
    *,
    repo: int,
    device: int,
    roof: Roof,
    trusted: bool,
    digest: str,
    record: RecordWriter,
) -> RunValues:
    text, packed = record.stored()  # a large record is kept compressed
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
        "record_json": text,
        "record_zlib": packed,
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
) -> MeasurementValues:
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


def find_run(*, session: StoreSession, repo: str, content_hash: str) -> int | None:
    """Id of the run of ``repo`` with this content hash, None when not stored."""
    rid = repo_id(session=session, repo=repo)
    if rid is None:
        return None
    stmt = sa.select(_RUNS.c.id).where(_RUNS.c.repo_id == rid, _RUNS.c.content_hash == content_hash)
    found = session.execute(stmt).scalar()
    return None if found is None else int(found)


def _insert_run(session: StoreSession, row: RunValues) -> int | None:
    """Insert the run row; None when a concurrent ingest committed the same content first.

    The savepoint keeps the caller's transaction usable after the unique-key violation
    (PostgreSQL; SQLite writers are serialised by ``BEGIN IMMEDIATE``).
    """
    try:
        with session.begin_nested():
            stmt = sa.insert(_RUNS).returning(_RUNS.c.id)
            return int(session.execute(stmt, row).scalar_one())
    except sa.exc.IntegrityError as exc:
        if "content_hash" not in str(exc.orig):
            raise
        return None


def ingest_run(
    *,
    session: StoreSession,
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
    with paused_gc():  # a huge run's rows are millions of objects: see collectors.gcpause
        return _ingest(session, run, placements, roof, trusted)


def _ingest(
    session: StoreSession,
    run: RunRecord,
    placements: Mapping[str, Placement],
    roof: Roof,
    trusted: bool,
) -> IngestResult:
    assert run.repo is not None  # checked by ingest_run
    record = RecordWriter()  # compressed as it is written: a huge record is never held whole
    with _stage(run, "hashing the run's content"):
        digest = write_identity(run, record.write)
    row = insert_run_row(session, run, roof=roof, trusted=trusted, digest=digest, record=record)
    del record  # stored now: not held while the rows are made
    run_id, rid = row
    if rid is None:
        return IngestResult(run_id, False, digest, len(run.kernels))
    _insert_measurements(session, run, placements, run_id=run_id, repo=rid, roof=roof)
    return IngestResult(run_id, True, digest, len(run.kernels))


class RunRow(NamedTuple):
    """The run's row: its id, and its repository's id when this ingest created it (else None)."""

    run_id: int
    repo_id: int | None


def insert_run_row(
    session: StoreSession,
    run: RunRecord,
    *,
    roof: Roof,
    trusted: bool,
    digest: str,
    record: RecordWriter,
) -> RunRow:
    """Insert ``run``'s row (its content ``record``, hashed ``digest``) unless it is stored.

    The stored run with the same content is returned instead (``repo_id`` None), also when
    another process stored it between the look and the insert.
    """
    assert run.repo is not None
    existing = find_run(session=session, repo=run.repo, content_hash=digest)
    if existing is not None:
        return RunRow(existing, None)
    rid = repo_id(session=session, repo=run.repo, create=True)
    did = device_id(session=session, device=roof.device, create=True)
    assert rid is not None and did is not None  # created above
    run_id = _insert_run(
        session,
        _run_row(
            run, repo=rid, device=did, roof=roof, trusted=trusted, digest=digest, record=record
        ),
    )
    if run_id is None:  # another process stored the same content meanwhile
        existing = find_run(session=session, repo=run.repo, content_hash=digest)
        assert existing is not None
        return RunRow(existing, None)
    return RunRow(run_id, rid)


def _insert_measurements(
    session: StoreSession,
    run: RunRecord,
    placements: Mapping[str, Placement],
    *,
    run_id: int,
    repo: int,
    roof: Roof,
) -> None:
    """The run's measurement rows (kernel ids resolved in bulk): COPY or ``executemany``.

    The rows are made as they are written (``service.store.bulk``), never all at once. A
    kernel with no launch measured (each failed) has no row: its 0 s is no time, and a
    history holding it would judge the next night against it. The stored record keeps it.
    """
    with _stage(run, "storing the kernels' identities"):
        names = {k.key: k.name for k in run.kernels}
        ids = kernel_ids(session=session, repo_id=repo, kernels=names)
        del names
    kernels: Iterable[KernelRecord] = run.kernels
    if len(run.kernels) >= _PROGRESS_FROM:  # minutes for a million kernels: show them pass
        kernels = progress_iter(run.kernels, "storing measurements", total=len(run.kernels))
    rows = (
        measurement_row(
            k, placements.get(k.key), run_id=run_id, kernel_id=ids[k.key], roof_source=roof.source
        )
        for k in kernels
        if k.measured
    )
    insert_rows(session, _MEASUREMENTS, rows)


#: Runs of this many kernels show their storing on a terminal (``service.progress``).
_PROGRESS_FROM = 50_000


def _stage(run: RunRecord, what: str) -> AbstractContextManager[None]:
    """A spinner saying ``what`` for a huge run (a terminal only): each step takes seconds."""
    if len(run.kernels) < _PROGRESS_FROM:
        return nullcontext()
    return stage(f"{what} ({len(run.kernels):,} kernels)")


def _finding_row(run_id: int, finding: Finding, now: datetime) -> FindingValues:
    return {
        "run_id": run_id,
        "kernel_key": finding.kernel,
        "rule": finding.rule,
        "severity": finding.severity.value,
        "stability": finding.stability.value,
        "message": finding.message,
        "advice": finding.advice.value if finding.advice else None,
        "numbers_json": dict(finding.numbers),
        "finding_json": finding.model_dump(mode="json"),
        "created_at": now,
    }


def save_findings(*, session: StoreSession, run_id: int, findings: Iterable[Finding]) -> int:
    """Store the findings of a check on run ``run_id``, replacing earlier ones; returns count.

    A run of thousands of kernels has a finding for most of them: COPY on PostgreSQL
    (``insert_rows``), in the order given, so their ids keep the verdict's order.
    """
    session.execute(sa.delete(_FINDINGS).where(_FINDINGS.c.run_id == run_id))
    now = datetime.now(UTC)
    rows = [_finding_row(run_id, f, now) for f in findings]
    insert_rows(session, _FINDINGS, rows)
    return len(rows)


def save_judged(
    *,
    session: StoreSession,
    run_id: int,
    judged: bool,
    config: str | None = None,
    base: JudgedBase | None = None,
) -> None:
    """Record whether the check of run ``run_id`` judged anything (False: no baseline yet).

    Its findings alone cannot tell: a run that judged nothing has no failing finding either.
    ``config`` is the digest of the configuration it was judged with (``judged_config``),
    ``base`` the baseline it was judged against (``service.store.judgedbase``); None leaves
    the stored one: a verdict asked for without a configuration to compare (a page, a post
    of an accepted run's verdict) was judged under the stored one.
    """
    values: dict[str, object] = {"judged": judged}
    if config is not None:
        values["judged_config"] = config
    if base is not None:
        values.update(base_values(base))
    session.execute(sa.update(_RUNS).where(_RUNS.c.id == run_id).values(**values))


def replace_findings(*, session: StoreSession, run_id: int, findings: Sequence[Finding]) -> bool:
    """Make ``findings`` the stored findings of run ``run_id``; returns whether it wrote.

    Idempotent: when the stored findings are already these (same content, same order),
    nothing is written, so their ids and ``created_at`` stay those of the first save.
    """
    stmt = (
        sa.select(_FINDINGS.c.finding_json)
        .where(_FINDINGS.c.run_id == run_id)
        .order_by(_FINDINGS.c.id)
    )
    stored = list(session.execute(stmt).scalars())
    if stored == [f.model_dump(mode="json") for f in findings]:
        return False
    save_findings(session=session, run_id=run_id, findings=findings)
    forget_answers(session, run_id)  # an upload of the same bytes answered the old findings
    return True
