"""Webhook deliveries seen by the service: each delivery is acted on once.

A delivery is known by its ``X-GitHub-Delivery`` id and by the sha256 of its body: the id
is not covered by the signature, so the same signed body under a new id is a replay too.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import sqlalchemy as sa

from service.errors import WebhookSignatureInvalid
from service.store.coretables import WEBHOOK_DELIVERIES as _DELIVERIES
from service.store.sessions import StoreSession


def record_delivery(
    *,
    session: StoreSession,
    delivery_id: str,
    event: str,
    now: datetime,
    keep: timedelta,
    payload_hash: str | None = None,
) -> None:
    """Record a delivery in the caller's transaction; forget those older than ``keep``.

    Call it in the transaction that acts on the delivery: if acting fails, the record rolls
    back with it and GitHub's redelivery (same id, same body) is accepted.

    Raises:
        WebhookSignatureInvalid: The delivery id or the body was recorded before (a replay).
    """
    c = _DELIVERIES.c
    session.execute(sa.delete(_DELIVERIES).where(c.received_at < now - keep))
    same = c.delivery_id == delivery_id
    if payload_hash is not None:
        same = sa.or_(same, c.payload_hash == payload_hash)
    seen = session.execute(sa.select(c.delivery_id, c.payload_hash).where(same)).first()
    if seen is not None:
        what = "delivery id" if seen.delivery_id == delivery_id else "signed body"
        raise WebhookSignatureInvalid(f"replayed delivery: this {what} was seen")
    row = {"delivery_id": delivery_id, "event": event, "received_at": now}
    try:
        with session.begin_nested():
            session.execute(sa.insert(_DELIVERIES).values(**row, payload_hash=payload_hash))
    except sa.exc.IntegrityError:  # a concurrent replica recorded it first
        raise WebhookSignatureInvalid("replayed delivery: this delivery was seen") from None
