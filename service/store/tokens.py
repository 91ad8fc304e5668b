"""API tokens: generation, hashing, storage and scope checks.

A token is shown once, when created; the store keeps only its SHA-256 hash. Tokens are
high-entropy random strings (256 bits), so a fast unsalted hash is enough: there is nothing
to brute-force that a salt would protect. Each token is scoped to one repository and to
``read`` or ``write`` (``write`` implies ``read``).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

import sqlalchemy as sa

from collectors.schema import is_repo_name
from service.errors import BadInput, Forbidden, NotFound, Unauthorized
from service.store.coretables import API_TOKENS as _TOKENS
from service.store.coretables import REPOSITORIES as _REPOS
from service.store.ids import as_utc, repo_id, same_repo
from service.store.rows import TokenValues
from service.store.sessions import StoreSession

#: Prefix that makes a roofguard token recognisable to secret scanners and people.
TOKEN_PREFIX = "rgt_"
#: ``last_used_at`` is refreshed at most this often, so reads do not each write a row.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class Permission(StrEnum):
    """What a token may do: ``read`` queries, ``write`` also uploads."""

    READ = "read"
    WRITE = "write"


@dataclass(frozen=True)
class Grant:
    """What an authenticated token may do.

    Attributes:
        token_id: The token's id.
        name: Its name (safe to log; the token itself never is).
        repo: The repository it is scoped to.
        permission: read or write.
        last_used_at: When it was last used, as stored (to the minute).
    """

    token_id: int
    name: str
    repo: str
    permission: Permission
    last_used_at: datetime | None = None

    def touch_due(self, now: datetime) -> bool:
        """Whether ``last_used_at`` is older than its resolution (or was never set)."""
        return self.last_used_at is None or now - self.last_used_at >= LAST_USED_RESOLUTION

    def require(self, *, repo: str | None, permission: Permission) -> None:
        """Raise Forbidden unless this grant covers ``permission`` on ``repo``."""
        if repo is None or repo.lower() != self.repo.lower():
            raise Forbidden(f"token {self.name!r} is scoped to {self.repo}, not to {repo}")
        if permission == Permission.WRITE and self.permission != Permission.WRITE:
            raise Forbidden(f"token {self.name!r} is read-only")


@dataclass(frozen=True)
class TokenInfo:
    """A stored token as ``roofguard token list`` shows it (never the token itself).

    Attributes:
        id: Its id (what ``roofguard token revoke`` takes).
        name: Its name.
        repo: Its repository.
        permission: read or write.
        created_at: When it was created.
        revoked_at: When it was revoked, None while valid.
        last_used_at: When it was last used (to the minute).
    """

    id: int
    name: str
    repo: str
    permission: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


def generate_token() -> str:
    """A new random token (shown to the user once, never stored)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The hex SHA-256 of a token: what the store keeps and looks tokens up by."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(
    *, session: StoreSession, repo: str, permission: Permission, name: str
) -> tuple[int, str]:
    """Store a new token's hash; return its id and the token (the only time it exists).

    Raises:
        BadInput: ``repo`` is not OWNER/NAME, or it or ``name`` is longer than its column.
    """
    if not is_repo_name(repo):  # the API refuses any other name: a token it could never use
        raise BadInput(f"--repo: expected OWNER/NAME, got {repo!r}")
    # PostgreSQL refuses a value past a VARCHAR's width and SQLite stores it: refuse it on both.
    _check_width("--repo", repo, _REPOS.c.name)
    _check_width("--name", name, _TOKENS.c.name)
    token = generate_token()
    row: TokenValues = {
        "name": name,
        "token_hash": hash_token(token),
        "permission": permission.value,
        "repo_id": repo_id(session=session, repo=repo, create=True),
        "created_at": datetime.now(UTC),
    }
    token_id = session.execute(sa.insert(_TOKENS).returning(_TOKENS.c.id), row).scalar_one()
    return int(token_id), token


def default_name(repo: str, permission: Permission) -> str:
    """The name of a token created without one: its repository and permission, cut to fit."""
    suffix = f" {permission.value}"
    width = _width(_TOKENS.c.name)
    return repo + suffix if width is None else repo[: width - len(suffix)] + suffix


def _width(column: sa.Column[str]) -> int | None:
    """The most characters a VARCHAR column holds (None: no limit)."""
    width = getattr(column.type, "length", None)
    return int(width) if width is not None else None


def _check_width(option: str, value: str, column: sa.Column[str]) -> None:
    """Raise BadInput naming ``option`` when ``value`` is longer than ``column`` holds."""
    width = _width(column)
    if width is not None and len(value) > width:
        raise BadInput(f"{option}: {len(value):,} characters, at most {width}")


def _info_select() -> sa.Select[tuple[object, ...]]:
    t = _TOKENS.c
    columns = (
        t.id,
        t.name,
        _REPOS.c.name.label("repo"),
        t.permission,
        t.created_at,
        t.revoked_at,
        t.last_used_at,
    )
    return sa.select(*columns).join(_REPOS, _REPOS.c.id == t.repo_id)


def _info(row: sa.Row[tuple[object, ...]]) -> TokenInfo:
    data = row._asdict()
    for column in ("created_at", "revoked_at", "last_used_at"):
        data[column] = as_utc(data[column]) if data[column] is not None else None
    return TokenInfo(**data)


def list_tokens(*, session: StoreSession, repo: str | None = None) -> list[TokenInfo]:
    """Stored tokens (revoked ones too), oldest first, of ``repo`` or of every repository."""
    stmt = _info_select().order_by(_TOKENS.c.id)
    if repo is not None:
        stmt = stmt.where(same_repo(_REPOS.c.name, repo))
    return [_info(row) for row in session.execute(stmt)]


def revoke_token(*, session: StoreSession, token_id: int) -> TokenInfo:
    """Revoke token ``token_id`` (idempotent); return it.

    Raises:
        NotFound: No such token.
    """
    now = datetime.now(UTC)
    session.execute(
        sa.update(_TOKENS)
        .where(_TOKENS.c.id == token_id, _TOKENS.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    row = session.execute(_info_select().where(_TOKENS.c.id == token_id)).first()
    if row is None:
        raise NotFound(f"token {token_id} does not exist (see `roofguard token list`)")
    return _info(row)


def authenticate(*, session: StoreSession, token: str) -> Grant:
    """The grant of ``token`` (a read: ``mark_used`` records the use separately).

    The token is looked up by its hash; comparing hashes of 256-bit random tokens leaks
    nothing useful through timing.

    Raises:
        Unauthorized: The token is unknown or revoked (the message never repeats it).
    """
    row = session.execute(
        _info_select()
        .add_columns(_TOKENS.c.token_hash)
        .where(_TOKENS.c.token_hash == hash_token(token))
    ).first()
    if row is None or row.revoked_at is not None:
        raise Unauthorized("the API token is unknown or revoked")
    last_used = as_utc(row.last_used_at) if row.last_used_at is not None else None
    return Grant(int(row.id), str(row.name), str(row.repo), Permission(row.permission), last_used)


def mark_used(*, session: StoreSession, token_id: int, when: datetime) -> None:
    """Record that token ``token_id`` was used at ``when``."""
    session.execute(sa.update(_TOKENS).where(_TOKENS.c.id == token_id).values(last_used_at=when))
