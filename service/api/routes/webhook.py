"""``POST /api/v1/github/webhook``: signed GitHub deliveries (PR reopened, /roofguard accept)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Header, Request
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from service.api.deps import ServiceState, StateDep
from service.api.guards import find_nul
from service.api.publish import post_outcome
from service.api.schemas import ErrorPublic
from service.api.verdicts import base_url, links_for, run_url, stored_outcome
from service.errors import BadInput, ServiceError
from service.github.signatures import (
    FUTURE_SKEW,
    body_hash,
    check_delivery_id,
    check_fresh,
    verify_signature,
)
from service.github.webhooks import WebhookAction, ignored_event, plan
from service.store.db import session_scope
from service.store.deliveries import record_delivery

log = logging.getLogger("roofguard.api")
router = APIRouter(tags=["github"])


class WebhookPublic(BaseModel):
    """What the service did with a delivery.

    Attributes:
        outcome: pong, ignored, no-run, repost or accepted.
        detail: Why, in words.
        posted: Whether the verdict was posted to GitHub (always false now: posting happens
            after the answer, see ``queued``).
        queued: Whether the verdict is being posted to GitHub after this answer (GitHub
            gives a webhook ten seconds; a slow GitHub API must not make it time out).
    """

    outcome: str
    detail: str
    posted: bool = False
    queued: bool = False


def _payload(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInput(f"webhook body is not JSON: {exc}") from None
    except RecursionError:  # signed, yet nested deeper than any event GitHub sends
        raise BadInput("webhook body is nested too deeply to read") from None
    if not isinstance(payload, dict):
        raise BadInput("webhook body is not a JSON object")
    try:
        where = find_nul(payload)
    except RecursionError:
        raise BadInput("webhook body is nested too deeply to read") from None
    if where is not None:
        raise BadInput(f"webhook payload: {where}: contains a NUL byte")
    return payload


@dataclass(frozen=True)
class Delivery:
    """A verified delivery: its event, id, body hash and payload."""

    event: str
    delivery_id: str
    payload_hash: str
    payload: dict[str, Any]


def _act(state: ServiceState, delivery: Delivery) -> WebhookAction:
    # The delivery is recorded with what it does, in one transaction: if acting fails, GitHub's
    # redelivery is not taken for a replay. An accept is committed before posting.
    # Kept as long as an event may still pass as fresh (its age, or its clock ahead of ours).
    keep = timedelta(seconds=state.settings.webhook_max_age_s) + FUTURE_SKEW
    with session_scope(state.engine) as session:
        record_delivery(
            session=session,
            delivery_id=delivery.delivery_id,
            event=delivery.event,
            now=datetime.now(UTC),
            keep=keep,
            payload_hash=delivery.payload_hash,
        )
        action = plan(session=session, event=delivery.event, payload=delivery.payload)
    state.metrics.webhooks.labels(delivery.event, action.outcome).inc()
    log.info("webhook %s: %s (%s)", delivery.event, action.outcome, action.detail)
    return action


def _answer(state: ServiceState, action: WebhookAction) -> WebhookPublic:
    if action.run_id is None or action.repo is None:
        return WebhookPublic(outcome=action.outcome, detail=action.detail)
    if state.github is None:
        return WebhookPublic(
            outcome=action.outcome,
            detail=action.detail + "; not posted: the service has no GitHub credentials",
        )
    return WebhookPublic(outcome=action.outcome, detail=action.detail, queued=True)


def _post(state: ServiceState, action: WebhookAction, base: str) -> None:
    """Post the action's verdicts, one per card (after the answer was sent)."""
    for run_id, sha in action.posts:
        _post_one(state, action, (run_id, sha), base)


def _post_one(
    state: ServiceState, action: WebhookAction, verdict_of: tuple[int, str | None], base: str
) -> None:
    """Post the verdict of one run (``verdict_of``: its id and commit); failures are logged."""
    assert action.repo is not None and state.github is not None
    run_id, sha = verdict_of
    links = links_for(base, run_id, state.settings)
    try:
        with session_scope(state.engine, readonly=True) as session:
            outcome = stored_outcome(
                session=session, run_id=run_id, config=state.config, links=links
            )
    except ServiceError as exc:  # the store went away meanwhile; GitHub may redeliver
        log.warning("webhook %s of run %d not posted: %s", action.outcome, run_id, exc)
        return
    posted, reason = post_outcome(
        state.github,
        outcome,
        outcome.markdown,
        repo=action.repo,
        pr=action.pr,
        sha=sha,
        details_url=run_url(base, run_id),
    )
    if not posted:
        log.warning("webhook %s of run %d not posted: %s", action.outcome, run_id, reason)


@router.post(
    "/github/webhook",
    status_code=202,
    response_model=WebhookPublic,
    responses={code: {"model": ErrorPublic} for code in (401, 413, 422)},
)
async def github_webhook(
    request: Request,
    state: StateDep,
    background: BackgroundTasks,
    x_github_event: Annotated[str, Header(max_length=64)],
    x_github_delivery: Annotated[str | None, Header()] = None,
    x_hub_signature_256: Annotated[str | None, Header(max_length=100)] = None,
) -> WebhookPublic:
    """Receive a GitHub delivery signed with ``X-Hub-Signature-256`` (HMAC-SHA256).

    Unsigned, wrongly signed, stale, future-dated and replayed deliveries (the same body under
    any delivery id) are refused with 401. Verdicts are posted after the answer.
    """
    body = await request.body()
    secret = state.settings.webhook_secret
    verify_signature(secret.get_secret_value() if secret else None, body, x_hub_signature_256)
    payload = _payload(body)
    if x_github_event == "ping":
        return WebhookPublic(outcome="pong", detail="webhook configured")
    delivery_id = check_delivery_id(x_github_delivery)
    unhandled = ignored_event(x_github_event)
    if unhandled is not None:  # nothing is done, so its age and replays do not matter
        state.metrics.webhooks.labels(x_github_event, unhandled.outcome).inc()
        return WebhookPublic(outcome=unhandled.outcome, detail=unhandled.detail)
    max_age = timedelta(seconds=state.settings.webhook_max_age_s)
    check_fresh(x_github_event, payload, datetime.now(UTC), max_age)
    delivery = Delivery(x_github_event, delivery_id, body_hash(body), payload)
    action = await run_in_threadpool(_act, state, delivery)
    answer = _answer(state, action)
    if answer.queued:
        background.add_task(_post, state, action, base_url(request, state.settings))
    return answer
