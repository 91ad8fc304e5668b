"""Helpers shared by CLI commands: the history store and the configuration."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlmodel import Session

from service.config import RoofguardConfig, load_config
from service.errors import BadInput
from service.pipeline.roofs import ROOF_SOURCES
from service.pipeline.storable import StoreLimits
from service.settings import Settings
from service.store.db import open_store, session_scope


@contextmanager
def store_session(url: str | None) -> Iterator[Session]:
    """One transaction on the history store (created when new, refused when behind)."""
    engine = open_store(url)
    try:
        with session_scope(engine) as session:
            yield session
    finally:
        engine.dispose()


def load_cli_config(
    path: Path | None,
    *,
    base_branch: str | None = None,
    device: str | None = None,
    roof: str | None = None,
) -> RoofguardConfig:
    """The config file (explicit or found in the cwd) with command-line overrides applied.

    Raises:
        BadInput: ``roof`` is not a roof source.
    """
    cfg = load_config(path, cwd=Path.cwd())
    if roof is not None and roof not in ROOF_SOURCES:
        raise BadInput(f"--roof: unknown roof source {roof!r} (known: {', '.join(ROOF_SOURCES)})")
    updates = {"base_branch": base_branch, "device": device, "roof": roof}
    return cfg.model_copy(update={k: v for k, v in updates.items() if v is not None})


def cli_limits() -> StoreLimits:
    """What one run may hold, from the environment as the service reads it.

    ``ROOFGUARD_MAX_NAME_BYTES`` and ``ROOFGUARD_MAX_UPLOAD_KERNELS`` bound ``ingest`` and
    ``check`` as they bound an upload, so a run the command line stores the service takes.
    """
    return StoreLimits.of(Settings())
