"""Settings from the environment (``ROOFGUARD_*``): the database URL and secrets only.

Built by the CLI's commands or passed to ``create_app``; never instantiated at import time.
Secrets are ``SecretStr`` so that a repr or a log line shows ``**********``. Everything a
team decides about its checks lives in ``roofguard.toml`` instead (``service.config``).
"""

from __future__ import annotations

import re
from typing import get_args
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from service.errors import BadInput

#: Whitespace or a control character: not part of a URL GitHub takes as a link.
_HAS_SPACE = re.compile(r"[\s\x00-\x1f\x7f]")
NOT_HTTP_URL = "not an absolute http(s) URL"


def is_http_url(url: str) -> bool:
    """Whether ``url`` is an absolute http(s) URL with a host, no whitespace or control char.

    GitHub refuses any other ``details_url`` or ``target_url`` with 422, and a ``javascript:``
    link must not reach a comment (``--run-url``, ``ROOFGUARD_PUBLIC_URL``).
    """
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed IPv6 bracket
        return False
    return (
        parts.scheme.lower() in ("http", "https")
        and bool(parts.hostname)
        and (not _HAS_SPACE.search(url))
    )


class Settings(BaseSettings):
    """Environment settings.

    Attributes:
        database_url: SQLAlchemy URL of the history store (``ROOFGUARD_DATABASE_URL``;
            default: SQLite ``.roofguard/history.db`` in the working directory).
        github_token: Token the service posts with (``ROOFGUARD_GITHUB_TOKEN``, else the
            ``GITHUB_TOKEN`` that GitHub Actions provides).
        github_api_url: GitHub Enterprise base URL (default: api.github.com).
        github_bot_login: The login the token posts as (its sticky comments are edited).
        webhook_secret: Secret of the GitHub webhook (deliveries are refused without it).
        webhook_max_age_s: Deliveries whose event is older than this are stale.
        public_url: Base URL the dashboard is reachable at (used in PR-comment links and as
            the check's ``details_url``): an absolute http(s) URL, else refused at start.
        max_upload_bytes: Largest request body the service accepts (413 above).
        max_upload_kernels: Most kernels one uploaded run may hold (413 above): ingest is
            linear, but one upload must not hold the database for minutes.
        max_name_bytes: Longest kernel name or identity key, in UTF-8 bytes (422 above).
        upload_answer_s: How long an upload waits for its check before it is answered 202
            (the check goes on; the same upload again gets its verdict). Below the 120 s
            that ``roofguard upload`` waits for an answer.
        max_concurrent_checks: Uploads judged at once per process; more wait their turn
            (checks are CPU-bound, and each holds a database connection).

    API tokens of the HTTP service are not settings: they live, hashed, in the history store
    (``roofguard token create``).
    """

    model_config = SettingsConfigDict(
        env_prefix="ROOFGUARD_", extra="ignore", populate_by_name=True
    )

    database_url: str | None = None
    github_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ROOFGUARD_GITHUB_TOKEN", "GITHUB_TOKEN")
    )
    github_api_url: str | None = None
    github_bot_login: str | None = None
    webhook_secret: SecretStr | None = None
    webhook_max_age_s: int = Field(default=600, ge=1)
    public_url: str | None = None
    max_upload_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    max_upload_kernels: int = Field(default=200_000, ge=1)
    max_name_bytes: int = Field(default=65_536, ge=256)
    upload_answer_s: float = Field(default=60.0, ge=0, le=110)
    max_concurrent_checks: int = Field(default=4, ge=1, le=64)

    @field_validator("public_url")
    @classmethod
    def _public_url_is_http(cls, url: str | None) -> str | None:
        if url and not is_http_url(url):
            raise ValueError(NOT_HTTP_URL)
        return url or None


def load_settings() -> Settings:
    """Settings from the environment; a bad value is BadInput naming its variable and why."""
    try:
        return Settings()
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else ""
        field = Settings.model_fields.get(name)
        variable = name if name.isupper() else Settings.model_config["env_prefix"] + name.upper()
        secret = field is not None and SecretStr in (field.annotation, *get_args(field.annotation))
        shown = "" if secret else f": {error['input']!r}"
        reason = str(error["msg"]).removeprefix("Value error, ")
        raise BadInput(f"{variable}: {reason}{shown}") from None
