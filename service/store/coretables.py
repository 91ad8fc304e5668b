"""The history store's tables as SQLAlchemy Core ``Table`` objects, for every store statement.

The store reads and writes through Core (bulk inserts, narrow selects), so these are what its
modules use; the SQLModel classes of ``service.store.tables`` declare the same tables for the
ORM, the migrations and the service's models. Importing sqlmodel and mapping those classes is
a fifth of a ``roofguard check`` process's imports, which the check itself never uses: it
imports this module instead. ``tests/service/store/test_coretables.py`` holds the two
declarations equal (DDL on SQLite and PostgreSQL, indexes, Python-side defaults), so they
cannot drift; a new column goes into both.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

#: Naming convention so constraint names are stable across SQLite and PostgreSQL (Alembic).
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

METADATA = sa.MetaData(naming_convention=NAMING_CONVENTION)


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def _id() -> sa.Column[Any]:
    return sa.Column("id", sa.Integer, primary_key=True)


def _text(name: str, length: int | None = None, **kw: Any) -> sa.Column[Any]:
    """A string column: ``String(length)``, or ``Text`` without a length; NOT NULL unless told."""
    kw.setdefault("nullable", False)
    return sa.Column(name, sa.String(length) if length else sa.Text, **kw)


def _ts(name: str, **kw: Any) -> sa.Column[Any]:
    kw.setdefault("nullable", False)
    return sa.Column(name, sa.DateTime(timezone=True), **kw)


def _created(name: str = "created_at") -> sa.Column[Any]:
    return _ts(name, default=utcnow)


def _int(name: str, *args: Any, **kw: Any) -> sa.Column[Any]:
    kw.setdefault("nullable", False)
    return sa.Column(name, sa.Integer, *args, **kw)


def _float(name: str, **kw: Any) -> sa.Column[Any]:
    kw.setdefault("nullable", False)
    return sa.Column(name, sa.Float, **kw)


def _fk(target: str, **kw: Any) -> sa.ForeignKey:
    return sa.ForeignKey(target, **kw)


def _json(name: str) -> sa.Column[Any]:
    return sa.Column(name, sa.JSON, nullable=False, default=dict)


REPOSITORIES = sa.Table(
    "repositories",
    METADATA,
    _id(),
    _text("name", 200, unique=True),
    _created(),
    # GitHub's names ignore case, so the store's uniqueness does too (migration 0006).
    sa.Index("uq_repositories_name_lower", sa.text("lower(name)"), unique=True),
)

DEVICES = sa.Table("devices", METADATA, _id(), _text("name", 200, unique=True), _created())

RUNS = sa.Table(
    "runs",
    METADATA,
    _id(),
    _int("repo_id", _fk("repositories.id")),
    _int("device_id", _fk("devices.id")),
    _text("commit", 64, nullable=True),
    _text("branch", 255, nullable=True),
    _int("pull_request", nullable=True),
    _text("kind", 16),
    _ts("timestamp"),
    _text("runner", 255, nullable=True),
    _text("device_reported", 255, nullable=True),
    _text("driver", 64, nullable=True),
    _text("profiler_tool", 64, nullable=True),
    _text("profiler_version", 64, nullable=True),
    _text("clock_control", 32, nullable=True),
    _text("cache_control", 32, nullable=True),
    _text("roof_source", 16),
    _text("roof_label", 255),
    _json("roof_json"),
    sa.Column("trusted", sa.Boolean, nullable=False, default=True),
    _text("content_hash", 64),
    _text("record_json"),
    sa.Column("record_zlib", sa.LargeBinary, nullable=True),  # service.store.runrecord
    _created(),
    # False: its check judged nothing (no baseline, or too short); NULL: stored by ingest,
    # never checked (no stored verdict: its page judges it)
    sa.Column("judged", sa.Boolean, nullable=True),
    # sha256 of the configuration its stored verdict was judged with (NULL: before 0014)
    sa.Column("judged_config", sa.String(64), nullable=True),
    # the baseline its stored verdict was judged against (service.store.judgedbase); NULL
    # branch: none kept (stored by ingest, or judged before 0015)
    _text("judged_base_branch", nullable=True),
    _text("judged_base_sha", 64, nullable=True),
    _ts("judged_base_time", nullable=True),
    sa.UniqueConstraint("repo_id", "content_hash", name="uq_runs_repo_content_hash"),
    sa.Index("ix_runs_baseline", "repo_id", "device_id", "branch", "kind", "timestamp"),
    sa.Index("ix_runs_repo_commit", "repo_id", "commit"),
    sa.Index("ix_runs_kind_timestamp", "kind", "timestamp"),
)

KERNELS = sa.Table(
    "kernels",
    METADATA,
    _id(),
    _int("repo_id", _fk("repositories.id")),
    _text("key"),
    _text("key_hash", 64),
    _text("name"),
    sa.UniqueConstraint("repo_id", "key_hash", name="uq_kernels_repo_key"),
)

MEASUREMENTS = sa.Table(
    "measurements",
    METADATA,
    _id(),
    _int("run_id", _fk("runs.id", ondelete="CASCADE")),
    _int("kernel_id", _fk("kernels.id")),
    _int("launches", default=1),
    _float("time_s"),
    _json("flops_json"),
    *(_float(name, nullable=True) for name in ("total_flops", "bytes_dram", "bytes_l2")),
    *(_float(name, nullable=True) for name in ("bytes_l1", "percent_of_roof")),
    _text("regime", 16, nullable=True),
    _text("binding", 32, nullable=True),
    sa.Column("borderline", sa.Boolean, nullable=False, default=False),
    *(_float(name, nullable=True) for name in ("intensity_dram", "intensity_l2", "intensity_l1")),
    _float("t_roof_s", nullable=True),
    _float("peak_flop_time_s", nullable=True),
    _text("roof_source", 16),
    sa.UniqueConstraint("run_id", "kernel_id", name="uq_measurements_run_kernel"),
    sa.Index("ix_measurements_kernel_run", "kernel_id", "run_id"),
)

FINDINGS = sa.Table(
    "findings",
    METADATA,
    _id(),
    _int("run_id", _fk("runs.id", ondelete="CASCADE")),
    _text("kernel_key", nullable=True),
    _text("rule", 64),
    _text("severity", 8),
    _text("stability", 8),
    _text("message"),
    _text("advice", 32, nullable=True),
    _json("numbers_json"),
    _json("finding_json"),
    _created(),
    sa.Index("ix_findings_run", "run_id"),
)

API_TOKENS = sa.Table(
    "api_tokens",
    METADATA,
    _id(),
    _text("name", 200),
    _text("token_hash", 128, unique=True),
    _int("repo_id", _fk("repositories.id"), nullable=True),
    _text("permission", 8),
    _created(),
    _ts("revoked_at", nullable=True),
    _ts("last_used_at", nullable=True),
)


def run_acceptance_index() -> sa.Index:
    """A run's change is accepted once per kernel and card (migration 0016).

    A new index each call: the Core table and the SQLModel one each hold their own. Without
    a device (every card) the key is 0, as NULLs never collide; a work model's edit (no run)
    is recorded once by its run's ingest.
    """
    return sa.Index(
        "uq_acceptances_run",
        "repo_id",
        "kernel_key_hash",
        "run_id",
        sa.text("coalesce(device_id, 0)"),
        unique=True,
        sqlite_where=sa.text("run_id IS NOT NULL"),
        postgresql_where=sa.text("run_id IS NOT NULL"),
    )


BASELINE_ACCEPTANCES = sa.Table(
    "baseline_acceptances",
    METADATA,
    _id(),
    _int("repo_id", _fk("repositories.id")),
    _int("device_id", _fk("devices.id"), nullable=True),
    _text("kernel_key"),
    _text("kernel_key_hash", 64),
    _int("run_id", _fk("runs.id"), nullable=True),
    _text("accepted_by", 200),
    _text("reason", default=""),
    _created(),
    sa.Index("ix_acceptances_lookup", "repo_id", "device_id", "kernel_key_hash"),
    run_acceptance_index(),
)

RUNNER_CEILINGS = sa.Table(
    "runner_ceilings",
    METADATA,
    _id(),
    _text("runner", 255),
    _text("device", 200),
    _text("backend", 64),
    _created(),
    _text("ceilings_json"),
    sa.Index("ix_runner_ceilings_lookup", "runner", "device", "backend"),
)

WEBHOOK_DELIVERIES = sa.Table(
    "webhook_deliveries",
    METADATA,
    _text("delivery_id", 100, primary_key=True),
    _text("event", 64),
    _created("received_at"),
    _text("payload_hash", 64, nullable=True, unique=True),
    sa.Index("ix_webhook_deliveries_received_at", "received_at"),
)

RENDERED_VIEWS = sa.Table(
    "rendered_views",
    METADATA,
    _int("run_id", _fk("runs.id", ondelete="CASCADE"), primary_key=True),
    _text("view", 32, primary_key=True),
    _text("cache_key", 64),
    _text("body"),
    _created(),
)

GATE_LEVELS = sa.Table(
    "gate_levels",
    METADATA,
    _text("digest", 32, primary_key=True),
    _int("run_id", _fk("runs.id", ondelete="CASCADE"), index=True),
    _float("level"),
    _float("noise"),
    _int("n"),
    _int("start"),
    _float("se"),
    _int("points"),
)

RUN_COLUMNS = sa.Table(
    "run_columns",
    METADATA,
    _int("run_id", _fk("runs.id", ondelete="CASCADE"), primary_key=True),
    _int("layout"),
    _int("kernels"),
    sa.Column("numbers", sa.LargeBinary, nullable=False),
    _text("labels"),
)

UPLOAD_CLAIMS = sa.Table(
    "upload_claims",
    METADATA,
    _text("upload_key", 64, primary_key=True),
    _text("repo", 200),
    _text("owner", 64),
    _created("claimed_at"),
    _ts("lease_until"),
    _int("run_id", _fk("runs.id", ondelete="CASCADE"), nullable=True),
    sa.Column("answer", sa.LargeBinary, nullable=True),  # zlib-compressed JSON
    sa.Index("ix_upload_claims_claimed_at", "claimed_at"),
)

INGEST_INPUTS = sa.Table(
    "ingest_inputs",
    METADATA,
    _text("input_digest", 64, primary_key=True),
    _int("run_id", _fk("runs.id", ondelete="CASCADE"), index=True),
    _text("content_hash", 64),
    _created(),
)
