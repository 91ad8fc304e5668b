"""Worker processes that a large digest's stages share, or none (everything runs here).

At 29 M measurements, half of the digest's wall time went to stages that kept one core busy
while the other waited: the new cards' judgement, the time scan after the percent-of-roof scan,
and the HTML's 45 charts. Each such stage hands its independent pieces to ``Workers.submit`` and
asks for the results only when it needs them, so they run beside this process's own work. The
processes are spawned once, on the first call (each imports the scan and pandas, about a
second), and serve every stage after it. With one worker, or when processes cannot start or
break (a sandbox, a frozen app, a worker killed for memory), each piece runs in this process,
when its result is asked for, so the results are the same either way.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import Any, TypeVar

from service.store.memory import give_back_freed

_log = logging.getLogger(__name__)
T = TypeVar("T")
#: A piece's result, computed when asked for (in a worker beforehand, or here then).
Result = Callable[[], T]


def usable_cores() -> int:
    """The cores this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _trimmed(call: Callable[..., T], *args: Any) -> T:
    """``call(*args)`` in a worker, its freed pages returned after (workers live for a while)."""
    try:
        return call(*args)
    finally:
        give_back_freed()


class Workers:
    """Up to ``count`` spawned processes for the pieces of a stage; with ``count`` 1, none.

    Use as a context manager: the processes are shut down on exit.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self._pool: ProcessPoolExecutor | None = None
        self._failed = count < 2

    @property
    def parallel(self) -> bool:
        """Whether pieces go to other processes (False: each runs here, when asked for)."""
        return not self._failed

    def submit(self, call: Callable[..., T], *args: Any) -> Result[T]:
        """Start ``call(*args)`` in a worker; the returned callable gives its result.

        ``call`` and ``args`` must pickle (a module-level function and data). Without
        workers, the call is made when its result is asked for.
        """
        if not self._failed:
            try:
                future = self._executor().submit(_trimmed, call, *args)
                return lambda: self._result(future, call, args)
            except (BrokenProcessPool, OSError) as exc:
                self._fail(exc)
        return lambda: call(*args)

    def run_all(self, calls: Iterable[tuple[Callable[..., T], tuple[Any, ...]]]) -> list[T]:
        """Every ``(call, args)``'s result, in order: all started before any is awaited."""
        pending = [self.submit(call, *args) for call, args in calls]
        return [result() for result in pending]

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            spawn = multiprocessing.get_context("spawn")  # nothing of this process is shared
            self._pool = ProcessPoolExecutor(self.count, mp_context=spawn)
        return self._pool

    def _result(self, future: Future[T], call: Callable[..., T], args: tuple[Any, ...]) -> T:
        try:
            return future.result()
        except BrokenProcessPool as exc:
            self._fail(exc)
            return call(*args)

    def _fail(self, exc: BaseException) -> None:
        if not self._failed:
            _log.warning("digest: workers failed (%s); running in this process", exc)
        self._failed = True

    def __enter__(self) -> Workers:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
