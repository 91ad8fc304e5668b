"""The one place that turns errors from every layer into HTTP answers."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy.engine import Engine
from starlette.exceptions import HTTPException

from collectors import CollectorError
from rules import RuleDefinitionError, RuleError, UnknownDevice, UnknownRule
from service.api.allow import allowed_methods
from service.api.pagerrors import invalid_page, unavailable_page, unknown_page
from service.errors import ServiceError, StoreUnavailable, Unauthorized
from service.store.db import describe

log = logging.getLogger("roofguard.api")

#: Seconds a client should wait before retrying when the store is unavailable.
RETRY_AFTER_S = 5
#: The ``WWW-Authenticate`` of a request without a valid API token.
BEARER_CHALLENGE = 'Bearer realm="roofguard"'


def error_status(exc: Exception) -> int:
    """The HTTP status for an error of any roofguard layer."""
    if isinstance(exc, ServiceError):
        return exc.status
    if isinstance(exc, CollectorError | UnknownDevice):
        return 422
    if isinstance(exc, UnknownRule | RuleDefinitionError):
        return 400
    return 500


def public_detail(exc: StoreUnavailable, engine: Engine) -> str:
    """What a client is told about an unavailable store: what happened, never where.

    The message names the store's URL (user, host, database) and the driver's words (host and
    port again); the client gets the first clause only, the log keeps everything.
    """
    text = str(exc).replace(f" {describe(engine)}", "")
    return text.split(": ", 1)[0]


async def handle_error(request: Request, exc: Exception) -> Response:
    """Answer ``{"detail": message}`` with the error's status; log server-side failures.

    A browser's page of an unavailable store is the HTML 503 page saying the same.
    """
    status = error_status(exc)
    if status >= 500:
        log.error("%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
    detail, headers = str(exc), None
    if isinstance(exc, StoreUnavailable):
        detail = public_detail(exc, request.app.state.roofguard.engine)
        headers = {"Retry-After": str(RETRY_AFTER_S)}
        if page := unavailable_page(request, detail, headers):
            return page
    elif isinstance(exc, Unauthorized):  # RFC 6750: a 401 names the scheme it asks for
        headers = {"WWW-Authenticate": BEARER_CHALLENGE}
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


async def handle_invalid_request(request: Request, exc: Exception) -> Response:
    """A query, path or header value FastAPI refused, as every other 422: one line of text.

    FastAPI answers a list of objects (``{"detail": [{"loc": ...}]}``), where every other
    error of the API, and its OpenAPI document (``ErrorPublic``), is ``{"detail": "..."}``.
    A browser asking a dashboard page gets that line in an HTML page (``invalid_page``).
    """
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0]
    where = " ".join(str(part) for part in first["loc"][:1])
    field = ".".join(str(part) for part in first["loc"][1:])
    detail = f"{where} {field}: {first['msg']}" if field else f"{where}: {first['msg']}"
    return invalid_page(request, detail) or JSONResponse({"detail": detail}, status_code=422)


async def handle_http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors as FastAPI answers them; a browser's unknown page as a page.

    ``/nope`` answered a browser ``{"detail": "Not Found"}``; API clients, and every path
    under the API, keep that JSON (``unknown_page``).
    """
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405 and (allowed := allowed_methods(request.app, request.url.path)):
        exc = HTTPException(405, exc.detail, headers={"Allow": ", ".join(allowed)})
    return unknown_page(request, exc.status_code) or await http_exception_handler(request, exc)


def install(app: FastAPI) -> None:
    """Register ``handle_error`` for the error base class of every layer."""
    for base in (ServiceError, CollectorError, RuleError):
        app.add_exception_handler(base, handle_error)
    app.add_exception_handler(RequestValidationError, handle_invalid_request)
    app.add_exception_handler(HTTPException, handle_http_error)
