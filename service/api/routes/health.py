"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from service.api.deps import StateDep
from service.api.errors import public_detail
from service.api.schemas import Health
from service.errors import StoreUnavailable
from service.store.db import ensure_current

log = logging.getLogger("roofguard.api")
router = APIRouter(tags=["health"])


# Asynchronous, so that liveness answers even while every worker thread is busy with uploads.
@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """Liveness: the process serves requests (the database is not consulted)."""
    return Health(status="ok")


@router.get("/readyz", response_model=Health, responses={503: {"model": Health}})
def readyz(state: StateDep) -> Health | JSONResponse:
    """Readiness: the database is reachable and its migrations are current."""
    try:
        ensure_current(state.engine)
    except StoreUnavailable as exc:
        log.warning("not ready: %s", exc)
        detail = public_detail(exc, state.engine)
        body = Health(status="unavailable", detail=detail).model_dump()
        return JSONResponse(body, status_code=503)
    return Health(status="ok")


@router.get(
    "/metrics", response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}}
)
async def metrics(state: StateDep) -> Response:
    """Prometheus metrics in the text exposition format."""
    return Response(state.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
