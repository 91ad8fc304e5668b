"""``roofguard serve``: the HTTP service (upload API, dashboard, GitHub webhook) on uvicorn."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from service.cli.db_cmd import DbOption
from service.settings import Settings

if TYPE_CHECKING:
    from service.api.publish import GitHubFactory

#: uvicorn's logging, plus roofguard's own loggers at INFO; no line ever holds a header.
LOG_CONFIG: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain",
                            "stream": "ext://sys.stderr"}},
    "loggers": {
        "roofguard": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "uvicorn.access": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
    },
}  # fmt: skip


def _app_credentials(settings: Settings) -> GitHubFactory | None:
    """GitHub App credentials from the environment, when ``ROOFGUARD_GITHUB_APP_ID`` is set."""
    from service.github import make_client
    from service.github_auth import APP_ENV, GitHubCredentials, resolve_api_url

    if not all(os.environ.get(name) for name in APP_ENV):
        return None
    credentials = GitHubCredentials.from_env(os.environ)
    api_url = resolve_api_url(settings.github_api_url, os.environ)
    return lambda: make_client(credentials, api_url=api_url)


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    url: DbOption = None,
    config: Annotated[Path | None, typer.Option(help="roofguard.toml for uploads.")] = None,
) -> None:  # fmt: skip
    """Serve the upload API, the dashboard and the GitHub webhook."""
    # Imported here: only this command needs the server, and the CLI starts faster without.
    import uvicorn

    from service.api.app import create_app
    from service.config import load_config

    settings = Settings()
    if url:
        settings = settings.model_copy(update={"database_url": url})
    app = create_app(settings, load_config(config, cwd=Path.cwd()),
                     github=_app_credentials(settings))  # fmt: skip
    uvicorn.run(app, host=host, port=port, log_config=LOG_CONFIG, proxy_headers=True,
                forwarded_allow_ips="127.0.0.1", server_header=False)  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add ``roofguard serve`` to ``app``."""
    app.command("serve")(serve_command)
