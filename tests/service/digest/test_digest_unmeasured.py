"""A device that ran no nightly run in the period is named, not read as a quiet week.

Before, the digest of a week in which a card's runner was down listed nothing for it: its
kernels dropped out of every section, and a week in which nothing ran at all read
"0 regressions" like a quiet one.
"""

from __future__ import annotations

import json
from datetime import timedelta

from device_fleet import FIRST, KERNELS, REPO, Work, datasheet, nights, store

from service.cli import run
from service.digest.build import build_digest
from service.render.digest_render import render_digest_html, render_digest_markdown
from service.store.db import open_store, session_scope
from service.store.history import nightly_history

A100, H100, L40S = "A100-SXM4-80GB", "H100-SXM5", "L40S"
#: The fleet's kernels with a percent of roof on the L40S too.
FLEET = {
    key: Work(work.flops, work.nbytes, {**work.percent, L40S: 70.0})
    for key, work in KERNELS.items()
}


def stored(tmp_path, *cards: tuple[str, int, int]) -> str:
    """A store holding the nights of ``cards``: (card, first night, nights) each; its URL."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    engine = open_store(url)
    try:
        for card, first, count in cards:
            store(engine, nights(card, count, start=first, kernels=FLEET), datasheet(card))
    finally:
        engine.dispose()
    return url


def history(tmp_path, *cards: tuple[str, int, int]):
    """The nightly history of ``cards``: (card, first night, nights) each."""
    engine = open_store(stored(tmp_path, *cards))
    try:
        with session_scope(engine, readonly=True) as session:
            return nightly_history(
                session=session, repo=REPO, start=FIRST, end=FIRST + timedelta(days=60)
            )
    finally:
        engine.dispose()


def week(frame, first_day: int):
    start = FIRST + timedelta(days=first_day)
    return build_digest(frame, start=start, end=start + timedelta(days=7), repo=REPO)


def test_a_card_whose_runner_stopped_is_named_with_its_last_night(tmp_path) -> None:
    frame = history(tmp_path, (A100, 0, 30), (H100, 0, 20))  # the H100 stops after night 19
    digest = week(frame, 23)
    [silent] = digest.unmeasured
    assert (silent.device, silent.last_commit, silent.kernels) == (H100, "n0019", 2)
    assert silent.last_night == FIRST + timedelta(days=19)
    assert digest.headline.startswith("1 device not measured, 0 time regressions")
    assert [d.device for d in digest.devices] == [A100]
    markdown = render_digest_markdown(digest)
    assert "## Devices not measured" in markdown
    assert "| `H100-SXM5` | 2026-02-20 | `n0019` | 2 |" in markdown
    html = render_digest_html(digest)
    assert '<table id="unmeasured">' in html and "<code>H100-SXM5</code>" in html
    assert json.loads(digest.model_dump_json())["unmeasured"][0]["device"] == H100


def test_a_week_in_which_nothing_ran_names_every_card(tmp_path) -> None:
    frame = history(tmp_path, (A100, 0, 20), (H100, 0, 20))
    digest = week(frame, 30)
    assert [u.device for u in digest.unmeasured] == [A100, H100]
    assert not digest.devices and not digest.regressions
    assert digest.headline.startswith("2 devices not measured, ")


def test_a_card_another_took_over_from_is_a_device_change_not_a_silence(tmp_path) -> None:
    frame = history(tmp_path, (A100, 0, 20), (H100, 20, 20))
    assert not week(frame, 21).unmeasured  # the week of the swap
    assert not week(frame, 30).unmeasured  # and the weeks after it


def test_a_card_taken_over_stays_so_when_its_successor_stops_too(tmp_path) -> None:
    """Only the H100 went silent; the A100 it replaced was named "not measured" beside it."""
    frame = history(tmp_path, (A100, 0, 20), (H100, 20, 10))
    [silent] = week(frame, 35).unmeasured
    assert (silent.device, silent.last_commit) == (H100, "n0029")


def test_a_card_added_later_beside_a_running_one_took_no_silent_one_over(tmp_path) -> None:
    """The A100 stopped after night 9; the L40S joined the H100 eleven nights later."""
    frame = history(tmp_path, (A100, 0, 10), (H100, 0, 30), (L40S, 20, 10))
    [silent] = week(frame, 23).unmeasured
    assert (silent.device, silent.last_commit) == (A100, "n0009")


def test_a_week_with_every_card_measured_names_none(tmp_path) -> None:
    frame = history(tmp_path, (A100, 0, 30), (H100, 0, 30))
    digest = week(frame, 23)
    assert digest.unmeasured == []
    assert "not measured" not in digest.headline
    assert "Devices not measured" not in render_digest_markdown(digest)


def _digest_cli(url: str, repo: str, first_day: int, *args: str) -> list[str]:
    start = (FIRST + timedelta(days=first_day)).date()
    period = ["--from", start.isoformat(), "--to", (start + timedelta(days=6)).isoformat()]
    return ["digest", "--repo", repo, *period, "--db", url, *args]


def test_a_repository_silent_past_the_lookback_names_its_last_nights(tmp_path, capsys) -> None:
    """Nights that stopped 120 days before the week, past the 90 days read before it.

    The digest read no row and said "0 time regressions, 0 new regressions, …", as a quiet
    week does; the dashboard's page said no more.
    """
    url = stored(tmp_path, (A100, 0, 10), (H100, 0, 20))
    assert run(_digest_cli(url, REPO, 140, "--json")) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["measurements"] == 0
    silent = [(u["device"], u["last_commit"], u["kernels"]) for u in data["unmeasured"]]
    assert silent == [(A100, "n0009", 2), (H100, "n0019", 2)]
    assert data["unmeasured"][1]["last_night"].startswith("2026-02-20")
    assert run(_digest_cli(url, REPO, 140)) == 0
    markdown = capsys.readouterr().out
    assert "**2 devices not measured, 0 time regressions" in markdown
    assert "| `H100-SXM5` | 2026-02-20 | `n0019` | 2 |" in markdown


def test_a_week_before_the_first_night_says_no_night_is_stored(tmp_path, capsys) -> None:
    """A digest that read no night read as a quiet week's; it says none is stored.

    A repository with no run at all (named wrong) is refused: ``test_digest_repo_named_wrong``.
    """
    url = stored(tmp_path, (A100, 0, 10))
    assert run(_digest_cli(url, REPO, -30)) == 0  # a week before its first night
    assert (
        "**No nightly run of acme/serving stored up to 2026-01-08: nothing to digest**"
        in capsys.readouterr().out
    )
    assert run(_digest_cli(url, REPO, -30, "--json")) == 0
    headline = json.loads(capsys.readouterr().out)["headline"]  # a job reading the JSON sees it
    assert headline == "No nightly run of acme/serving stored up to 2026-01-08: nothing to digest"
