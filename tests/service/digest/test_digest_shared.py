"""Moves shared by many kernels of one night: a runner swap, once listed kernel by kernel.

A store of 30 memory-bound kernels, 14 nights on runner r1 (driver 550.54), then a week on
another setup 7% slower, read through ``roofguard digest`` on SQLite.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest
from factories import make_device, make_run
from fastapi.testclient import TestClient

from collectors.schema import KernelRecord, RunRecord
from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.api.app import create_app
from service.cli import run
from service.config import RoofguardConfig
from service.digest.model import DeviceSummary, Digest, Movement
from service.digest.shared import shared_moves
from service.render.digest_render import render_digest_markdown
from service.render.digest_shared import SHARED_ROW_LIMIT, likely_cause, shared_move_rows
from service.settings import Settings
from service.store.db import open_store, session_scope
from service.store.ingest import ingest_run

REPO = "acme/kernels"
DEVICE = "A100-SXM4-80GB"
FIRST = datetime(2026, 11, 1, 2, 0, tzinfo=UTC)
KERNELS = 30
SWAP_NIGHT = 14
PERIOD = ["--from", "2026-11-12", "--to", "2026-11-21"]


def _night(
    night: int, slower: float, runner: str, driver: str, first: datetime, repo: str
) -> RunRecord:
    rng = random.Random(night)
    bandwidth = builtin_catalog().lookup(DEVICE).roof().bandwidth_byte_per_s["dram"]
    kernels = []
    for k in range(KERNELS):
        nbytes = 2e9 * (1 + k / 10)
        time_s = nbytes / (0.78 * bandwidth) * slower * (1 + rng.gauss(0, 0.005))
        kernels.append(
            KernelRecord(
                name=f"copy_{k}", key=f"copy_{k}", duration_s=time_s, bytes={"dram": nbytes}
            )
        )
    return make_run(
        kernels=kernels,
        repo=repo,
        commit=f"{night:040x}",
        timestamp=first + timedelta(days=night),
        device=make_device(DEVICE, driver=driver),
        tool="nsys",
        runner=runner,
    )


def _store(
    url: str,
    runner: str,
    driver: str,
    first: datetime = FIRST,
    repo: str = REPO,
    timed_alone: int = 0,
) -> None:
    """21 nights, the last 7 on ``runner`` and ``driver``.

    The last ``timed_alone`` kernels have no work: benchmarks timed alone, without a roof.
    """
    roof = builtin_catalog().lookup(DEVICE).roof()
    engine = open_store(url)
    try:
        with session_scope(engine) as session:
            for night in range(21):
                swapped = night >= SWAP_NIGHT
                record = _night(
                    night,
                    1.07 if swapped else 1.0,
                    runner if swapped else "r1",
                    driver if swapped else "550.54",
                    first,
                    repo,
                )
                if timed_alone:
                    placed = KERNELS - timed_alone
                    kernels = record.kernels[:placed] + tuple(
                        k.model_copy(update={"bytes": {}}) for k in record.kernels[placed:]
                    )
                    record = record.model_copy(update={"kernels": kernels})
                placements = place_run(record, roof)
                ingest_run(session=session, run=record, placements=placements, roof=roof)
    finally:
        engine.dispose()


def _digest(tmp_path, capsys, runner: str, driver: str, period: list[str] = PERIOD) -> dict:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    _store(url, runner, driver)
    assert run(["digest", *period, "--repo", REPO, "--db", url, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_runner_swap_is_one_shared_move_naming_the_new_runner(tmp_path, capsys):
    data = _digest(tmp_path, capsys, runner="r2", driver="550.54")
    [move] = data["shared_moves"]
    assert (move["device"], move["direction"]) == (DEVICE, "regression")
    assert move["since"].startswith("2026-11-15")  # night 14
    assert move["to_commit"] == f"{SWAP_NIGHT:040x}"
    assert (move["runner"], move["runners_before"]) == ("r2", ["r1"])
    assert (move["driver"], move["drivers_before"]) == ("550.54", ["550.54"])
    # Its figures are those of the regressions it groups.
    grouped = [r for r in data["regressions"] if r["since"] == move["since"]]
    assert move["kernels"] == len(grouped) >= KERNELS / 3
    assert move["kernels_measured"] == KERNELS
    changes = sorted(r["relative_change"] for r in grouped)
    assert move["median_change"] == pytest.approx(
        (changes[(len(changes) - 1) // 2] + changes[len(changes) // 2]) / 2
    )
    assert -0.08 < move["median_change"] < -0.05


def test_a_later_week_ties_the_unresolved_regressions_to_the_same_move(tmp_path, capsys):
    later = ["--from", "2026-11-19", "--to", "2026-11-21"]  # the swap was on the 15th
    data = _digest(tmp_path, capsys, runner="r2", driver="550.54", period=later)
    assert data["regressions"] == []
    [move] = data["shared_moves"]
    assert move["since"].startswith("2026-11-15") and move["runner"] == "r2"
    that_night = [r for r in data["unresolved"] if r["since"] == move["since"]]
    assert move["unresolved"] == move["kernels"] == len(that_night) >= KERNELS / 3


def test_a_week_without_nights_shares_nothing(tmp_path, capsys):
    """Its unresolved regressions have no count of measured kernels to be a share of: "14 of
    14" made any three regressions of one night a runner's move."""
    later = ["--from", "2026-12-01", "--to", "2026-12-07"]  # the last night was 2026-11-21
    data = _digest(tmp_path, capsys, runner="r2", driver="550.54", period=later)
    assert data["devices"] == [] and len(data["unresolved"]) >= KERNELS / 3
    assert data["shared_moves"] == []


def test_benchmarks_timed_alone_are_counted_and_their_shared_slowdown_named(tmp_path, capsys):
    """They read "no nightly run in this period" and "0 measurements" beside 30 slowdowns."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    _store(url, "r2", "550.54", timed_alone=KERNELS)
    assert run(["digest", *PERIOD, "--repo", REPO, "--db", url, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["regressions"] == [] and len(data["time_regressions"]) >= KERNELS / 3
    assert data["measurements"] == KERNELS * 21  # the period and its lookback
    [device] = data["devices"]
    assert (device["kernels"], device["nights"], device["median_percent_of_roof"]) == (30, 10, None)
    [move] = data["shared_moves"]
    assert (move["measure"], move["runner"], move["runners_before"]) == ("time", "r2", ["r1"])
    slower = [t for t in data["time_regressions"] if t["since"] == move["since"]]
    assert move["kernels"] == len(slower)
    speeds = sorted(1 / t["ratio"] - 1 for t in slower)
    assert move["median_change"] == pytest.approx(
        (speeds[(len(speeds) - 1) // 2] + speeds[len(speeds) // 2]) / 2
    )


def test_a_suite_on_the_roof_and_timed_alone_counts_each_against_its_own(tmp_path, capsys):
    """Half placed, half timed alone: "14 of 30 regressed" counted the placed kernels against
    all of them, and the benchmarks' shared slowdown was not named at all."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    _store(url, "r2", "550.54", timed_alone=KERNELS // 2)
    out = tmp_path / "digest.md"
    args = ["digest", *PERIOD, "--repo", REPO, "--db", url]
    assert run([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [device] = data["devices"]
    assert (device["kernels"], device["kernels_on_roof"]) == (KERNELS, KERNELS // 2)
    on_roof, timed = data["shared_moves"]
    assert (on_roof["measure"], on_roof["kernels_measured"]) == ("percent_of_roof", 15)
    assert (timed["measure"], timed["kernels_measured"]) == ("time", 15)
    assert timed["since"] == on_roof["since"] and timed["runner"] == "r2"
    alone = [t for t in data["time_regressions"] if t["since"] == timed["since"]]
    assert timed["kernels"] == sum(t["from_binding"] is None for t in alone)
    assert run([*args, "--output", str(out)]) == 0
    text = out.read_text()
    assert text.splitlines()[2].startswith("**1 move shared by many kernels, ")
    assert f"| {timed['kernels']} of 15 timed alone, slower |" in text
    assert f"| {on_roof['kernels']} of 15 regressed, " in text


def test_the_markdown_and_html_say_it_once_above_the_tables(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'history.db'}"
    _store(url, "r2", "550.54")
    out, page = tmp_path / "digest.md", tmp_path / "digest.html"
    args = ["--output", str(out), "--html", str(page)]
    assert run(["digest", *PERIOD, "--repo", REPO, "--db", url, *args]) == 0
    html = page.read_text()
    assert html.index('<table id="shared-moves">') < html.index("New regressions in percent")
    assert "<td>r2, new (before: r1)</td>" in html
    text = out.read_text()
    assert text.splitlines()[2].startswith("**1 move shared by many kernels, ")
    shared = text.index("## Moves shared by many kernels")
    assert shared < text.index("## New regressions")
    row = next(line for line in text.splitlines() if line.startswith(f"| `{DEVICE}` |"))
    assert "of 30 regressed" in row
    assert "`r2`, new (before: `r1`)" in row
    assert "`550.54`, as before" in row
    assert "the runner: new that night" in row


@pytest.mark.parametrize(("runner", "marked"), [("r2", True), ("r1", False)])
def test_the_trend_charts_mark_the_night_a_runner_took_over(tmp_path, runner, marked):
    """As the kernel page's trend does; a new driver on the same runner is no runner change."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    _store(url, runner, "550.54" if marked else "555.42")
    page = tmp_path / "digest.html"
    assert run(["digest", *PERIOD, "--repo", REPO, "--db", url, "--html", str(page)]) == 0
    html = page.read_text()
    trends = html.count('id="series"')
    assert trends >= KERNELS / 3, "the week's regressions are drawn"
    assert html.count('id="runner:0"') == (trends if marked else 0)
    assert ("runner r1 → r2" in html) is marked


def test_the_dashboards_digest_page_shows_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'history.db'}"
    _store(url, "r2", "550.54", first=datetime.now(UTC) - timedelta(days=20.5))
    app = create_app(Settings(database_url=url), RoofguardConfig())
    with TestClient(app) as client:
        page = client.get("/digest", params={"repo": REPO}).text
    assert "Moves shared by many kernels (1)" in page
    assert "r2, new (before: r1)" in page
    assert page.index('id="shared-moves"') < page.index('id="regressions"')


@pytest.mark.postgres
def test_the_setups_are_read_on_postgresql(postgres_url, capsys):
    repo = "acme/swapped-runner"  # the database is this worker's, shared by its tests
    _store(postgres_url, "r2", "550.54", repo=repo)
    assert run(["digest", *PERIOD, "--repo", repo, "--db", postgres_url, "--json"]) == 0
    [move] = json.loads(capsys.readouterr().out)["shared_moves"]
    assert (move["runner"], move["runners_before"], move["kernels_measured"]) == ("r2", ["r1"], 30)


def test_a_new_driver_on_the_same_runner_is_named_instead(tmp_path, capsys):
    [move] = _digest(tmp_path, capsys, runner="r1", driver="555.42")["shared_moves"]
    assert (move["runner"], move["driver"], move["drivers_before"]) == ("r1", "555.42", ["550.54"])


def _movement(kernel: int, since: datetime, change: float) -> Movement:
    return Movement(
        kernel=f"k{kernel}",
        kernel_name=f"k{kernel}",
        device=DEVICE,
        relative_change=change,
        before=70.0,
        after=70.0 * (1 + change),
        current=70.0 * (1 + change),
        since=since,
        from_commit="a" * 40,
        to_commit="b" * 40,
        age_days=1.0,
    )


def _digest_of(regressions: list[Movement], kernels: int) -> Digest:
    summary = DeviceSummary(
        device=DEVICE,
        kernels=kernels,
        nights=7,
        median_percent_of_roof=70.0,
        regressions=len(regressions),
        improvements=0,
        regime_flips=0,
        unresolved=0,
    )
    return Digest(
        repo=REPO,
        start=FIRST,
        end=FIRST + timedelta(days=7),
        week="2026-W45",
        measurements=kernels * 7,
        regressions=regressions,
        improvements=[],
        recoveries=[],
        regime_flips=[],
        mislabels=[],
        below_target=[],
        unresolved=[],
        devices=[summary],
    )


@pytest.mark.parametrize(("moved", "shared"), [(10, 0), (11, 1), (2, 0)])
def test_a_third_of_the_kernels_on_one_night_is_shared(moved, shared):
    kernels = 30 if moved > 2 else 4  # 2 of 4 is half, but two kernels are no runner's sign
    night = FIRST + timedelta(days=3)
    regressions = [_movement(k, night, -0.05) for k in range(moved)]
    # Kernels that moved on other nights are not counted with them.
    regressions += [_movement(100 + k, night + timedelta(days=1 + k), -0.2) for k in range(5)]
    assert len(shared_moves(_digest_of(regressions, kernels))) == shared


def test_the_likely_cause_reads_the_setups():
    night = FIRST + timedelta(days=3)
    [move] = shared_moves(_digest_of([_movement(k, night, -0.05) for k in range(12)], 30))
    assert likely_cause(move).startswith("no runner or driver recorded")
    both = move.model_copy(
        update={"runner": "r2", "runners_before": ["r1"], "driver": "2", "drivers_before": ["1"]}
    )
    assert likely_cause(both).startswith("the runner and the driver: new")
    same = both.model_copy(update={"runners_before": ["r2"], "drivers_before": ["2"]})
    assert likely_cause(same).startswith("the same runner and driver")


def test_the_issue_lists_the_newest_moves_and_counts_the_older(tmp_path):
    """A fleet's unresolved moves over the lookback must not push the issue past 65,536."""
    nights = [FIRST + timedelta(days=n) for n in range(SHARED_ROW_LIMIT + 5)]
    regressions = [
        _movement(100 * n + k, night, -0.05) for n, night in enumerate(nights) for k in range(12)
    ]
    digest = _digest_of(regressions, 30)
    digest = digest.model_copy(update={"shared_moves": shared_moves(digest)})
    text = render_digest_markdown(digest)
    rows = [line for line in text.splitlines() if line.startswith(f"| `{DEVICE}` | 12 of 30")]
    assert len(rows) == SHARED_ROW_LIMIT
    assert nights[-1].strftime("%Y-%m-%d") in rows[-1]  # the newest kept
    assert "…and 5 older (`roofguard digest --json` lists every entry)." in text


def test_a_pools_runners_before_are_named_three_at_most():
    night = FIRST + timedelta(days=3)
    [move] = shared_moves(_digest_of([_movement(k, night, -0.05) for k in range(12)], 30))
    pool = move.model_copy(update={"runner": "r9", "runners_before": ["r1", "r2", "r3", "r4"]})
    [row] = shared_move_rows(_digest_of([], 30).model_copy(update={"shared_moves": [pool]}), str)
    assert row["runner"] == "r9, new (before: r1, r2, r3, …)"
