"""Service errors. Each carries an HTTP ``status`` and a CLI ``exit_code``; one place maps each."""

from __future__ import annotations


class ServiceError(Exception):
    """Base class of service errors."""

    status = 500
    exit_code = 2


class ConfigError(ServiceError):
    """A configuration file or value is wrong; names the file and the key."""

    status = 400

    def __init__(self, key: str, reason: str, path: str | None = None) -> None:
        self.key = key
        self.reason = reason
        self.path = path
        where = f"{path}: " if path else ""
        super().__init__(f"{where}{key}: {reason}")


class BadInput(ServiceError):
    """A request or command-line value is wrong."""

    status = 422


class NotFound(ServiceError):
    """Something asked for does not exist."""

    status = 404


class Conflict(ServiceError):
    """The request conflicts with what is stored."""

    status = 409


class Unauthorized(ServiceError):
    """No or an invalid API token."""

    status = 401


class Forbidden(ServiceError):
    """The token's scope does not cover the request."""

    status = 403


class WebhookSignatureInvalid(ServiceError):
    """A webhook without a valid ``X-Hub-Signature-256``, or a stale one."""

    status = 401


class StoreUnavailable(ServiceError):
    """The history store is locked, unreachable or its migrations are behind."""

    status = 503
