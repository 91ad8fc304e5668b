"""``roofguard serve``: the HTTP service (upload API, dashboard, GitHub webhook) on uvicorn."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from service.cli.db_cmd import DbOption
from service.errors import BadInput
from service.settings import Settings

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


#: Seconds an idle connection is kept open: longer than a 202's Retry-After (5 s).
KEEP_ALIVE_S = 30


def _is_sqlite(url: str | None) -> bool:
    return url is None or url.startswith("sqlite")


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    url: DbOption = None,
    config: Annotated[Path | None, typer.Option(help="roofguard.toml for uploads.")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
) -> None:
    """Serve the upload API, the dashboard and the GitHub webhook."""
    # Imported here: only this command needs the server, and the CLI starts faster without.
    import uvicorn

    from service.api.app import CONFIG_ENV, app_from_environment

    # Worker processes build their own application from the environment (uvicorn's factory),
    # so the command line's choices travel there too.
    if url:
        os.environ[Settings.model_config["env_prefix"] + "DATABASE_URL"] = url
    if workers > 1 and _is_sqlite(url or Settings().database_url):
        raise BadInput("--workers: several processes need PostgreSQL (SQLite has one writer)")
    if config:
        os.environ[CONFIG_ENV] = str(config.resolve())
    target: Any = "service.api.app:app_from_environment" if workers > 1 else app_from_environment
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
