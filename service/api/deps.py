"""Dependencies of the routes, as ``Annotated`` aliases: ``SessionDep``, ``AuthDep`` ...

Everything comes from the ``ServiceState`` that ``create_app`` builds from the settings and
configuration it was given; nothing here is created at import time. The trivial getters are
``async`` so FastAPI calls them on the event loop instead of borrowing a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

import sqlalchemy as sa
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.engine import Engine
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from service.api.inflight import InFlight
from service.api.metrics import Metrics
from service.api.publish import GitHubFactory
from service.config import RoofguardConfig
from service.errors import StoreUnavailable, Unauthorized
from service.pipeline.check import config_digest
from service.settings import Settings
from service.store.db import ensure_current, session_scope
from service.store.tokens import Grant, authenticate, mark_used


@dataclass
class ServiceState:
    """What the application holds for its lifetime.

    Attributes:
        settings: Secrets, database URL and limits (from the environment).
        config: The roofguard configuration (rules, thresholds, kernel groups).
        engine: The history store's engine (one pool for the process).
        metrics: Prometheus metrics of this instance.
        github: Makes GitHub clients; None when the service has no GitHub credentials.
        check_slots: Bounds the checks running at once (``max_concurrent_checks``); waiting
            uploads wait on the event loop, not in the thread pool that every other
            synchronous route (and the health checks) needs.
        in_flight: This replica's side of the upload claims (one check per upload).
        config_key: The digest of ``config`` (``config_digest``): part of each upload's claim.
        store_current: The store was found at this roofguard's migration (``store_ready``).
    """

    settings: Settings
    config: RoofguardConfig
    engine: Engine
    metrics: Metrics
    github: GitHubFactory | None
    check_slots: asyncio.Semaphore
    in_flight: InFlight
    config_key: str
    store_current: bool = False

    @classmethod
    def build(
        cls,
        settings: Settings,
        config: RoofguardConfig,
        engine: Engine,
        github: GitHubFactory | None,
    ) -> ServiceState:
        """The state for an application serving ``engine`` with these settings."""
        # SQLite has one writer at a time: a second check would only wait on its lock (and
        # past the busy timeout), so checks queue here instead.
        sqlite = engine.dialect.name == "sqlite"
        slots = asyncio.Semaphore(1 if sqlite else settings.max_concurrent_checks)
        flight, key = InFlight(engine), config_digest(config)
        return cls(settings, config, engine, Metrics(), github, slots, flight, key)


async def get_state(request: Request) -> ServiceState:
    """The application's state."""
    state: ServiceState = request.app.state.roofguard
    return state


StateDep = Annotated[ServiceState, Depends(get_state)]


async def get_settings(state: StateDep) -> Settings:
    """The settings the application was created with."""
    return state.settings


async def get_config(state: StateDep) -> RoofguardConfig:
    """The roofguard configuration the application was created with."""
    return state.config


async def get_engine(state: StateDep) -> Engine:
    """The history store's engine (for routes that run their own, retried, transactions)."""
    return state.engine


async def store_ready(state: StateDep) -> None:
    """Refuse a route of the store (503) until the store is at this roofguard's migration.

    Started before ``roofguard db upgrade``, or on a store migrations behind, every route
    failed on a missing table or column (a 500) while ``/readyz`` named the command to run.
    Once found current it is not asked again, so a request pays no query for it: migrations
    only move forward, and a store a newer roofguard upgraded is ``/readyz``'s to report.

    Raises:
        StoreUnavailable: Unreachable, not initialised, or at another migration.
    """
    if not state.store_current:
        await run_in_threadpool(ensure_current, state.engine)
        state.store_current = True


def get_session(state: StateDep) -> Iterator[Session]:
    """A read-only session for the request (SQLite readers never wait for writers)."""
    with session_scope(state.engine, readonly=True) as session:
        yield session


SettingsDep = Annotated[Settings, Depends(get_settings)]
ConfigDep = Annotated[RoofguardConfig, Depends(get_config)]
EngineDep = Annotated[Engine, Depends(get_engine)]
SessionDep = Annotated[Session, Depends(get_session)]

log = logging.getLogger("roofguard.api")
_bearer = HTTPBearer(auto_error=False, description="An API token from `roofguard token create`.")


def get_grant(
    state: StateDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Grant:
    """The grant of the request's bearer token.

    Raises:
        Unauthorized: No bearer token, or one that is unknown or revoked.
    """
    if credentials is None or not credentials.credentials:
        raise Unauthorized("an API token is required: Authorization: Bearer TOKEN")
    grant = _authenticate(state.engine, credentials.credentials)
    now = datetime.now(UTC)
    if grant.touch_due(now):
        _mark_used(state.engine, grant, now)
    return grant


#: Attempts at the token lookup when the database drops the connection under it.
AUTH_ATTEMPTS = 3


def _authenticate(engine: Engine, token: str) -> Grant:
    """``authenticate``, retried on a connection the server cut (as an upload's check is)."""
    for attempt in range(AUTH_ATTEMPTS):
        try:
            with session_scope(engine, readonly=True) as session:
                return authenticate(session=session, token=token)
        except (StoreUnavailable, sa.exc.DBAPIError) as exc:
            cut = isinstance(exc, StoreUnavailable) or exc.connection_invalidated
            if not cut or attempt == AUTH_ATTEMPTS - 1:
                raise
            log.warning(
                "token lookup: attempt %d failed (%s); retrying", attempt + 1, type(exc).__name__
            )
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")  # pragma: no cover


def _mark_used(engine: Engine, grant: Grant, now: datetime) -> None:
    """Record the token's use, best effort: a busy store must not refuse the request."""
    try:
        with session_scope(engine) as session:
            mark_used(session=session, token_id=grant.token_id, when=now)
    except StoreUnavailable as exc:
        log.info("last use of token %r not recorded: %s", grant.name, type(exc).__name__)


AuthDep = Annotated[Grant, Depends(get_grant)]
