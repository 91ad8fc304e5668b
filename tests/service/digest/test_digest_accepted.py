"""A regression a maintainer accepted (``/roofguard accept``) is listed as accepted, not as one.

The gate's baseline of a kernel starts after its latest acceptance, so the nights after an
accepted change pass; the digest listed the same change as a new regression, a time regression
and unresolved. Here the store holds ``digest_history``'s nights and these acceptances.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from digest_history import (
    FIRST_NIGHT,
    PERIOD_END,
    PERIOD_START,
    history_runs,
    make_digest_history,
    night_of,
)

from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.cli import run
from service.digest.acceptance import Acceptance
from service.digest.build import build_digest
from service.digest.model import DigestOptions
from service.store.baselines import EDIT_REASON, EDITS_RECORDED_BY, accept_baseline
from service.store.db import open_store, session_scope
from service.store.ingest import ingest_run

REPO = "acme/kernels"
PERIOD = ["--from", PERIOD_START.isoformat(), "--to", PERIOD_END.isoformat()]
H100, A100 = "H100-SXM5", "A100-SXM4-80GB"
WHY = "new tiling: GEMV | 20% slower, GEMM faster"


def _night(night: float) -> datetime:
    return FIRST_NIGHT + timedelta(days=night)


#: (kernel, card or None, when, who, why). gemv_bf16 drops on H100 on night 35 (a new
#: regression) and is accepted on a pull request before that night's merge; softmax_fwd fell on
#: H100 on night 10 (unresolved) and is accepted this week on every card. None of the others
#: covers fused_mlp's fall on A100 on night 34.
ACCEPTED = (
    ("gemv_bf16", H100, _night(34.5), "octocat", WHY),
    ("softmax_fwd", None, _night(36.2), "hubot", "known, tracked in #12"),
    ("fused_mlp", A100, _night(20), "octocat", "an older change"),  # its old level went on
    ("fused_mlp", H100, _night(34.5), "octocat", "another card"),
    ("fused_mlp", A100, _night(34.5), EDITS_RECORDED_BY, f"{EDIT_REASON} (flops)"),
    ("fused_mlp", A100, PERIOD_END + timedelta(days=1), "octocat", "after the period"),
)


@pytest.fixture(scope="module")
def store_url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('accepted') / 'history.db'}"
    engine = open_store(url)
    try:
        with session_scope(engine) as session:
            for record in history_runs(make_digest_history(), repo=REPO):
                roof = builtin_catalog().lookup(record.device.name).roof()
                placed = place_run(record, roof)
                ingest_run(session=session, run=record, placements=placed, roof=roof)
            for kernel, device, when, who, why in ACCEPTED:
                accept_baseline(
                    session=session,
                    repo=REPO,
                    kernel_key=kernel,
                    device=device,
                    accepted_by=who,
                    reason=why,
                    accepted_at=when,
                )
    finally:
        engine.dispose()
    return url


def _pairs(entries) -> set[tuple[str, str]]:
    return {(e["kernel"], e["device"]) for e in entries}


def test_an_accepted_regression_is_listed_as_accepted_and_nowhere_else(store_url, capsys):
    assert run(["digest", *PERIOD, "--repo", REPO, "--json", "--db", store_url]) == 0
    data = json.loads(capsys.readouterr().out)
    gemv, softmax = ("gemv_bf16", H100), ("softmax_fwd", H100)
    for section in ("regressions", "time_regressions", "unresolved", "unresolved_time"):
        assert not {gemv, softmax} & _pairs(data[section]), section
    assert ("fused_mlp", A100) in _pairs(data["regressions"]), "no acceptance covers it"
    assert ("fused_mlp", A100) in _pairs(data["unresolved"])
    assert [(a["kernel"], a["device"]) for a in data["accepted"]] == [gemv, softmax]
    new, old = data["accepted"]
    assert (new["accepted_by"], new["reason"], new["every_device"]) == ("octocat", WHY, False)
    assert new["relative_change"] == pytest.approx(-0.2, abs=0.01)
    assert new["after_s"] / new["before_s"] == pytest.approx(1.25, abs=0.01)
    assert night_of(datetime.fromisoformat(new["since"])) == 35 and new["to_commit"].startswith(
        "035"
    )
    assert (
        old["accepted_by"],
        old["every_device"],
        night_of(datetime.fromisoformat(old["since"])),
    ) == (
        "hubot",
        True,
        10,
    )
    assert data["headline"].startswith("1 time regression, 1 new regression")
    assert data["headline"].endswith("1 unresolved regression, 2 accepted changes")
    h100 = next(d for d in data["devices"] if d["device"] == H100)
    assert (h100["regressions"], h100["unresolved"]) == (0, 0)


def test_the_markdown_and_html_list_who_accepted_it_when_and_why(store_url, tmp_path, capsys):
    md, html = tmp_path / "digest.md", tmp_path / "digest.html"
    args = ["digest", *PERIOD, "--repo", REPO, "--db", store_url]
    assert run([*args, "--output", str(md), "--html", str(html)]) == 0
    text = md.read_text()
    accepted = text.split("## Accepted by a maintainer")[1].split("## ")[0]
    assert "| `gemv_bf16` | `H100-SXM5` | -19.9 % (84.8 % → 68.0 %) | 1.00 → 1.25 ms (1.25×)" in (
        accepted
    )
    assert "| octocat | 2026-11-22 | this card | new tiling\\: GEMV \\| 20\\% slower" in accepted
    assert "| hubot | 2026-11-24 | every card | known\\, tracked in \\#\u206012 |" in accepted
    assert "gemv_bf16" not in text.split("## New regressions")[1].split("## Improvements")[0]
    page = html.read_text()
    assert '<table id="accepted">' in page and "<td>octocat</td>" in page
    assert "<td>known, tracked in #12</td>" in page


def test_a_digest_of_the_frame_agrees_with_the_store(store_url, capsys):
    """``build_digest`` with the acceptances as options, as ``roofguard digest`` builds it."""
    options = DigestOptions(
        accepted=tuple(
            Acceptance(kernel=k, device=d, accepted_at=t, accepted_by=who, reason=why)
            for k, d, t, who, why in ACCEPTED
            if who != EDITS_RECORDED_BY
        )
    )
    digest = build_digest(
        make_digest_history(), start=PERIOD_START, end=PERIOD_END, options=options
    )
    assert [(a.kernel, a.device) for a in digest.accepted] == [
        ("gemv_bf16", H100),
        ("softmax_fwd", H100),
    ]
    assert run(["digest", *PERIOD, "--repo", REPO, "--json", "--db", store_url]) == 0
    stored = json.loads(capsys.readouterr().out)
    for section in ("regressions", "time_regressions", "unresolved", "accepted"):
        assert _pairs(stored[section]) == {(e.kernel, e.device) for e in getattr(digest, section)}


def test_an_earlier_week_reads_as_it_did_before_the_acceptance(store_url, capsys):
    """The week before: gemv_bf16 had not dropped, softmax_fwd was unresolved, not accepted."""
    week = ["--from", (PERIOD_START - timedelta(days=7)).isoformat()]
    week += ["--to", (PERIOD_END - timedelta(days=7)).isoformat()]
    assert run(["digest", *week, "--repo", REPO, "--json", "--db", store_url]) == 0
    data = json.loads(capsys.readouterr().out)
    assert ("softmax_fwd", H100) in _pairs(data["unresolved"])
    assert data["accepted"] == [], "every digest has the key: one shape for a consumer"
