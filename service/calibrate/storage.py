"""Persist calibrations: the ``runner_ceilings`` table, ``ceilings.json`` and ``health.json``.

The history store's migrations own the schema in production; until this table is folded into
them, ``ensure_table`` creates it (and only it) on a plain SQLAlchemy engine. ``check`` calls
``measured_roof`` for a runner's measured roof and ``load_health`` to learn whether the
preflight marked the runner untrusted.
"""

from __future__ import annotations

import os
import tempfile
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ValidationError
from sqlalchemy import Column, DateTime, Engine, Text, create_engine
from sqlmodel import Field, Session, SQLModel, col, select

from rules.hardware import builtin_catalog, normalise_name
from rules.roofline import Roof
from service.calibrate.health import Health
from service.calibrate.model import Ceilings
from service.errors import BadInput

DEFAULT_DB_URL = "sqlite:///.roofguard/history.db"
DEFAULT_HEALTH_PATH = Path(".roofguard/health.json")


class RunnerCeilings(SQLModel, table=True):
    """One calibration of one runner's device (the runner's "measured" roof source).

    Attributes:
        id: Row id.
        runner: CI runner name.
        device: Device key: the catalog id when known, else the folded device name.
        backend: torch or cupy.
        created_at: When the calibration ran (UTC).
        ceilings_json: The ``Ceilings`` document, as ``ceilings.json`` holds it.
    """

    __tablename__ = "runner_ceilings"

    id: int | None = Field(default=None, primary_key=True)
    runner: str = Field(index=True)
    device: str = Field(index=True)
    backend: str
    created_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    ceilings_json: str = Field(sa_column=Column(Text, nullable=False))


def device_key(name: str) -> str:
    """The key a device is stored under: its catalog id, else its folded name."""
    spec = builtin_catalog().find(name)
    return spec.id if spec is not None else (normalise_name(name) or name)


def open_engine(url: str = DEFAULT_DB_URL) -> Engine:
    """An engine for ``url``; a SQLite file's folder is created."""
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    return create_engine(url)


def ensure_table(engine: Engine) -> None:
    """Create ``runner_ceilings`` if missing (stand-in for the store's migration)."""
    RunnerCeilings.__table__.create(engine, checkfirst=True)  # type: ignore[attr-defined]


def save_ceilings(*, session: Session, ceilings: Ceilings) -> int:
    """Store a calibration as its runner's latest ceilings; returns the row id."""
    if not ceilings.runner:
        raise BadInput("--runner: a stored calibration needs a runner name")
    row = RunnerCeilings(
        runner=ceilings.runner, device=device_key(ceilings.device), backend=ceilings.backend,
        created_at=ceilings.created_at, ceilings_json=ceilings.model_dump_json(),
    )  # fmt: skip
    session.add(row)
    session.commit()
    session.refresh(row)
    assert row.id is not None  # assigned by the database on commit
    return row.id


def latest_ceilings(*, session: Session, runner: str, device: str) -> Ceilings | None:
    """The newest stored calibration of ``runner``'s ``device`` (any name tools print for it)."""
    query = (
        select(RunnerCeilings)
        .where(RunnerCeilings.runner == runner, RunnerCeilings.device == device_key(device))
        .order_by(col(RunnerCeilings.created_at).desc(), col(RunnerCeilings.id).desc())
    )
    row = session.exec(query).first()
    if row is None:
        return None
    return Ceilings.model_validate_json(row.ceilings_json)


def measured_roof(*, session: Session, runner: str, device: str) -> Roof | None:
    """The runner's measured roof for ``device`` (source "measured"), None if never calibrated."""
    ceilings = latest_ceilings(session=session, runner=runner, device=device)
    return ceilings.roof() if ceilings is not None else None


def write_json_atomic(path: Path, document: BaseModel) -> None:
    """Write ``document`` as JSON to ``path`` all at once (never half-written)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(document.model_dump_json(indent=2) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _load(path: Path, model: type[Ceilings] | type[Health]) -> Ceilings | Health:
    try:
        return model.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "(document)"
        raise BadInput(f"{path}: field {field}: {error['msg']}") from exc
    except OSError as exc:
        raise BadInput(f"{path}: cannot read: {exc.strerror}") from exc


def load_ceilings(path: Path) -> Ceilings:
    """Read a ``ceilings.json``; a bad file is one error naming the file and the field."""
    result = _load(path, Ceilings)
    assert isinstance(result, Ceilings)
    return result


def load_health(path: Path = DEFAULT_HEALTH_PATH) -> Health | None:
    """The preflight's verdict, None when no preflight ran (the file does not exist)."""
    if not path.exists():
        return None
    result = _load(path, Health)
    assert isinstance(result, Health)
    return result
