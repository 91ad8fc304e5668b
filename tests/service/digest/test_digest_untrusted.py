"""The digest says how many nightly runs it left out because their runner failed its preflight.

An A100 and an H100 run every night; the H100's runner failed its health preflight on nights
20-22 (stored untrusted, kernels at half speed). The digest reads none of those nights (as a
check's baseline does), and said nothing of it: a reader saw 3 H100 nights of 6 and no reason.
Now the markdown, the HTML and the JSON (``untrusted_runs``) count them per device, in the
period only; a period without one says nothing, byte for byte as before.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from both_backends import both_backends_engine as both_backends_engine
from device_fleet import FIRST, REPO, datasheet, nights, store
from test_untrusted_cards import A100, H100, untrusted

from rules.frames import empty_history
from service.api.routes.pages import _digest_page
from service.cli import run
from service.digest.build import build_digest
from service.digest.untrusted import UntrustedRuns
from service.render.digest_render import render_digest_html, render_digest_markdown
from service.store.db import session_scope
from service.store.history import nightly_history

#: The period: the H100's failed nights (20-22) and the trusted ones after them (23-25).
PERIOD = (FIRST + timedelta(days=19, hours=12), FIRST + timedelta(days=26))
LINE = (
    "3 nightly runs on `H100-SXM5` left out: their runner failed its health preflight "
    "(`roofguard calibrate --check`)."
)


@pytest.fixture
def fleet(engine: sa.Engine) -> str:
    store(engine, nights(A100, 26), datasheet(A100))
    store(engine, nights(H100, 20), datasheet(H100))
    untrusted(engine, H100, 3, 20)
    store(engine, nights(H100, 3, start=23), datasheet(H100))
    return engine.url.render_as_string(hide_password=False)


def _digest(url: str, period: tuple[datetime, datetime], *flags: str) -> int:
    span = ["--from", period[0].isoformat(), "--to", period[1].isoformat()]
    return run(["digest", "--repo", REPO, "--db", url, *span, *flags])


def test_the_digest_counts_the_runs_it_left_out(capsys, fleet, tmp_path: Path) -> None:
    assert _digest(fleet, PERIOD, "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["untrusted_runs"] == [{"device": H100, "runs": 3}]
    assert {d["device"]: d["nights"] for d in data["devices"]} == {A100: 6, H100: 3}
    markdown, html = tmp_path / "digest.md", tmp_path / "digest.html"
    assert _digest(fleet, PERIOD, "--output", str(markdown), "--html", str(html)) == 0
    assert LINE in markdown.read_text()
    page = html.read_text()
    assert "3 nightly runs on <code>H100-SXM5</code> left out: their runner failed" in page


def test_the_digest_page_counts_them_too(engine, fleet) -> None:
    """The ``/digest`` page's history (``nightly_history``, whole rows) and the page itself."""
    with session_scope(engine, readonly=True) as session:
        start = PERIOD[0] - timedelta(days=90)
        history = nightly_history(session=session, repo=REPO, start=start, end=PERIOD[1])
        page = _digest_page(session, REPO, PERIOD[1])  # its 7 days: nights 19-25
    digest = build_digest(history, start=PERIOD[0], end=PERIOD[1], repo=REPO)
    assert [(e.device, e.runs) for e in digest.untrusted_runs] == [(H100, 3)]
    assert "3 nightly runs on <code>H100-SXM5</code> left out" in page


@pytest.mark.parametrize(
    "period",
    [
        (FIRST + timedelta(days=12, hours=12), FIRST + timedelta(days=19, hours=12)),  # before
        (FIRST + timedelta(days=22, hours=12), FIRST + timedelta(days=26)),  # in the lookback
    ],
    ids=["before", "after"],
)
def test_a_period_without_one_says_nothing(capsys, fleet, tmp_path: Path, period) -> None:
    assert _digest(fleet, period, "--json") == 0
    assert json.loads(capsys.readouterr().out)["untrusted_runs"] == []
    markdown = tmp_path / "digest.md"
    assert _digest(fleet, period, "--output", str(markdown)) == 0
    assert "left out" not in markdown.read_text()


def test_the_line_names_each_device_escaped() -> None:
    empty = build_digest(empty_history(), start=PERIOD[0], end=PERIOD[1], repo=REPO)
    left = [UntrustedRuns(device=H100, runs=3), UntrustedRuns(device="<b>A100</b>", runs=1)]
    two = empty.model_copy(update={"untrusted_runs": left})
    assert (
        "4 nightly runs (3 on `H100-SXM5`, 1 on `<b>A100</b>`) left out: their runners failed "
        "their health preflight (`roofguard calibrate --check`)."
    ) in render_digest_markdown(two)
    assert "1 on <code>&lt;b&gt;A100&lt;/b&gt;</code>) left out" in render_digest_html(two)
    one = empty.model_copy(update={"untrusted_runs": [UntrustedRuns(device=H100, runs=1)]})
    line = "1 nightly run on `H100-SXM5` left out: its runner failed its health preflight"
    assert line in render_digest_markdown(one)
