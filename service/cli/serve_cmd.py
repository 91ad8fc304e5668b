"""``roofguard serve``: the HTTP service (upload API, dashboard, GitHub webhook) on uvicorn."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from pathlib import Path
from typing import Annotated, Any

import typer

from service.cli.db_cmd import DbOption
from service.errors import BadInput
from service.settings import load_settings

#: uvicorn's logging, plus roofguard's own loggers at INFO; no line ever holds a header.
LOG_CONFIG: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "stream": "ext://sys.stderr",
        }
    },
    "loggers": {
        "roofguard": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "uvicorn.access": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
    },
}


#: The highest TCP port; click refuses a --port above it before anything starts.
MAX_PORT = 65535
#: uvicorn's exit status when its server did not start (a port taken meanwhile, the app).
UVICORN_STARTUP_FAILURE = 3

#: Seconds an idle connection is kept open: longer than a 202's Retry-After (5 s).
KEEP_ALIVE_S = 30
#: Seconds a request cut short by a forced shutdown is told to wait before it is sent again.
SHUTDOWN_RETRY_AFTER_S = 5

log = logging.getLogger("roofguard.api")

_Asgi = Any  # an ASGI application; its message types are uvicorn's and starlette's concern


class AnswersAtForcedExit:
    """An ASGI application that answers 503 to a request its server cancels before the answer.

    uvicorn cancels the requests still running only when made to quit at once (a second
    Ctrl-C, or ``timeout_graceful_shutdown`` exceeded), and answers such a request 500, which
    a client reads as a crash and does not retry. Nothing of it is half-written: an ingest is
    one transaction that its check's thread commits whole or not at all, and the same upload
    again finds that run. So the client is told to come back (``roofguard upload`` retries).
    """

    def __init__(self, app: _Asgi) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Run the request; a cancellation before the answer started is answered 503."""
        started = False

        async def sending(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except asyncio.CancelledError:
            if scope["type"] != "http" or started:
                raise
            log.warning("%s %s cut short by a forced shutdown: answered 503", *_request(scope))
            await send(_unavailable_start())
            await send({"type": "http.response.body", "body": _UNAVAILABLE_BODY})


def _request(scope: Any) -> tuple[str, str]:
    return scope.get("method", ""), scope.get("path", "")


_UNAVAILABLE_BODY = b'{"detail":"the service is shutting down; send the request again"}'


def _unavailable_start() -> dict[str, Any]:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(_UNAVAILABLE_BODY)).encode()),
        (b"retry-after", str(SHUTDOWN_RETRY_AFTER_S).encode()),
        (b"connection", b"close"),
    ]
    return {"type": "http.response.start", "status": 503, "headers": headers}


def served_app() -> AnswersAtForcedExit:
    """The application from the environment, answering 503 at a forced exit (uvicorn's factory)."""
    from service.api.app import app_from_environment

    return AnswersAtForcedExit(app_from_environment())


def _is_sqlite(url: str | None) -> bool:
    return url is None or url.startswith("sqlite")


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=MAX_PORT, help="Port to listen on.")] = 8000,
    url: DbOption = None,
    config: Annotated[Path | None, typer.Option(help="roofguard.toml for uploads.")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
) -> None:
    """Serve the upload API, the dashboard and the GitHub webhook."""
    from service.api.app import CONFIG_ENV

    # Worker processes build their own application from the environment (uvicorn's factory),
    # so the command line's choices travel there too; a bad setting is refused here, before
    # the port is bound, not in each worker.
    settings = load_settings()
    if url:
        os.environ[settings.model_config["env_prefix"] + "DATABASE_URL"] = url
    if workers > 1 and _is_sqlite(url or settings.database_url):
        raise BadInput("--workers: several processes need PostgreSQL (SQLite has one writer)")
    if config:
        os.environ[CONFIG_ENV] = str(config.resolve())
    refuse_unbindable(host, port)
    target: Any = "service.cli.serve_cmd:served_app" if workers > 1 else served_app
    try:
        _serve(target, host, port, workers)
    except SystemExit as exc:  # uvicorn's "did not start" is 3; roofguard's codes are 0, 1, 2
        if exc.code != UVICORN_STARTUP_FAILURE:
            raise
        raise BadInput(f"serve: the server on {host}:{port} did not start (see above)") from None


def refuse_unbindable(host: str, port: int) -> None:
    """BadInput naming ``host:port`` and why, when nothing could listen there.

    uvicorn found out only after it had built the application and opened the store, and
    said so in a traceback (a port above 65535) or in its own log with exit 3.
    """
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        for family, kind, proto, _name, address in addresses:
            with socket.socket(family, kind, proto) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
                probe.bind(address)
    except OSError as exc:  # socket.gaierror for a host that is no address
        reason = exc.strerror or str(exc)
        raise BadInput(f"serve: cannot listen on {host}:{port}: {reason}") from None


def _serve(target: Any, host: str, port: int, workers: int) -> None:
    """Run uvicorn until it is stopped."""
    import uvicorn  # only this command needs the server, and the CLI starts faster without

    uvicorn.run(
        target,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_config=LOG_CONFIG,
        proxy_headers=True,
        forwarded_allow_ips="127.0.0.1",
        server_header=False,
        # Past the Retry-After of a 202: a client uploading again on its kept-alive
        # connection must not meet uvicorn closing it at that moment (5 s by default).
        timeout_keep_alive=KEEP_ALIVE_S,
    )


def register(app: typer.Typer) -> None:
    """Add ``roofguard serve`` to ``app``."""
    app.command("serve")(serve_command)
