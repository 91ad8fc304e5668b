"""API tokens: generation, hashing and scope checks.

A token is shown once, when created; the store keeps only its SHA-256 hash. Tokens are
high-entropy random strings (256 bits), so a fast unsalted hash is enough: there is nothing
to brute-force that a salt would protect. Tokens are scoped to one repository (or an
``OWNER/*`` pattern) and to ``read`` or ``write``; ``write`` implies ``read``.
"""

from __future__ import annotations

import hashlib
import secrets
from enum import StrEnum
from fnmatch import fnmatchcase

#: Prefix that makes a roofguard token recognisable to secret scanners and people.
TOKEN_PREFIX = "rgt_"


class Permission(StrEnum):
    """What a token may do: ``read`` queries, ``write`` also uploads and accepts."""

    READ = "read"
    WRITE = "write"


def generate_token() -> str:
    """A new random token (shown to the user once, never stored)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The hex SHA-256 of a token: what the store keeps and looks tokens up by."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def scope_covers(scope: str, repo: str) -> bool:
    """Whether a token scoped to ``scope`` (``OWNER/NAME`` or ``OWNER/*``) covers ``repo``."""
    return fnmatchcase(repo.lower(), scope.lower())


def permits(granted: Permission | str, needed: Permission | str) -> bool:
    """Whether a token with ``granted`` may do what needs ``needed``."""
    return Permission(granted) == Permission.WRITE or Permission(needed) == Permission.READ


def valid_scope(scope: str) -> bool:
    """Whether ``scope`` looks like ``OWNER/NAME`` or ``OWNER/*``."""
    owner, sep, name = scope.partition("/")
    return bool(sep and owner and name and "/" not in name and owner != "*")
