"""Settings from the environment (``ROOFGUARD_*``): the database URL and secrets only.

Built by the CLI's commands or passed to ``create_app``; never instantiated at import time.
Secrets are ``SecretStr`` so that a repr or a log line shows ``**********``. Everything a
team decides about its checks lives in ``roofguard.toml`` instead (``service.config``).
"""

from __future__ import annotations

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


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
        api_token: Token that uploads to the HTTP service must present.
        public_url: Base URL the dashboard is reachable at (used in PR-comment links).
        max_upload_bytes: Largest request body the service accepts (413 above).
    """

    model_config = SettingsConfigDict(env_prefix="ROOFGUARD_", extra="ignore")

    database_url: str | None = None
    github_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ROOFGUARD_GITHUB_TOKEN", "GITHUB_TOKEN")
    )
    github_api_url: str | None = None
    github_bot_login: str | None = None
    webhook_secret: SecretStr | None = None
    webhook_max_age_s: int = Field(default=600, ge=1)
    api_token: SecretStr | None = None
    public_url: str | None = None
    max_upload_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
