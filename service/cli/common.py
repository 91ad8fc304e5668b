"""Helpers shared by CLI commands: the history store and the configuration."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine

from service.config import RoofguardConfig, load_config
from service.errors import BadInput
from service.pipeline.roofs import ROOF_SOURCES
from service.pipeline.storable import StoreLimits
from service.store.db import core_scope, open_store, session_scope
from service.store.sessions import CoreSession

if TYPE_CHECKING:
    from sqlmodel import Session


@contextmanager
def _store(url: str | None) -> Iterator[Engine]:
    """The history store's engine (created when new, refused when behind), disposed after."""
    engine = open_store(url)
    try:
        yield engine
    finally:
        engine.dispose()


@contextmanager
def store_session(url: str | None) -> Iterator[Session]:
    """One transaction on the history store in a sqlmodel session (``calibrate``'s ORM rows)."""
    with _store(url) as engine, session_scope(engine) as session:
        yield session


@contextmanager
def core_session(url: str | None) -> Iterator[CoreSession]:
    """One transaction on the history store in Core: what ``check``, ``ingest`` and ``demo`` use.

    Every store function takes it, and it imports neither sqlmodel nor SQLAlchemy's ORM
    (a fifth of a check process's imports).
    """
    with _store(url) as engine, core_scope(engine) as session:
        yield session


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


#: The environment variables of ``StoreLimits`` (``Settings.max_name_bytes`` and
#: ``Settings.max_upload_kernels``; pydantic-settings reads names in any letter case).
LIMIT_VARIABLES = ("ROOFGUARD_MAX_NAME_BYTES", "ROOFGUARD_MAX_UPLOAD_KERNELS")


def cli_limits() -> StoreLimits:
    """What one run may hold, from the environment as the service reads it.

    ``ROOFGUARD_MAX_NAME_BYTES`` and ``ROOFGUARD_MAX_UPLOAD_KERNELS`` bound ``ingest`` and
    ``check`` as they bound an upload, so a run the command line stores the service takes.
    Neither set, the limits are the settings' defaults (a test holds them equal), read
    without importing pydantic-settings.
    """
    if not any(name.upper() in LIMIT_VARIABLES for name in os.environ):
        return StoreLimits()
    from service.settings import load_settings

    return StoreLimits.of(load_settings())
