"""A serve process stopped by force mid-upload leaves the upload's claim to its check.

A second Ctrl-C cancels the task that awaits the check, not the thread that runs it: the
check went on and committed its run, but the claim had been given up at the cancellation, so
the run was stored with no claim answered, and another replica could judge the same upload at
the same time. The claim now stays held until the check answers it or its lease lapses.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from starlette.concurrency import run_in_threadpool

from service.api.inflight import InFlight
from service.store import claims
from service.store.claims import Held
from service.store.db import make_engine, migrate


@pytest.fixture
def engine(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'history.db'}")
    migrate(engine)
    yield engine
    engine.dispose()


def test_a_cancelled_upload_keeps_its_claim_while_its_check_runs(engine) -> None:
    release, started = threading.Event(), threading.Event()

    def check() -> None:  # the check's thread: cancelling the await does not stop it
        started.set()
        release.wait(30)

    async def judge(record):  # the upload's judge, as the route runs it
        await run_in_threadpool(check)
        raise AssertionError("cancelled before the check ended")

    async def upload() -> None:
        inflight = InFlight(engine)
        task = asyncio.ensure_future(inflight.result("k" * 64, "acme/kernels", judge, 30))
        await run_in_threadpool(started.wait, 30)
        inflight.running["k" * 64].cancel()  # what the event loop's forced shutdown does
        with pytest.raises(asyncio.CancelledError):
            await task
        held = claims.peek(engine, "k" * 64)
        release.set()
        assert held is not None and not held.lapsed, "the claim was given up mid-check"
        assert held.held is not Held.ANSWERED

    asyncio.run(upload())
