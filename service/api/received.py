"""An upload as received: its key first, then, unless it was answered before, its run.

The key of an upload is a hash of its bytes and query, known before the run is parsed, so
an upload claimed before (a retry after a 202 or a lost answer, on any replica) is answered
from its claim (``service.store.claims``), or waits for it, without being parsed and
validated again: its bytes are the bytes that were valid when they were claimed. The
claim's repository decides who may read that answer, as the run's decides who may upload it.
"""

from __future__ import annotations

from time import monotonic

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from service.api import uploads
from service.api.deps import ServiceState
from service.api.inflight import Answer, stored_answer, upload_key
from service.errors import BadInput, ServiceError
from service.pipeline.storable import StoreLimits
from service.store import claims
from service.store.claims import Held
from service.store.tokens import Grant, Permission


class UnsupportedMediaType(ServiceError):
    """The upload is neither JSON nor a multipart form."""

    status = 415


def route_key(request: Request, bytes_key: str) -> str:
    """The key of the upload: its bytes' key, the request's query and the service's config."""
    state: ServiceState = request.app.state.roofguard
    return claim_key(bytes_key, request.url.query, state.config_key)


def claim_key(bytes_key: str, query: str, config_key: str) -> str:
    """The claim of an upload judged under the configuration ``config_key`` (its digest).

    The same bytes uploaded after the service restarted with another configuration (a
    threshold, ``fail_on``) are judged again, with a note, as ``roofguard check`` judges
    them: the answer stored under the old one was that configuration's verdict.
    """
    return upload_key([bytes_key.encode(), query.encode(), config_key.encode()])


async def receive(
    request: Request, grant: Grant, state: ServiceState, *, reuse: bool
) -> uploads.Upload | Answer:
    """The upload's run, or the answer given before to the same upload (when ``reuse``).

    Raises:
        UnsupportedMediaType: Neither JSON nor a multipart form.
        BadInput, Forbidden: As parsing and the grant decide.
        StillRunning: The same upload's check goes on past the answer's deadline.
    """
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "multipart/form-data":
        async with request.form(max_files=uploads.MAX_FILES, max_fields=32) as form:
            parsed = uploads.parse_form(form)
            grant.require(repo=parsed.form.repo, permission=Permission.WRITE)
            key = upload_key(await run_in_threadpool(uploads.form_parts, parsed))
            if reuse and (before := await _answered(request, grant, state, key)):
                return before
            # Reading is bounded like judging: a few huge uploads at once must not each hold
            # a parse's memory; the others wait their turn on the event loop.
            async with state.check_slots:
                return await run_in_threadpool(uploads.collect_form, parsed, state, key)
    if content_type == "application/json":
        body = await request.body()
        key = upload_key([body])
        if reuse and (before := await _answered(request, grant, state, key)):
            return before
        limits = StoreLimits.of(state.settings)
        record = await run_in_threadpool(uploads.parse_record, body, limits)
        if not record.repo:
            raise BadInput("request body: repo: the run must name its repository (OWNER/NAME)")
        grant.require(repo=record.repo, permission=Permission.WRITE)
        return uploads.Upload(record, key=key)
    raise UnsupportedMediaType("send application/json (a RunRecord) or multipart/form-data")


async def _answered(request: Request, grant: Grant, state: ServiceState, key: str) -> Answer | None:
    """The answer to an upload claimed before: stored, or awaited while it is judged.

    None when there is no claim to go by (the upload is parsed and claimed then).

    Raises:
        StillRunning: Its check goes on past ``ROOFGUARD_UPLOAD_ANSWER_S``.
    """
    full = route_key(request, key)
    found = await run_in_threadpool(claims.peek, state.engine, full)
    if found is None or found.lapsed:
        return None
    grant.require(repo=found.repo, permission=Permission.WRITE)
    if found.held is Held.ANSWERED:
        return stored_answer(found)
    return await state.in_flight.awaited(full, monotonic() + state.settings.upload_answer_s)
