"""A kernel that kept up with a new card and fell on its third night there: the new card's
regression, not the swap's (report-only probe of the digest: the device change listed it as
not keeping up, judged on the median of all its nights there, the fall's included)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from factories import make_kernel, make_run

from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.cli import run
from service.store.db import open_store, session_scope
from service.store.ingest import ingest_run

A100, H100 = "A100-SXM4-80GB", "H100-SXM5"
FIRST = datetime(2026, 11, 1, 2, tzinfo=UTC)
SWAP, FALL = datetime(2026, 11, 25, tzinfo=UTC), datetime(2026, 11, 27, tzinfo=UTC)
DRAM = 1e9  # bytes: memory-bound on both cards


def _time(card: str, percent: float) -> float:
    roof = builtin_catalog().lookup(card).roof()
    return DRAM / roof.bandwidth_byte_per_s["dram"] / (percent / 100)


def _night(index: int):
    when = FIRST + timedelta(days=index)
    card = A100 if when < SWAP else H100
    wobble = 1 + 0.002 * ((index * 7) % 5 - 2)
    falls = 64.0 if when >= FALL else 80.0
    kernels = [
        make_kernel(name, flops={"fp32": 1e6}, dram_bytes=DRAM, time_s=_time(card, p) * wobble)
        for name, p in (("steady", 80.0), ("fell_later", falls if card == H100 else 80.0))
    ]
    return make_run(kernels=kernels, commit=f"c{index:03d}", timestamp=when, device=card)


@pytest.fixture(scope="module")
def store_url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('swap') / 'history.db'}"
    engine = open_store(url)
    with session_scope(engine) as session:
        for index in range(31):  # 1 November to 1 December; the H100 from 25 November
            record = _night(index)
            roof = builtin_catalog().lookup(str(record.device.name)).roof()
            ingest_run(session=session, run=record, placements=place_run(record, roof), roof=roof)
    engine.dispose()
    return url


def test_a_fall_after_the_first_nights_on_the_new_card_is_not_the_swaps(store_url, capsys):
    argv = ["digest", "--db", store_url, "--from", "2026-11-23", "--to", "2026-11-29", "--json"]
    assert run(argv) == 0
    data = json.loads(capsys.readouterr().out)
    [change] = data["device_changes"]
    assert (change["from_device"], change["to_device"]) == (A100, H100)
    assert change["not_kept_up"] == [] and change["kept_up"] == 2
    [fall] = data["regressions"]
    assert (fall["kernel"], fall["device"]) == ("fell_later", H100)
    assert fall["since"].startswith("2026-11-27")
