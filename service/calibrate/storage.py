"""Persist calibrations: the store's ``runner_ceilings`` rows, ``ceilings.json``, ``health.json``.

The table (``service.store.tables.RunnerCeiling``) and its migration belong to the history
store; this module reads and writes it. ``check`` calls ``measured_roof`` for a runner's
measured roof and ``load_health`` to learn whether the preflight marked the runner untrusted.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

from rules import Roof, builtin_catalog, normalise_name
from service.calibrate.health import Health
from service.calibrate.model import Ceilings
from service.errors import BadInput

if TYPE_CHECKING:  # sqlmodel and the store's ORM models: imported by the functions using them
    from sqlmodel import Session

    from service.store.sessions import StoreSession

DEFAULT_HEALTH_PATH = Path(".roofguard/health.json")


def device_key(name: str) -> str:
    """The key a device is stored under: its catalog id, else its folded name."""
    spec = builtin_catalog().find(name)
    return spec.id if spec is not None else (normalise_name(name) or name)


def save_ceilings(*, session: Session, ceilings: Ceilings) -> int:
    """Add a calibration as its runner's newest ceilings; returns the row id.

    Flushes but does not commit: the caller's ``session_scope`` makes it one transaction.
    """
    from service.store.tables import RunnerCeiling

    if not ceilings.runner:
        raise BadInput("--runner: a stored calibration needs a runner name")
    row = RunnerCeiling(
        runner=ceilings.runner,
        device=device_key(ceilings.device),
        backend=ceilings.backend,
        created_at=ceilings.created_at,
        ceilings_json=ceilings.model_dump_json(),
    )
    session.add(row)
    session.flush()
    assert row.id is not None  # assigned by the database on flush
    return row.id


def latest_ceilings(
    *, session: StoreSession, runner: str, device: str, backend: str | None = None
) -> Ceilings | None:
    """The newest stored calibration of ``runner``'s ``device`` (any name tools print for it).

    Args:
        session: A store session.
        runner: The CI runner's name.
        device: The device name as a report or tool prints it, or its catalog id.
        backend: Only calibrations measured through this backend (torch, cupy); any when None.
    """
    from service.store.ceilings import newest_ceilings_json

    found = newest_ceilings_json(session, runner=runner, device=device_key(device), backend=backend)
    return Ceilings.model_validate_json(found) if found is not None else None


def measured_roof(*, session: StoreSession, runner: str, device: str) -> Roof | None:
    """The runner's measured roof for ``device`` (source "measured"), None if never calibrated."""
    ceilings = latest_ceilings(session=session, runner=runner, device=device)
    return ceilings.roof() if ceilings is not None else None


#: The file suffixes ``calibrate --chart`` writes.
CHART_FORMATS = (".svg", ".png")


def check_chart_path(path: Path) -> None:
    """Refuse a ``--chart`` file name of another format (before minutes of measuring)."""
    if path.suffix.lower() not in CHART_FORMATS:
        raise BadInput(f"--chart {path}: use a .svg or .png file name")
    check_output_path(path, "--chart")


def check_output_path(path: Path, flag: str) -> None:
    """Refuse a file ``path`` that cannot be written: a folder, or a file where a folder must be.

    Checked before measuring, which takes minutes on a GPU; the folders are made on writing.
    """
    if path.is_dir():
        raise BadInput(f"{flag} {path}: is a folder; give a file name")
    above = next((p for p in path.absolute().parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise BadInput(f"{flag} {path}: {above} is a file, not a folder")
    if above is not None and not os.access(above, os.W_OK | os.X_OK):
        raise BadInput(f"{flag} {path}: cannot write in {above}")


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
