"""A runner that failed its health preflight gives the digest no night, as it gives a check none.

20 trusted A100 nights, then 3 of a degraded runner (its preflight failed, every kernel at half
speed), then 3 trusted nights back at the usual speed, on SQLite and on PostgreSQL. The checks
leave those 3 nights out (``rules.trusted_rows``); ``roofguard digest`` (the compact history)
and the ``/digest`` page (``nightly_history``) read them as data: both kernels listed as -50%
regressions, recovered 3 nights later, and as time regressions; the HTML's charts drew them.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa
from both_backends import both_backends_engine as both_backends_engine
from device_fleet import FIRST, REPO, datasheet, nights, store
from test_untrusted_cards import A100, untrusted

from service.cli import run
from service.digest.build import build_digest
from service.digest.chartread import chart_history
from service.digest.storeread import compact_history
from service.store.db import session_scope
from service.store.history import nightly_history

#: The period: the degraded nights (20-22) and the trusted ones after them (23-25).
PERIOD = (FIRST + timedelta(days=19, hours=12), FIRST + timedelta(days=26))


@pytest.fixture
def degraded(engine: sa.Engine) -> str:
    store(engine, nights(A100, 20), datasheet(A100))
    untrusted(engine, A100, 3, 20)
    store(engine, nights(A100, 3, start=23), datasheet(A100))
    return engine.url.render_as_string(hide_password=False)


def _moved(digest: dict[str, object]) -> list[object]:
    """Every section a night enters as data: levels, their changes, trends in time."""
    keys = ("regressions", "improvements", "recoveries", "unresolved", "regime_flips")
    more = ("binding_flips", "time_regressions", "unresolved_time", "vanished", "shared_moves")
    return [entry for key in (*keys, *more) for entry in digest[key]]  # type: ignore[attr-defined]


def test_the_digest_command_reads_no_untrusted_night(capsys, degraded, tmp_path) -> None:
    span = ["--from", PERIOD[0].isoformat(), "--to", PERIOD[1].isoformat()]
    html = tmp_path / "digest.html"
    assert (
        run(["digest", "--repo", REPO, "--db", degraded, "--json", "--html", str(html), *span]) == 0
    )
    digest = json.loads(capsys.readouterr().out)
    assert _moved(digest) == []
    assert digest["measurements"] == 2 * 23  # the trusted nights only
    assert [d["nights"] for d in digest["devices"]] == [3]
    assert "n0021" not in html.read_text()


def test_the_digest_page_reads_no_untrusted_night(engine, degraded) -> None:
    with session_scope(engine, readonly=True) as session:
        start = PERIOD[0] - timedelta(days=90)
        history = nightly_history(session=session, repo=REPO, start=start, end=PERIOD[1])
    digest = build_digest(history, start=PERIOD[0], end=PERIOD[1], repo=REPO)
    assert _moved(json.loads(digest.model_dump_json())) == []
    assert digest.measurements == 2 * 23
    assert [d.nights for d in digest.devices] == [3]


def test_the_charts_draw_no_untrusted_night(engine, degraded) -> None:
    """A week ending on the degraded nights: the roofline drew the last of them."""
    end = FIRST + timedelta(days=22, hours=12)
    with session_scope(engine, readonly=True) as session:
        history = compact_history(session, REPO, end - timedelta(days=90), end, with_ids=True)
        digest = build_digest(history, start=end - timedelta(days=7), end=end, repo=REPO)
        rows = chart_history(session, history, digest)
    assert set(rows["commit"]) == {"n0019"}  # the card's last trusted night
