"""History-store tables (SQLModel, ``table=True``). One migration chain covers all of them.

Timestamps are stored in UTC. SQLite keeps them without a zone, so readers attach UTC again
(``service.store.history`` does). Raw counters sit beside the derived figures of the roof the
run was placed on, and ``runs.record_json`` keeps the full RunRecord (``runs.record_zlib``,
compressed, when it is large), so every verdict figure can be reproduced from what is stored.

The store's own statements use the same tables declared in SQLAlchemy Core
(``service.store.coretables``), which import without sqlmodel and the ORM; a test holds the
two declarations equal.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

# utcnow: the default of every created_at, in both declarations (named here by the service)
from service.store.coretables import NAMING_CONVENTION, run_acceptance_index
from service.store.coretables import utcnow as utcnow

#: Naming convention so constraint names are stable across SQLite and PostgreSQL (Alembic).
SQLModel.metadata.naming_convention = dict(NAMING_CONVENTION)


def table_of(model: type[SQLModel]) -> sa.Table:
    """The Core table of a store model, for Core statements (bulk inserts, narrow selects).

    SQLModel creates ``__table__`` with the class but does not declare it, so reading it
    directly needs a ``# type: ignore``; the mapper's local table, checked here, does not.

    Raises:
        TypeError: ``model`` is not a ``table=True`` model.
    """
    mapper = sa.inspect(model, raiseerr=False)
    table = mapper.local_table if mapper is not None else None
    if not isinstance(table, sa.Table):
        raise TypeError(f"{model.__name__} is not a table model")
    return table


def _ts(**kw: Any) -> Any:
    return Field(sa_type=sa.DateTime(timezone=True), **kw)


def _json(**kw: Any) -> Any:
    return Field(sa_type=sa.JSON, **kw)


class Repository(SQLModel, table=True):
    """A repository, "OWNER/NAME"."""

    __tablename__ = "repositories"
    # GitHub's names ignore case, so the store's uniqueness does too: two first uploads as
    # "Acme/K" and "acme/k" at once make one repository, not two (migration 0006).
    __table_args__ = (sa.Index("uq_repositories_name_lower", sa.text("lower(name)"), unique=True),)

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(sa_type=sa.String(200), unique=True)
    created_at: datetime = _ts(default_factory=utcnow)


class Device(SQLModel, table=True):
    """A device, by the name runs are stored under (the catalog id when the catalog knows it)."""

    __tablename__ = "devices"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(sa_type=sa.String(200), unique=True)
    created_at: datetime = _ts(default_factory=utcnow)


class Run(SQLModel, table=True):
    """One ingested run.

    ``content_hash`` (sha256 of the run without its timestamp, sources named by file name;
    ``service.store.ids.identity``) is unique per repository, which makes ingest idempotent.
    """

    __tablename__ = "runs"
    __table_args__ = (
        sa.UniqueConstraint("repo_id", "content_hash", name="uq_runs_repo_content_hash"),
        sa.Index("ix_runs_baseline", "repo_id", "device_id", "branch", "kind", "timestamp"),
        sa.Index("ix_runs_repo_commit", "repo_id", "commit"),
        sa.Index("ix_runs_kind_timestamp", "kind", "timestamp"),
    )

    id: int | None = Field(default=None, primary_key=True)
    repo_id: int = Field(foreign_key="repositories.id")
    device_id: int = Field(foreign_key="devices.id")
    commit: str | None = Field(default=None, sa_type=sa.String(64))
    branch: str | None = Field(default=None, sa_type=sa.String(255))
    pull_request: int | None = None
    kind: str = Field(sa_type=sa.String(16))
    timestamp: datetime = _ts()
    runner: str | None = Field(default=None, sa_type=sa.String(255))
    device_reported: str | None = Field(default=None, sa_type=sa.String(255))
    driver: str | None = Field(default=None, sa_type=sa.String(64))
    profiler_tool: str | None = Field(default=None, sa_type=sa.String(64))
    profiler_version: str | None = Field(default=None, sa_type=sa.String(64))
    clock_control: str | None = Field(default=None, sa_type=sa.String(32))
    cache_control: str | None = Field(default=None, sa_type=sa.String(32))
    roof_source: str = Field(sa_type=sa.String(16))
    roof_label: str = Field(sa_type=sa.String(255))
    roof_json: dict[str, Any] = _json(default_factory=dict)
    trusted: bool = True
    content_hash: str = Field(sa_type=sa.String(64))
    record_json: str = Field(sa_type=sa.Text)
    # The record compressed, and record_json "", when it is large (service.store.runrecord).
    record_zlib: bytes | None = Field(default=None, sa_type=sa.LargeBinary)
    created_at: datetime = _ts(default_factory=utcnow)
    # False: its check judged nothing (no baseline yet); None: stored by ingest, never checked.
    judged: bool | None = None
    # sha256 of the configuration its stored verdict was judged with (None: before 0014).
    judged_config: str | None = Field(default=None, sa_type=sa.String(64))
    # The baseline its stored verdict was judged against (None: none kept, before 0015).
    judged_base_branch: str | None = Field(default=None, sa_type=sa.Text)
    judged_base_sha: str | None = Field(default=None, sa_type=sa.String(64))
    judged_base_time: datetime | None = _ts(default=None)


class Kernel(SQLModel, table=True):
    """A kernel identity within a repository.

    ``key_hash`` (sha256 of the key) carries the uniqueness, because keys of demangled C++
    can exceed PostgreSQL's index-row limit.
    """

    __tablename__ = "kernels"
    __table_args__ = (sa.UniqueConstraint("repo_id", "key_hash", name="uq_kernels_repo_key"),)

    id: int | None = Field(default=None, primary_key=True)
    repo_id: int = Field(foreign_key="repositories.id")
    key: str = Field(sa_type=sa.Text)
    key_hash: str = Field(sa_type=sa.String(64))
    name: str = Field(sa_type=sa.Text)


class Measurement(SQLModel, table=True):
    """One kernel in one run: raw counters and the derived figures on the run's roof."""

    __tablename__ = "measurements"
    __table_args__ = (
        sa.UniqueConstraint("run_id", "kernel_id", name="uq_measurements_run_kernel"),
        sa.Index("ix_measurements_kernel_run", "kernel_id", "run_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="runs.id", ondelete="CASCADE")
    kernel_id: int = Field(foreign_key="kernels.id")
    launches: int = 1
    time_s: float
    flops_json: dict[str, float] = _json(default_factory=dict)
    total_flops: float | None = None
    bytes_dram: float | None = None
    bytes_l2: float | None = None
    bytes_l1: float | None = None
    percent_of_roof: float | None = None
    regime: str | None = Field(default=None, sa_type=sa.String(16))
    binding: str | None = Field(default=None, sa_type=sa.String(32))
    borderline: bool = False
    intensity_dram: float | None = None
    intensity_l2: float | None = None
    intensity_l1: float | None = None
    t_roof_s: float | None = None
    peak_flop_time_s: float | None = None
    roof_source: str = Field(sa_type=sa.String(16))


class FindingRow(SQLModel, table=True):
    """One finding of a check on a run (rules.verdict.Finding, stored)."""

    __tablename__ = "findings"
    __table_args__ = (sa.Index("ix_findings_run", "run_id"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="runs.id", ondelete="CASCADE")
    kernel_key: str | None = Field(default=None, sa_type=sa.Text)
    rule: str = Field(sa_type=sa.String(64))
    severity: str = Field(sa_type=sa.String(8))
    stability: str = Field(sa_type=sa.String(8))
    message: str = Field(sa_type=sa.Text)
    advice: str | None = Field(default=None, sa_type=sa.String(32))
    numbers_json: dict[str, Any] = _json(default_factory=dict)
    finding_json: dict[str, Any] = _json(default_factory=dict)
    created_at: datetime = _ts(default_factory=utcnow)


class ApiToken(SQLModel, table=True):
    """An API token (only its hash is stored). ``repo_id`` None means every repository."""

    __tablename__ = "api_tokens"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(sa_type=sa.String(200))
    token_hash: str = Field(sa_type=sa.String(128), unique=True)
    repo_id: int | None = Field(default=None, foreign_key="repositories.id")
    permission: str = Field(sa_type=sa.String(8))
    created_at: datetime = _ts(default_factory=utcnow)
    revoked_at: datetime | None = _ts(default=None)
    last_used_at: datetime | None = _ts(default=None)


class BaselineAcceptance(SQLModel, table=True):
    """A ``/roofguard accept``: the baseline of a kernel on a device restarts after it."""

    __tablename__ = "baseline_acceptances"
    __table_args__ = (
        sa.Index("ix_acceptances_lookup", "repo_id", "device_id", "kernel_key_hash"),
        run_acceptance_index(),
    )

    id: int | None = Field(default=None, primary_key=True)
    repo_id: int = Field(foreign_key="repositories.id")
    device_id: int | None = Field(default=None, foreign_key="devices.id")
    kernel_key: str = Field(sa_type=sa.Text)
    kernel_key_hash: str = Field(sa_type=sa.String(64))
    run_id: int | None = Field(default=None, foreign_key="runs.id")
    accepted_by: str = Field(sa_type=sa.String(200))
    reason: str = Field(default="", sa_type=sa.Text)
    created_at: datetime = _ts(default_factory=utcnow)


class RunnerCeiling(SQLModel, table=True):
    """Measured roofs of a runner (calibration); the newest per (runner, device, backend) wins.

    ``ceilings_json`` is the calibration's ``Ceilings`` document as text (``ceilings.json``),
    so service.calibrate stores and reads it unchanged.
    """

    __tablename__ = "runner_ceilings"
    __table_args__ = (sa.Index("ix_runner_ceilings_lookup", "runner", "device", "backend"),)

    id: int | None = Field(default=None, primary_key=True)
    runner: str = Field(sa_type=sa.String(255))
    device: str = Field(sa_type=sa.String(200))
    backend: str = Field(sa_type=sa.String(64))
    created_at: datetime = _ts(default_factory=utcnow)
    ceilings_json: str = Field(sa_type=sa.Text)


#: The name service.calibrate uses.
RunnerCeilings = RunnerCeiling


class WebhookDelivery(SQLModel, table=True):
    """A GitHub webhook delivery the service acted on (``X-GitHub-Delivery``), for replays.

    Kept only as long as a delivery could still be fresh; every replica of the service sees
    the same rows, so a replayed delivery is refused whichever replica receives it.
    """

    __tablename__ = "webhook_deliveries"
    __table_args__ = (sa.Index("ix_webhook_deliveries_received_at", "received_at"),)

    delivery_id: str = Field(sa_type=sa.String(100), primary_key=True)
    event: str = Field(sa_type=sa.String(64))
    received_at: datetime = _ts(default_factory=utcnow)
    #: sha256 of the signed body: the same body under a new delivery id is a replay too.
    payload_hash: str | None = Field(default=None, sa_type=sa.String(64), unique=True)


class RenderedView(SQLModel, table=True):
    """A rendered view of a stored run (its page, chart or verdict), reused while it holds.

    ``cache_key`` is a hash of everything the view depends on besides the run: roofguard's
    version, the configuration and the state of the repository's history (a new run or an
    acceptance changes the baseline, so the view is rendered again).
    """

    __tablename__ = "rendered_views"

    run_id: int = Field(foreign_key="runs.id", ondelete="CASCADE", primary_key=True)
    view: str = Field(sa_type=sa.String(32), primary_key=True)
    cache_key: str = Field(sa_type=sa.String(64))
    body: str = Field(sa_type=sa.Text)
    created_at: datetime = _ts(default_factory=utcnow)


class GateLevel(SQLModel, table=True):
    """A kernel's base-branch level as the gate computed it (``rules.levelstore``).

    ``digest`` covers everything the level is a function of (the kernel's history, the gate's
    options and code), so a stored level is reused only where it is exact. ``run_id`` is the
    newest run of that history: the levels go when their run does.
    """

    __tablename__ = "gate_levels"

    digest: str = Field(sa_type=sa.String(32), primary_key=True)
    run_id: int = Field(foreign_key="runs.id", ondelete="CASCADE", index=True)
    level: float
    noise: float
    n: int
    start: int
    se: float
    points: int


class RunColumns(SQLModel, table=True):
    """A baseline run's measurements as columns (``service.store.columnar``): one row a run.

    Written the first time a check reads the run as baseline, from the rows it read, so a
    check reads its 60 runs as 60 rows of arrays instead of 120,000 rows of numbers. A run's
    measurements never change once stored; the columns go when the run does.
    """

    __tablename__ = "run_columns"

    run_id: int = Field(foreign_key="runs.id", ondelete="CASCADE", primary_key=True)
    layout: int
    kernels: int
    numbers: bytes = Field(sa_type=sa.LargeBinary)
    labels: str = Field(sa_type=sa.Text)


class UploadClaim(SQLModel, table=True):
    """An upload being judged or judged (``service.store.claims``), by the key of its bytes.

    The primary key makes one replica the owner of an upload's check: the others find the
    claim and wait for its answer. ``lease_until`` is renewed while the owner works, so the
    claim of a replica that died is taken over once it lapses. ``answer`` (the verdict and its
    markdown as JSON, zlib-compressed: a 2,000-kernel run's answer is about 3.3 MB of JSON)
    is set in the check's own transaction: a claim without it is still pending.
    """

    __tablename__ = "upload_claims"
    __table_args__ = (sa.Index("ix_upload_claims_claimed_at", "claimed_at"),)

    upload_key: str = Field(sa_type=sa.String(64), primary_key=True)
    #: The run's repository: a token may read the stored answer only with write access to it.
    repo: str = Field(sa_type=sa.String(200))
    owner: str = Field(sa_type=sa.String(64))
    claimed_at: datetime = _ts(default_factory=utcnow)
    lease_until: datetime = _ts()
    run_id: int | None = Field(default=None, foreign_key="runs.id", ondelete="CASCADE")
    answer: bytes | None = Field(default=None, sa_type=sa.LargeBinary)


class IngestInputs(SQLModel, table=True):
    """What an ``ingest`` was given (``service.pipeline.inputdigest``) and the run it stored.

    The digest covers roofguard's own files and reading libraries, the collector plugins, the
    flags but the timestamp, the config, the limits and each file's bytes: the same digest
    again is the same run, found without reading the files (``service.store.ingestinputs``).
    Several digests may name one run (files that differ only in what the content hash leaves
    out); deleting the run deletes them, and a run that no longer has ``content_hash``
    (deleted by hand where foreign keys were off, its id reused) answers for none.
    """

    __tablename__ = "ingest_inputs"

    input_digest: str = Field(sa_type=sa.String(64), primary_key=True)
    run_id: int = Field(foreign_key="runs.id", ondelete="CASCADE", index=True)
    #: The run's content hash when stored: a lookup answers only while the run still has it.
    content_hash: str = Field(sa_type=sa.String(64))
    created_at: datetime = _ts(default_factory=utcnow)
