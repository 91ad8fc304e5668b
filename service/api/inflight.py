"""Uploads whose check outlives the answer: 202 now, the same check's verdict on a retry.

Under load a check can take longer than a client waits; the client then uploads again, and
each attempt judged the run anew. Here an upload's check runs as a task keyed by the
upload's bytes (its files, fields and query). The request waits for it up to
``ROOFGUARD_UPLOAD_ANSWER_S`` and otherwise answers 202 with ``Retry-After``; the check goes
on. Uploading the same bytes again, which ``roofguard upload`` does after ``Retry-After``,
waits on that same task instead of starting another, and gets its verdict once it is done.
Finished checks are kept a while (the newest ``KEPT`` of them), so a retry that arrives
after the check finished is answered at once; the run is stored once either way (ingest is
idempotent on content).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")

#: Finished checks kept for the retries of their uploads.
KEPT = 64
#: Seconds a 202 asks the client to wait before it uploads again.
RETRY_AFTER_S = 5


class StillRunning(Exception):
    """The check did not finish within the answer's deadline; it goes on."""


def upload_key(parts: Iterable[bytes]) -> str:
    """The key of an upload: sha256 over its parts (fields, query, file bytes), each framed."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


@dataclass
class InFlight:
    """Check tasks by upload key: running, or finished and kept for retries."""

    tasks: OrderedDict[str, asyncio.Task[object]] = field(default_factory=OrderedDict)

    async def result(
        self, key: str, start: Callable[[], Awaitable[T]], wait_s: float
    ) -> tuple[T, bool]:
        """The outcome of the check of upload ``key``, and whether this call started it.

        ``start`` starts the check unless one is running or kept for ``key``.

        Raises:
            StillRunning: It did not finish within ``wait_s`` seconds (it goes on).
        """
        task = self.tasks.get(key)
        started = task is None or (task.done() and task.exception() is not None)
        if task is None or started:
            task = asyncio.ensure_future(start())
            # A failure nobody waits for any more is still retrieved (no warning at exit).
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            self.tasks[key] = task
            self._forget_old()
        self.tasks.move_to_end(key)
        try:
            result = await asyncio.wait_for(asyncio.shield(task), timeout=wait_s)
        except TimeoutError:
            raise StillRunning from None
        return result, started  # type: ignore[return-value]

    def _forget_old(self) -> None:
        done = [k for k, t in self.tasks.items() if t.done()]
        for key in done[: max(0, len(done) - KEPT)]:
            del self.tasks[key]
