"""Guards at the edge of the service against input the store or the logs must never see.

* ``NulQueryGuard``: a NUL byte in a query parameter is answered 422 before any route runs
  (PostgreSQL refuses NUL in text, so it would otherwise surface as a 500 on every page); a
  browser asking a dashboard page gets it as the HTML 422 page (``pagerrors``).
* ``find_nul``: where a JSON document carries a NUL byte in a string (run uploads, webhooks).
* ``RedactSecrets``: the access log never shows a token sent in a query string.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.pagerrors import refused_page

#: Query parameters whose values are secrets wherever they appear.
SECRET_PARAMS = frozenset(
    {"token", "access_token", "api_token", "api_key", "apikey", "auth", "password", "secret"}
)
#: Token shapes redacted anywhere in an access-log line (roofguard's and GitHub's).
_TOKEN_VALUE = re.compile(r"\b(rgt_|gh[opsu]_|github_pat_)[A-Za-z0-9_\-]+")
_SECRET_PARAM = re.compile(
    r"(?<=[?&])(" + "|".join(sorted(SECRET_PARAMS)) + r")=[^&#\s]*", re.IGNORECASE
)
REDACTED = "[redacted]"


def nul_parameter(query_string: bytes) -> str | None:
    """The name of the first query parameter holding a NUL byte, None when there is none."""
    if b"\x00" not in query_string and b"%00" not in query_string.lower():
        return None
    for name, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        if "\x00" in name or "\x00" in value:
            return name.replace("\x00", "\\0")
    return "(query string)"


class NulQueryGuard:
    """ASGI middleware answering 422 for a query string that carries a NUL byte.

    ``pages``: the dashboard's routes, whose browsers get the HTML 422 page (``pagerrors``).
    """

    def __init__(self, app: ASGIApp, pages: Sequence[BaseRoute] = ()) -> None:
        self.app = app
        self.pages = pages

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse the request when a query parameter holds a NUL byte, else pass it on."""
        name = nul_parameter(scope.get("query_string", b"")) if scope["type"] == "http" else None
        if name is None:
            await self.app(scope, receive, send)
            return
        message = f"query parameter {name}: contains a NUL byte"
        # a browser asking a dashboard page gets the HTML 422 page, as for any bad input there
        page = refused_page(scope, self.pages, message)
        if page is not None:
            await page(scope, receive, send)
            return
        body = json.dumps({"detail": message}).encode()
        start: Message = {
            "type": "http.response.start",
            "status": 422,
            "headers": [(b"content-type", b"application/json")],
        }
        await send(start)
        await send({"type": "http.response.body", "body": body})


def find_nul(value: Any, where: str = "") -> str | None:
    """The dotted path of the first string (or key) in ``value`` holding a NUL byte."""
    if isinstance(value, str):
        return (where or "(body)") if "\x00" in value else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            if "\x00" in str(key):
                return path
            found = find_nul(item, path)
            if found is not None:
                return found
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        for index, item in enumerate(value):
            found = find_nul(item, f"{where}.{index}" if where else str(index))
            if found is not None:
                return found
    return None


def redact(text: str) -> str:
    """``text`` with secret query parameters and token-shaped values replaced."""
    text = _SECRET_PARAM.sub(lambda m: f"{m.group(1)}={REDACTED}", text)
    return _TOKEN_VALUE.sub(REDACTED, text)


class RedactSecrets(logging.Filter):
    """A filter for ``uvicorn.access``: the request line's query keeps no secret."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the record's arguments (uvicorn passes the path with its query as one)."""
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = redact(record.msg)
        return True


def install_log_redaction(logger: logging.Logger | None = None) -> None:
    """Add ``RedactSecrets`` to the access logger once (several apps may share a process)."""
    target = logger or logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactSecrets) for f in target.filters):
        target.addFilter(RedactSecrets())
