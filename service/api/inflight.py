"""Uploads whose check outlives the answer: 202 now, the same check's verdict on a retry.

Under load a check can take longer than a client waits; the client then uploads again. An
upload's check is claimed in the store by the upload's key (a sha256 of its files, fields
and query; ``service.store.claims``), so whichever replica receives the same upload again
waits for that one check instead of starting another, and answers with the verdict stored
with the claim. A request waits up to ``ROOFGUARD_UPLOAD_ANSWER_S`` and otherwise answers
202 with ``Retry-After``; the check goes on in the replica that claimed it, which renews its
lease meanwhile. If that replica dies, the lease lapses and the next upload of the same
bytes takes the claim over. The run is stored once either way (ingest is idempotent on
content); the claim makes the check and its answer once too.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import socket
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from time import monotonic

from sqlalchemy.engine import Engine
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from service.errors import StoreUnavailable
from service.pipeline.check import CheckOutcome
from service.store import claims
from service.store.claims import Held

log = logging.getLogger("roofguard.api")

#: Seconds a 202 asks the client to wait before it uploads again.
RETRY_AFTER_S = 5
#: How long a claim holds without renewal: past it, another replica takes the check over.
LEASE = timedelta(seconds=60)
#: The owner renews its lease this often (well inside ``LEASE``, even on a busy event loop).
RENEW_S = 10.0
#: Waiting for another replica's answer: first and longest pause between two looks.
_POLL_S = (0.05, 2.0)

#: Called in the check's transaction with its outcome (stores the claim's answer).
Record = Callable[[Session, CheckOutcome], None]
#: Runs an upload's check, calling the ``Record`` it is given before it commits.
Judge = Callable[[Record], Awaitable[CheckOutcome]]


class StillRunning(Exception):
    """The check did not finish within the answer's deadline; it goes on."""


def upload_key(parts: Iterable[bytes]) -> str:
    """The key of an upload: sha256 over its parts (fields, query, file bytes), each framed."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


#: ``answer_json``'s start: the verdict's first field is its conclusion.
_CONCLUSION = re.compile(r'\{"verdict":\{"conclusion":"([a-z_]+)"')


def answer_json(outcome: CheckOutcome) -> str:
    """The stored answer of a check: its verdict and markdown, one JSON object."""
    verdict = outcome.verdict.model_dump_json()
    return f'{{"verdict":{verdict},"markdown":{json.dumps(outcome.markdown)}}}'


@dataclass(frozen=True)
class Answer:
    """The answer to an upload: its run, whether this upload stored it, verdict and markdown.

    ``answer_json`` is ``answer_json(outcome)``, as stored with the claim; ``outcome`` is
    the check's own outcome when this request's replica judged it just now.
    """

    run_id: int
    created: bool
    answer_json: str
    outcome: CheckOutcome | None = None

    @property
    def conclusion(self) -> str:
        """The verdict's conclusion, read off the stored answer's start (its first field)."""
        if self.outcome is not None:
            return self.outcome.verdict.conclusion.value
        found = _CONCLUSION.match(self.answer_json)
        return found[1] if found else str(json.loads(self.answer_json)["verdict"]["conclusion"])


def stored_answer(found: claims.ClaimState) -> Answer:
    """The answer stored with an answered claim (``created`` false: judged before)."""
    assert found.answer_json is not None and found.run_id is not None
    return Answer(found.run_id, False, found.answer_json)


def _replica_name() -> str:
    return f"{socket.gethostname()[:32]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


@dataclass
class InFlight:
    """This replica's side of the upload claims: it judges the uploads it claims.

    Attributes:
        engine: The shared store holding the claims.
        owner: This replica's name in the claims it holds.
        running: The checks this replica runs, by upload key: kept referenced until they
            end, and awaited in place by the uploads of the same bytes that reach this
            replica (a shortcut: the claim in the store decides who judges).
    """

    engine: Engine
    owner: str = field(default_factory=_replica_name)
    running: dict[str, asyncio.Task[Answer]] = field(default_factory=dict)

    async def result(self, key: str, repo: str, judge: Judge, wait_s: float) -> Answer:
        """The answer to upload ``key`` (of ``repo``): judged here if claimed here, else awaited.

        Raises:
            StillRunning: No answer within ``wait_s`` seconds (the check goes on).
        """
        deadline = monotonic() + wait_s
        while True:
            found = await run_in_threadpool(
                claims.take, self.engine, key, repo=repo, owner=self.owner, lease=LEASE
            )
            if found.held is Held.OWNED:
                return await self._wait(self._start(key, judge), deadline)
            if found.held is Held.ANSWERED:
                return stored_answer(found)
            if (answer := await self.awaited(key, deadline)) is not None:
                return answer
            # The claim went (its check failed) or lapsed: claim it again.

    async def awaited(self, key: str, deadline: float) -> Answer | None:
        """The answer to the pending upload ``key``; None once its claim is gone or lapsed.

        A check this replica runs is awaited where it runs; another replica's is looked for
        in the store, less often the longer it takes (a look is a query, and many uploads
        may be waiting at once).

        Raises:
            StillRunning: No answer by ``deadline`` (``time.monotonic``).
        """
        if (task := self.running.get(key)) is not None:
            try:  # the upload that started it was the one that stored the run
                return replace(await self._wait(task, deadline), created=False)
            except StillRunning:
                raise
            except Exception:  # its check failed and gave the claim up: judge it anew
                return None
        pause = _POLL_S[0]
        while True:
            found = await run_in_threadpool(claims.peek, self.engine, key)
            if found is None or found.lapsed:
                return None
            if found.held is Held.ANSWERED:
                return stored_answer(found)
            left = deadline - monotonic()
            if left <= 0:
                raise StillRunning
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, _POLL_S[1])

    def _start(self, key: str, judge: Judge) -> asyncio.Task[Answer]:
        task = asyncio.ensure_future(self._judge(key, judge))
        self.running[key] = task
        task.add_done_callback(lambda done: self._ended(key, done))
        return task

    def _ended(self, key: str, task: asyncio.Task[Answer]) -> None:
        if self.running.get(key) is task:
            del self.running[key]
        failed = None if task.cancelled() else task.exception()
        if failed is not None:  # retrieved here too: nobody may wait for it any more
            log.warning("upload check failed: %s: %s", type(failed).__name__, failed)

    @staticmethod
    async def _wait(task: asyncio.Task[Answer], deadline: float) -> Answer:
        try:
            return await asyncio.wait_for(
                asyncio.shield(task), timeout=max(0.0, deadline - monotonic())
            )
        except TimeoutError:
            raise StillRunning from None

    async def _judge(self, key: str, judge: Judge) -> Answer:
        """Judge the claimed upload, storing its answer in the check's transaction."""
        stored: list[str] = []

        def record(session: Session, outcome: CheckOutcome) -> None:
            stored.append(answer_json(outcome))
            claims.answer(session, key, run_id=outcome.run_id, answer_json=stored[-1])

        heartbeat = asyncio.ensure_future(self._renew(key))
        try:
            outcome = await judge(record)
        except asyncio.CancelledError:
            # A forced shutdown cancels the await, not the check's thread: it goes on and
            # answers the claim as it commits its run, or the lease lapses. Given up here,
            # the run was stored with no claim answered, and another replica could judge it.
            raise
        except BaseException:
            await run_in_threadpool(self._give_up, key)
            raise
        finally:
            heartbeat.cancel()
        return Answer(outcome.run_id, outcome.created, stored[-1], outcome)

    async def _renew(self, key: str) -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            try:
                await run_in_threadpool(
                    claims.renew, self.engine, key, owner=self.owner, lease=LEASE
                )
            except StoreUnavailable as exc:  # the next renewal may get through; the lease is long
                log.warning("upload claim %s: lease not renewed (%s)", key[:12], exc)

    def _give_up(self, key: str) -> None:
        try:
            claims.give_up(self.engine, key, owner=self.owner)
        except StoreUnavailable as exc:  # the lease lapses instead
            log.warning("upload claim %s: not given up (%s)", key[:12], exc)
