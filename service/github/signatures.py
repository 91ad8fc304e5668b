"""GitHub webhook deliveries: signature, freshness and replay checks.

GitHub signs each delivery with ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>``
over the raw body. GitHub sends no delivery timestamp header, so freshness is judged from the
payload's own time of the event (``comment.updated_at``, ``pull_request.updated_at``): a
delivery older than ``max_age`` is stale, and one dated more than ``FUTURE_SKEW`` ahead is
refused too (it would stay fresh for longer than its replay record is kept).

The ``X-GitHub-Delivery`` id is not signed: a captured body can be sent again under any new
id. So a delivery is recognised by what the signature covers, the sha256 of its body, as
well as by its id (``service.store.deliveries``, shared by every replica): too old is
stale, and younger is a body (or id) seen before.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from service.errors import BadInput, WebhookSignatureInvalid

_SIGNATURE_PREFIX = "sha256="
#: GitHub's delivery ids are GUIDs; anything longer or odder is not one (the store keeps 100).
_DELIVERY_ID = re.compile(r"[A-Za-z0-9-]{1,100}")
#: How far ahead of this machine's clock an event may be dated (clocks drift a little).
FUTURE_SKEW = timedelta(seconds=60)


def body_hash(body: bytes) -> str:
    """sha256 of a delivery's raw body: what identifies it across delivery ids."""
    return hashlib.sha256(body).hexdigest()


def sign(secret: str, body: bytes) -> str:
    """The ``X-Hub-Signature-256`` value GitHub would send for ``body``."""
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return _SIGNATURE_PREFIX + digest


def verify_signature(secret: str | None, body: bytes, header: str | None) -> None:
    """Raise WebhookSignatureInvalid unless ``header`` is the body's valid signature."""
    if not secret:
        raise WebhookSignatureInvalid("webhook secret is not configured; deliveries are refused")
    if not header:
        raise WebhookSignatureInvalid("missing X-Hub-Signature-256 header")
    # compare_digest refuses a str with non-ASCII letters (a TypeError, once an HTTP 500)
    if not header.startswith(_SIGNATURE_PREFIX) or not header.isascii():
        raise WebhookSignatureInvalid("X-Hub-Signature-256 is not a sha256= signature")
    if not hmac.compare_digest(sign(secret, body), header):
        raise WebhookSignatureInvalid("X-Hub-Signature-256 does not match the body")


def event_time(payload: dict[str, Any]) -> datetime | None:
    """When the event happened, from the payload (None when it carries no time)."""
    for owner in ("comment", "pull_request", "issue"):
        value = (payload.get(owner) or {}).get("updated_at")
        if isinstance(value, str):
            return _parse_time(value)
    return None


def _parse_time(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def check_delivery_id(delivery_id: str | None) -> str:
    """The delivery id, checked whatever the event (one the service ignores too).

    Raises:
        WebhookSignatureInvalid: No delivery id.
        BadInput: The delivery id is not one GitHub would send.
    """
    if not delivery_id:
        raise WebhookSignatureInvalid("missing X-GitHub-Delivery header")
    if not _DELIVERY_ID.fullmatch(delivery_id):
        raise BadInput("X-GitHub-Delivery: not a delivery id (1 to 100 letters, digits and dashes)")
    return delivery_id


#: The payload key that dates each event the service acts on.
_TIME_KEYS = {"pull_request": "pull_request.updated_at", "issue_comment": "comment.updated_at"}


def check_fresh(event: str, payload: dict[str, Any], now: datetime, max_age: timedelta) -> None:
    """Refuse an event too old or dated in the future (WebhookSignatureInvalid).

    Whether the delivery was seen before is the store's to say (``record_delivery``), so that
    every replica of the service refuses a replay.

    Raises:
        WebhookSignatureInvalid: An event too old or dated in the future.
        BadInput: The payload carries no time: "stale" sent an operator after the clock.
    """
    happened = event_time(payload)
    if happened is None:
        key = _TIME_KEYS.get(event, "updated_at")
        raise BadInput(f"webhook payload: {key} is missing or not a time")
    if now - happened > max_age:
        raise WebhookSignatureInvalid("stale delivery: the event is older than allowed")
    if happened - now > FUTURE_SKEW:
        raise WebhookSignatureInvalid(
            "delivery from the future: the event is dated after this machine's clock"
        )
