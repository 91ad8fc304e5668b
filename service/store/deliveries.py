"""Webhook deliveries seen by the service: each ``X-GitHub-Delivery`` id is acted on once."""

from __future__ import annotations

from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session

from service.errors import WebhookSignatureInvalid
from service.store.tables import WebhookDelivery, table_of

_DELIVERIES = table_of(WebhookDelivery)


def record_delivery(
    *, session: Session, delivery_id: str, event: str, now: datetime, keep: timedelta
) -> None:
    """Record a delivery in the caller's transaction; forget those older than ``keep``.

    Call it in the transaction that acts on the delivery: if acting fails, the record rolls
    back with it and GitHub's redelivery is accepted.

    Raises:
        WebhookSignatureInvalid: The delivery id was recorded before (a replay).
    """
    session.execute(sa.delete(_DELIVERIES).where(_DELIVERIES.c.received_at < now - keep))
    seen = session.execute(
        sa.select(_DELIVERIES.c.delivery_id).where(_DELIVERIES.c.delivery_id == delivery_id)
    ).first()
    if seen is not None:
        raise WebhookSignatureInvalid("replayed delivery: this delivery id was seen")
    try:
        session.execute(
            sa.insert(_DELIVERIES).values(delivery_id=delivery_id, event=event, received_at=now)
        )
    except sa.exc.IntegrityError:  # a concurrent replica recorded it first; all rolls back
        raise WebhookSignatureInvalid("replayed delivery: this delivery id was seen") from None
