"""The roofguard HTTP service: ``create_app(settings, config)`` builds the FastAPI application.

Nothing is created at import time: the engine, the metrics registry and the webhook replay
guard belong to the application, so tests can run several side by side with their own
settings. Routes are synchronous where they only talk to the database (FastAPI runs them in
its thread pool) and asynchronous only where they read a raw body.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI
from sqlalchemy.engine import Engine

from collectors.schema import RunRecord
from service import __version__
from service.api import errors
from service.api.deps import ServiceState, store_ready
from service.api.gctune import tune_for_service
from service.api.guards import NulQueryGuard, install_log_redaction
from service.api.limits import BodySizeLimit
from service.api.metrics import MetricsMiddleware
from service.api.publish import GitHubFactory, github_factory, github_from_env
from service.api.routes import compare, health, kernels, pages, runs, verdict, webhook
from service.api.schemas import ErrorPublic
from service.config import RoofguardConfig, load_config
from service.settings import Settings, load_settings
from service.store.db import make_engine

API_PREFIX = "/api/v1"
#: Environment variable naming the roofguard.toml that ``app_from_environment`` loads.
CONFIG_ENV = "ROOFGUARD_CONFIG"
#: What a route of the store answers while ``store_ready`` refuses it (not upgraded, out of
#: reach), in the OpenAPI document of each: the routers of the store are included with it.
STORE_ERRORS: dict[int | str, dict[str, Any]] = {503: {"model": ErrorPublic}}
DESCRIPTION = (
    "Upload GPU kernel profiles and benchmark results, get roofline verdicts back, and query "
    "the history. Uploads and queries need `Authorization: Bearer TOKEN` "
    "(`roofguard token create`)."
)


def create_app(
    settings: Settings,
    config: RoofguardConfig,
    *,
    engine: Engine | None = None,
    github: GitHubFactory | None = None,
) -> FastAPI:
    """The service application.

    Args:
        settings: Database URL, secrets and limits (from the environment, by the caller).
        config: The roofguard configuration used to evaluate uploads.
        engine: An engine to use instead of one made from ``settings.database_url``.
        github: Makes GitHub clients (e.g. App credentials from the CLI); default: from
            ``settings.github_token``, none without it.
    """
    own_engine = engine or make_engine(settings.database_url)
    state = ServiceState.build(settings, config, own_engine, github or github_factory(settings))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        if engine is None:
            state.engine.dispose()

    app = FastAPI(
        title="roofguard", version=__version__, description=DESCRIPTION, lifespan=lifespan
    )
    app.state.roofguard = state
    errors.install(app)
    # The API's and the dashboard's routes read the store: a 503 until it is current, not a 500,
    # which each of them documents.
    store: dict[str, Any] = {"dependencies": [Depends(store_ready)], "responses": STORE_ERRORS}
    for module in (runs, verdict, kernels, webhook):
        app.include_router(module.router, prefix=API_PREFIX, **store)
    app.include_router(health.router)
    app.include_router(pages.router, **store)
    app.include_router(compare.router, **store)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_upload_bytes)
    app.add_middleware(NulQueryGuard, pages=[*pages.router.routes, *compare.router.routes])
    install_log_redaction()
    app.add_middleware(MetricsMiddleware, metrics=state.metrics, api_prefix=API_PREFIX)
    _document_records(app)
    return app


def app_from_environment() -> FastAPI:
    """The application from the environment: uvicorn's factory for ``serve --workers N``.

    Each worker process calls it once at start: settings from ``ROOFGUARD_*``, the
    configuration from ``ROOFGUARD_CONFIG`` (else discovered in the working directory), and
    GitHub App credentials when they are set. The garbage collector is then tuned for a
    long-lived process.
    """
    settings = load_settings()
    path = os.environ.get(CONFIG_ENV)
    config = load_config(Path(path) if path else None, cwd=Path.cwd())
    app = create_app(settings, config, github=github_from_env(settings, os.environ))
    tune_for_service()  # a serving process from here on (``service.api.gctune``)
    return app


def _document_records(app: FastAPI) -> None:
    """Add RunRecord (the JSON upload body, described by hand) to the OpenAPI components."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            record = RunRecord.model_json_schema(ref_template="#/components/schemas/{model}")
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components.update(record.pop("$defs", {}))
            components["RunRecord"] = record
        return app.openapi_schema  # type: ignore[return-value]

    app.openapi = openapi  # type: ignore[method-assign]
