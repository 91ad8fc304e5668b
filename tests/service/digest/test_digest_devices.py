"""The weekly digest notices a device change instead of showing the new card as a fresh start."""

from __future__ import annotations

from datetime import timedelta

import pytest
from device_fleet import FIRST, REPO, datasheet, nights, store

from rules import device_levels
from service.digest.build import build_digest
from service.digest.model import DigestOptions
from service.render.digest_render import render_digest_html, render_digest_markdown
from service.store.db import open_store, session_scope
from service.store.history import nightly_history

A100, H100 = "A100-SXM4-80GB", "H100-SXM5"


@pytest.fixture
def history(tmp_path):
    """30 A100 nights, then the fleet moves: 4 H100 nights, the last week's."""
    engine = open_store(f"sqlite:///{tmp_path / 'history.db'}")
    try:
        store(engine, nights(A100, 30), datasheet(A100))
        store(engine, nights(H100, 4, start=30), datasheet(H100))
        with session_scope(engine, readonly=True) as session:
            yield nightly_history(
                session=session, repo=REPO, start=FIRST, end=FIRST + timedelta(days=40)
            )
    finally:
        engine.dispose()


def week(history, first_day: int, days: int = 7):
    start = FIRST + timedelta(days=first_day)
    return build_digest(history, start=start, end=start + timedelta(days=days), repo=REPO)


def test_a_runner_swap_in_the_week_is_a_device_change(history) -> None:
    digest = week(history, 28)
    [change] = digest.device_changes
    assert (change.from_device, change.to_device) == (A100, H100)
    assert (change.kernels, change.nights, change.kept_up, change.faster) == (2, 4, 1, 0)
    [gemm] = change.not_kept_up
    assert gemm.kernel == "gemm" and gemm.keeping == "not-kept-up"
    assert gemm.before == pytest.approx(80.0, rel=3e-3) and gemm.after == pytest.approx(
        50.0, rel=3e-3
    )
    assert gemm.expected_time_ratio == pytest.approx(312 / 989.4)
    assert (change.from_commit, change.to_commit) == ("n0029", "n0030")
    assert digest.headline.startswith("1 device change, ")


def test_the_digest_says_it_in_words(history) -> None:
    digest = week(history, 28)
    markdown = render_digest_markdown(digest)
    assert "## Device changes" in markdown
    assert "| `A100-SXM4-80GB` → `H100-SXM5` |" in markdown
    assert "1 kept up, 0 faster, 1 did not keep up" in markdown
    assert "| `gemm` | 80.0% → 50.0% |" in markdown
    html = render_digest_html(digest)
    assert '<table id="device-changes">' in html and "did not keep up" in html


def test_a_week_without_a_new_card_has_no_such_section(history) -> None:
    digest = week(history, 10)
    assert digest.device_changes == []
    assert "Device changes" not in render_digest_markdown(digest)
    assert not digest.headline.startswith("1 device change")


def test_the_runner_back_on_its_card_is_a_device_change_too(tmp_path) -> None:
    """30 A100 nights, 10 on the H100, then back on the A100: the digest listed the first
    move only, its "Per device" counting the A100's nights as if it never left."""
    engine = open_store(f"sqlite:///{tmp_path / 'history.db'}")
    try:
        store(engine, nights(A100, 30), datasheet(A100))
        store(engine, nights(H100, 10, start=30), datasheet(H100))
        store(engine, nights(A100, 4, start=40), datasheet(A100))
        with session_scope(engine, readonly=True) as session:
            history = nightly_history(
                session=session, repo=REPO, start=FIRST, end=FIRST + timedelta(days=50)
            )
    finally:
        engine.dispose()
    digest = week(history, 38)
    [back] = digest.device_changes
    assert (back.from_device, back.to_device, back.nights) == (H100, A100, 4)
    assert (back.from_commit, back.to_commit) == ("n0039", "n0040")
    assert [c.to_device for c in week(history, 28, days=14).device_changes] == [H100, A100]
    assert week(history, 20).device_changes == []  # a card that never left returns to none


@pytest.mark.parametrize("gate_window", [None, 5])
def test_the_command_reads_the_device_change_as_the_full_history_gives_it(
    tmp_path, capsys, gate_window
):
    """``roofguard digest`` builds from the compact read; the card change is the same, over
    the config's ``gate_window`` of the card before."""
    from service.cli import run
    from service.render.digest_render import render_digest_json
    from service.store.likeforlike import with_like_for_like

    url = f"sqlite:///{tmp_path / 'history.db'}"
    engine = open_store(url)
    try:
        store(engine, nights(A100, 30), datasheet(A100))
        store(engine, nights(H100, 4, start=30), datasheet(H100))
        start, end = FIRST + timedelta(days=28), FIRST + timedelta(days=35)
        with session_scope(engine, readonly=True) as session:
            full = nightly_history(
                session=session,
                repo=REPO,
                start=start - timedelta(days=90),
                end=end + timedelta(microseconds=1),
            )
            full = with_like_for_like(session=session, frame=full, repo=REPO)
    finally:
        engine.dispose()
    config = tmp_path / "roofguard.toml"
    config.write_text(f"[baseline]\ngate_window = {gate_window}\n" if gate_window else "")
    options = DigestOptions(gate_window=gate_window) if gate_window else None
    expected = build_digest(full, start=start, end=end, repo=REPO, options=options)
    period = ["--from", start.isoformat(), "--to", end.isoformat(), "--config", str(config)]
    assert run(["digest", *period, "--repo", REPO, "--json", "--db", url]) == 0
    assert capsys.readouterr().out == render_digest_json(expected)
    assert len(expected.device_changes) == 1


def test_the_card_before_is_judged_over_the_gates_window(history) -> None:
    """As a PR check's cross-device baseline reads that card: its last ``gate_window`` nights."""
    start = FIRST + timedelta(days=28)
    options = DigestOptions(gate_window=5)
    short = build_digest(history, start=start, end=start + timedelta(days=7), options=options)
    a100 = history[history["device"].astype(str) == A100]
    last = a100[a100["timestamp"] >= sorted(a100["timestamp"].unique())[-5]]
    whole, recent = device_levels(a100)["gemm"], device_levels(last)["gemm"]
    assert (whole.runs, recent.runs) == (30, 5) and recent.percent != whole.percent
    [gemm] = short.device_changes[0].not_kept_up
    assert gemm.before == recent.percent
    [gemm] = week(history, 28).device_changes[0].not_kept_up  # 30 nights: all within 60
    assert gemm.before == whole.percent
