"""GitHub credentials and API base URL, read at the edge (CLI) and passed down.

A token (``GITHUB_TOKEN``, or ``GH_TOKEN``) or GitHub App installation credentials
(``ROOFGUARD_GITHUB_APP_ID``, ``ROOFGUARD_GITHUB_APP_PRIVATE_KEY`` or ``..._PRIVATE_KEY_PATH``,
``ROOFGUARD_GITHUB_APP_INSTALLATION_ID``; ``ROOFGUARD_GITHUB_APP_SLUG`` names the bot).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import github3
import requests
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from github3 import exceptions as gh_exc

from service.errors import BadInput
from service.github.retry import Clock, GitHubFailed, RetryPolicy, with_retries

PUBLIC_API = "https://api.github.com"
#: The login of an installation token, which ``GET /user`` refuses: ``GITHUB_TOKEN``'s
#: ``github-actions[bot]`` or a GitHub App's ``<app-slug>[bot]``, so any login ending so.
ANY_APP_BOT = "[bot]"
APP_ENV = ("ROOFGUARD_GITHUB_APP_ID", "ROOFGUARD_GITHUB_APP_INSTALLATION_ID")


def resolve_api_url(explicit: str | None, env: Mapping[str, str]) -> str:
    """The REST API base URL.

    ``explicit`` (``--github-url``) may be an API URL (``https://api.github.com``,
    ``https://ghe.example.com/api/v3``) or a GitHub Enterprise Server root
    (``https://ghe.example.com``, to which ``/api/v3`` is added, as
    ``github3.GitHubEnterprise`` does). Without it, ``GITHUB_API_URL`` (set by Actions on
    github.com and GHES alike) or the public API.
    """
    if explicit:
        url = explicit.rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise BadInput(f"--github-url: not an http(s) URL: {explicit!r}")
        if parts.path in ("", "/") and parts.hostname != "api.github.com":
            return url + "/api/v3"
        return url
    return (env.get("GITHUB_API_URL") or PUBLIC_API).rstrip("/")


@dataclass(frozen=True)
class GitHubCredentials:
    """A token, or App installation credentials, plus the login comments are filtered by.

    Attributes:
        token: A ``GITHUB_TOKEN`` (an installation token) or a personal access token.
        app_id: GitHub App id, kept as ``str`` (PyJWT >= 2.11 rejects an int issuer).
        private_key_pem: The App's private key (PEM bytes).
        installation_id: The App installation id.
        login_name: Our login: ``ROOFGUARD_GITHUB_BOT_LOGIN``, else ``<app-slug>[bot]``;
            None for a token: the client learns it from ``GET /user`` (a personal or bot
            user's token), which an installation token is refused (``ANY_APP_BOT``).
    """

    token: str | None = None
    app_id: str | None = None
    private_key_pem: bytes | None = None
    installation_id: int | None = None
    login_name: str | None = None

    @property
    def bot_login(self) -> str | None:
        """The login our comments and issues are authored by, when known without asking."""
        return self.login_name

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> GitHubCredentials:
        """Credentials from the environment; BadInput naming the variable when incomplete."""
        override = env.get("ROOFGUARD_GITHUB_BOT_LOGIN")
        if env.get("ROOFGUARD_GITHUB_APP_ID"):
            slug = env.get("ROOFGUARD_GITHUB_APP_SLUG")
            login = override or (f"{slug}[bot]" if slug else None)
            if login is None:
                raise BadInput(
                    "ROOFGUARD_GITHUB_APP_SLUG: needed with App credentials "
                    "(comments are recognised by the App's bot login)"
                )
            pem, where = _private_key(env)
            installation_id = _installation_id(env)
            return cls(
                app_id=env["ROOFGUARD_GITHUB_APP_ID"].strip(),
                private_key_pem=_parsed_key(pem, where),
                installation_id=installation_id,
                login_name=login,
            )
        token = env.get("GITHUB_TOKEN") or env.get("GH_TOKEN")
        if not token:
            raise BadInput(
                "GITHUB_TOKEN: not set (or set ROOFGUARD_GITHUB_APP_ID, "
                "ROOFGUARD_GITHUB_APP_PRIVATE_KEY and "
                "ROOFGUARD_GITHUB_APP_INSTALLATION_ID for a GitHub App)"
            )
        return cls(token=token.strip(), login_name=override or None)

    def login(self, gh: github3.GitHub, *, retry: RetryPolicy, clock: Clock) -> None:
        """Authenticate ``gh``: App installation login, or the token as installation auth.

        github3.py refuses check-run writes unless the session holds installation auth; a
        ``GITHUB_TOKEN`` is one, so it is installed as such (github3.py's own integration
        helper does the same). A personal token then gets a 403 on check runs and the caller
        falls back to a commit status. The App's token exchange is retried as any call is.

        Raises:
            GitHubFailed: GitHub refused the App's login, or failed it past the retries.
        """
        if self.app_id is None:
            expires = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
            gh.session.app_installation_token_auth(
                {"token": self.token, "expires_at": expires.isoformat()}
            )
            return
        what = f"GitHub App installation login (installation {self.installation_id})"
        try:
            with_retries(lambda: self._exchange(gh), what=what, policy=retry, clock=clock)
        except gh_exc.GitHubException as exc:
            raise GitHubFailed(
                f"{what} refused: {exc}: check ROOFGUARD_GITHUB_APP_ID, the App's private key "
                "and ROOFGUARD_GITHUB_APP_INSTALLATION_ID"
            ) from exc

    def _exchange(self, gh: github3.GitHub) -> None:
        """The App's JWT for an installation token; a dropped connection as github3's error.

        github3.py posts this one request bare: ``requests``' errors are not its own, which
        the retries (and the caller's fallback) know.
        """
        assert self.private_key_pem is not None and self.installation_id is not None
        try:
            gh.login_as_app_installation(
                self.private_key_pem, str(self.app_id), self.installation_id
            )
        except (requests.ConnectionError, requests.Timeout) as exc:
            raise gh_exc.ConnectionError(exc) from exc
        except requests.RequestException as exc:
            raise gh_exc.TransportError(exc) from exc


def _private_key(env: Mapping[str, str]) -> tuple[bytes, str]:
    """The App's key as given, and where from (the variable, or the ``_PATH`` one and file)."""
    pem = env.get("ROOFGUARD_GITHUB_APP_PRIVATE_KEY")
    if pem:
        return pem.encode(), "ROOFGUARD_GITHUB_APP_PRIVATE_KEY"
    path = env.get("ROOFGUARD_GITHUB_APP_PRIVATE_KEY_PATH")
    if not path:
        raise BadInput("ROOFGUARD_GITHUB_APP_PRIVATE_KEY: not set (nor ..._PRIVATE_KEY_PATH)")
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BadInput(f"ROOFGUARD_GITHUB_APP_PRIVATE_KEY_PATH: {path}: {exc.strerror}") from exc
    return data, f"ROOFGUARD_GITHUB_APP_PRIVATE_KEY_PATH: {path}"


def _parsed_key(pem: bytes, where: str) -> bytes:
    """``pem`` when it is an unencrypted RSA private key in PEM, as a GitHub App's key is.

    Parsed here: PyJWT's own error, at the login, named neither the variable nor the file.
    """
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except TypeError as exc:  # a passphrase: GitHub's download has none, and PyJWT takes none
        raise BadInput(
            f"{where}: an encrypted private key; give the App's key unencrypted"
        ) from exc
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise BadInput(
            f"{where}: not a PEM private key (the App's settings page downloads it as a .pem "
            "file, -----BEGIN RSA PRIVATE KEY----- ...)"
        ) from exc
    if not isinstance(key, rsa.RSAPrivateKey):
        raise BadInput(f"{where}: not an RSA private key, as a GitHub App's key is")
    return pem


def _installation_id(env: Mapping[str, str]) -> int:
    raw = env.get("ROOFGUARD_GITHUB_APP_INSTALLATION_ID", "")
    if not raw.strip().isdigit():
        raise BadInput(f"ROOFGUARD_GITHUB_APP_INSTALLATION_ID: expected a number, got {raw!r}")
    return int(raw)
