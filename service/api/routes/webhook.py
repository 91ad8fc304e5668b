"""``POST /api/v1/github/webhook``: signed GitHub deliveries (PR reopened, /roofguard accept)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from service.api.deps import ServiceState, StateDep
from service.api.publish import post_outcome
from service.api.schemas import ErrorPublic
from service.api.verdicts import base_url, links_for, run_url, stored_outcome
from service.errors import BadInput
from service.github.signatures import check_fresh, event_time, verify_signature
from service.github.webhooks import WebhookAction, plan
from service.store.db import session_scope
from service.store.deliveries import record_delivery

log = logging.getLogger("roofguard.api")
router = APIRouter(tags=["github"])


class WebhookPublic(BaseModel):
    """What the service did with a delivery.

    Attributes:
        outcome: pong, ignored, no-run, repost or accepted.
        detail: Why, in words.
        posted: Whether the verdict was posted to GitHub.
    """

    outcome: str
    detail: str
    posted: bool = False


def _payload(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInput(f"webhook body is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise BadInput("webhook body is not a JSON object")
    return payload


def _act(
    state: ServiceState, event: str, delivery: str, payload: dict[str, Any], base: str
) -> WebhookPublic:
    # The delivery is recorded with what it does, in one transaction: if acting fails, GitHub's
    # redelivery is not taken for a replay. An accept is committed before posting.
    keep = timedelta(seconds=state.settings.webhook_max_age_s)
    with session_scope(state.engine) as session:
        record_delivery(
            session=session, delivery_id=delivery, event=event, now=datetime.now(UTC), keep=keep
        )
        action = plan(session=session, event=event, payload=payload)
    state.metrics.webhooks.labels(event, action.outcome).inc()
    log.info("webhook %s: %s (%s)", event, action.outcome, action.detail)
    if action.run_id is None or action.repo is None:
        return WebhookPublic(outcome=action.outcome, detail=action.detail)
    if state.github is None:
        return WebhookPublic(
            outcome=action.outcome,
            detail=action.detail + "; not posted: the service has no GitHub credentials",
        )
    return _post(state, action, base)


def _post(state: ServiceState, action: WebhookAction, base: str) -> WebhookPublic:
    assert action.run_id is not None and action.repo is not None and state.github is not None
    links = links_for(base, action.run_id, state.settings)
    with session_scope(state.engine, readonly=True) as session:
        outcome = stored_outcome(
            session=session, run_id=action.run_id, config=state.config, links=links
        )
    posted, reason = post_outcome(
        state.github,
        outcome,
        outcome.markdown,
        repo=action.repo,
        pr=action.pr,
        sha=action.sha,
        details_url=run_url(base, action.run_id),
    )
    detail = action.detail if posted else f"{action.detail}; not posted: {reason}"
    return WebhookPublic(outcome=action.outcome, detail=detail, posted=posted)


@router.post(
    "/github/webhook",
    status_code=202,
    response_model=WebhookPublic,
    responses={code: {"model": ErrorPublic} for code in (401, 413, 422)},
)
async def github_webhook(
    request: Request,
    state: StateDep,
    x_github_event: Annotated[str, Header()],
    x_github_delivery: Annotated[str | None, Header()] = None,
    x_hub_signature_256: Annotated[str | None, Header()] = None,
) -> WebhookPublic:
    """Receive a GitHub delivery signed with ``X-Hub-Signature-256`` (HMAC-SHA256).

    Unsigned, wrongly signed, stale and replayed deliveries are refused with 401.
    """
    body = await request.body()
    secret = state.settings.webhook_secret
    verify_signature(secret.get_secret_value() if secret else None, body, x_hub_signature_256)
    payload = _payload(body)
    if x_github_event == "ping":
        return WebhookPublic(outcome="pong", detail="webhook configured")
    max_age = timedelta(seconds=state.settings.webhook_max_age_s)
    delivery = check_fresh(x_github_delivery, event_time(payload), datetime.now(UTC), max_age)
    base = base_url(request, state.settings)
    return await run_in_threadpool(_act, state, x_github_event, delivery, payload, base)
