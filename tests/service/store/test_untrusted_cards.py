"""A runner that failed its health preflight decides no card, on SQLite and on PostgreSQL.

30 trusted nights on an A100, 8 on an H100, then 3 nights of a degraded A100 runner (its
preflight failed, its kernels at half speed). The check's cross-device baseline leaves those
nights out (``rules.trusted_rows``); ``roofguard compare`` and the digest's device changes
read the cards from them too: compare took the H100 for its reference (the A100 "ran last"),
counted 33 A100 runs and read gemm's A100 level at 40% of roof, not 80%; a card whose runs
all came from failed runners is named so.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa
from both_backends import both_backends_engine as both_backends_engine
from device_fleet import FIRST, KERNELS, REPO, Work, datasheet, nights, store

from rules import place_run
from service.cli import run
from service.digest.build import build_digest
from service.digest.rowread import compact_card_rows
from service.digest.storeread import compact_history
from service.store.db import session_scope
from service.store.devices import device_runs, untrusted_runs
from service.store.history import nightly_history
from service.store.ingest import ingest_run

A100, H100 = "A100-SXM4-80GB", "H100-SXM5"
#: The degraded runner's kernels: half the percent of roof of a healthy one.
SLOW = {
    k: Work(w.flops, w.nbytes, {c: p / 2 for c, p in w.percent.items()}) for k, w in KERNELS.items()
}


def untrusted(engine: sa.Engine, card: str, count: int, start: int) -> None:
    """``count`` nights of a runner whose health preflight failed, on ``card``."""
    with session_scope(engine) as session:
        for night in nights(card, count, start=start, kernels=SLOW):
            placed = place_run(night, datasheet(card))
            roof = datasheet(card)
            ingest_run(session=session, run=night, placements=placed, roof=roof, trusted=False)


@pytest.fixture
def fleet(engine: sa.Engine) -> str:
    store(engine, nights(A100, 30), datasheet(A100))
    store(engine, nights(H100, 8, start=30), datasheet(H100))
    untrusted(engine, A100, 3, 38)
    return engine.url.render_as_string(hide_password=False)


def test_the_cards_are_read_from_trusted_runs(engine, fleet) -> None:
    with session_scope(engine, readonly=True) as session:
        cards = device_runs(session=session, repo=REPO, base_branch="main")
        every = device_runs(session=session, repo=REPO, base_branch="main", trusted_only=False)
    assert [(c.device, c.runs) for c in cards] == [(H100, 8), (A100, 30)]
    assert [(c.device, c.runs) for c in every] == [(A100, 33), (H100, 8)]


def test_compare_leaves_the_degraded_runner_out(capsys, fleet) -> None:
    assert run(["compare", "--repo", REPO, "--db", fleet, "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    by = {(r["kernel"], r["device"]): r for r in found}
    assert found[0]["device"] == A100  # the reference: the card that ran first, as before
    assert by["gemm", A100]["runs"] == 30
    assert by["gemm", A100]["percent_of_roof"] == pytest.approx(80.0, rel=3e-3)
    assert by["gemv", H100]["reference"] == A100
    assert by["gemv", H100]["keeping"] == "kept-up"


def test_compare_of_untrusted_runs_only_says_so(capsys, engine) -> None:
    untrusted(engine, A100, 3, 0)
    url = engine.url.render_as_string(hide_password=False)
    assert run(["compare", "--repo", REPO, "--db", url]) != 0
    err = capsys.readouterr().err
    assert "none of acme/serving's 3 base-branch runs" in err and "health preflight" in err


def test_compare_of_a_card_of_untrusted_runs_only_says_so(capsys, engine) -> None:
    """Its runs all from a runner whose preflight failed, the card read "no base-branch
    history", and the user looked for a nightly job that never ran on it."""
    store(engine, nights(A100, 5), datasheet(A100))
    untrusted(engine, H100, 3, 5)
    url = engine.url.render_as_string(hide_password=False)
    assert run(["compare", "--repo", REPO, "--db", url, "--devices", f"A100,{H100}"]) == 2
    err = capsys.readouterr().err
    assert f"--devices: none of {H100}'s 3 base-branch runs in {REPO} came from" in err
    assert "health preflight" in err and "no base-branch history" not in err
    assert run(["compare", "--repo", REPO, "--db", url, "--devices", "A100"]) == 0


def test_the_digest_swap_is_not_hidden_by_an_untrusted_night(engine) -> None:
    """An untrusted H100 night on day 26 made the H100's first night older than the week:
    the runners' move to it on day 30 was listed as no device change at all."""
    store(engine, nights(A100, 26), datasheet(A100))
    untrusted(engine, H100, 1, 26)
    store(engine, nights(A100, 3, start=27), datasheet(A100))
    store(engine, nights(H100, 4, start=30), datasheet(H100))
    period = (FIRST + timedelta(days=28), FIRST + timedelta(days=35))
    with session_scope(engine, readonly=True) as session:
        history = compact_history(session, REPO, FIRST, period[1], with_ids=True)
        ids = [int(i) for i in history["run_id"].unique()]
        assert len(untrusted_runs(session=session, run_ids=ids)) == 1
        [(old, new)] = compact_card_rows(session, history, period)  # ``roofguard digest``
        full = nightly_history(session=session, repo=REPO, start=FIRST, end=period[1])
    assert set(old["device"]) == {A100} and set(new["device"]) == {H100}
    assert new["timestamp"].min() == FIRST + timedelta(days=30)
    [change] = build_digest(full, start=period[0], end=period[1], repo=REPO).device_changes
    assert (change.from_device, change.to_device, change.nights) == (A100, H100, 4)
