"""``roofguard digest`` on a real store (SQLite, and PostgreSQL when available), and --post."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from digest_history import (
    PERIOD_END,
    PERIOD_START,
    history_runs,
    make_digest_history,
    stored_like_for_like,
)
from github_server import FakeGitHub, github_server_fixture  # noqa: F401

from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.cli import run
from service.cli.digest_cmd import resolve_period
from service.digest.build import build_digest
from service.render.digest_render import render_digest_json
from service.store.db import open_store, session_scope
from service.store.ingest import ingest_run

REPO = "acme/kernels"
PERIOD = ["--from", PERIOD_START.isoformat(), "--to", PERIOD_END.isoformat()]


def _fill(url: str, repo: str = REPO) -> None:
    engine = open_store(url)
    try:
        with session_scope(engine) as session:
            for record in history_runs(make_digest_history(), repo=repo):
                roof = builtin_catalog().lookup(record.device.name).roof()
                ingest_run(
                    session=session, run=record, placements=place_run(record, roof), roof=roof
                )
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def store_url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('digest') / 'history.db'}"
    _fill(url)
    return url


def _json(capsys, *args: str) -> dict:
    assert run(["digest", *PERIOD, "--repo", REPO, "--json", *args]) == 0
    captured = capsys.readouterr()
    assert captured.err == "", "no progress bar when stderr is not a terminal (CI)"
    return json.loads(captured.out)


def test_json_from_the_store_matches_the_digest_of_the_frame(store_url, capsys):
    data = _json(capsys, "--db", store_url)
    # The store's history is read like for like (every night against the roof the kernel is
    # usually bound by): fused_mlp's flip to memory-bound reads against its tensor_bf16 roof.
    like = stored_like_for_like(make_digest_history())
    expected = build_digest(like, start=PERIOD_START, end=PERIOD_END, repo=REPO)
    want = json.loads(render_digest_json(expected))
    for section in ("regressions", "improvements", "recoveries", "regime_flips", "unresolved"):
        got = [
            (e["kernel"], e["device"], e["since"], e["from_commit"], e["to_commit"])
            for e in data[section]
        ]
        assert got == [
            (e["kernel"], e["device"], e["since"], e["from_commit"], e["to_commit"])
            for e in want[section]
        ], section
        for mine, theirs in zip(data[section], want[section], strict=True):
            assert mine["relative_change"] == pytest.approx(theirs["relative_change"], rel=1e-9)


def test_markdown_html_and_config(store_url, tmp_path, capsys):
    config = tmp_path / "roofguard.toml"
    config.write_text('[[groups]]\npattern = "gemv*"\nname = "decode GEMV"\ntarget_percent = 80\n')
    md, html = tmp_path / "digest.md", tmp_path / "digest.html"
    args = [
        "digest",
        *PERIOD,
        "--repo",
        REPO,
        "--db",
        store_url,
        "--config",
        str(config),
        "--output",
        str(md),
        "--html",
        str(html),
    ]
    assert run(args) == 0
    assert capsys.readouterr().out == "", "with --output the markdown goes to the file only"
    text = md.read_text()
    assert text.startswith("# roofguard digest 2026-W48") and "decode GEMV" in text
    page = html.read_text()
    assert page.count("<svg") >= 5, "trend charts of the listed kernels and a roofline per device"
    assert 'id="roofline:H100-SXM5"' in page
    assert not re.search(r"(src|href)=\"https?:", page), "self-contained: nothing to fetch"


def test_bad_config_names_file_and_key(store_url, tmp_path, capsys):
    config = tmp_path / "roofguard.toml"
    config.write_text('[[groups]]\nname = "gemv"\npattern = "gemv*"\nregime = "fast"\n')
    assert run(["digest", "--db", store_url, "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert str(config) in err and ": groups[0].regime: " in err  # as written: top level


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "a week"], "--since: expected a span"),
        (["--from", "2026-13-01"], "--from: '2026-13-01' is not an ISO-8601"),
        (["--from", "2026-11-30", "--to", "2026-11-01"], "is not before --to"),
        (["--since", "0d"], "--since: '0d' is no span"),
        # An OverflowError each, "unexpected": a span or lookback past the calendar's start.
        (["--since", "99999999999d"], "--since: '99999999999d' reaches before the year 1"),
        (["--since", "999999d"], "--since: the digest would read outside the years 1 to 9999"),
        (["--lookback-days", "99999999999"], "--lookback-days: the digest would read outside"),
        (["--from", "0001-01-01", "--to", "0001-01-05"], "--lookback-days: the digest would"),
        (["--since", "7d", "--to", "9999-12-31"], "--to: the digest would read outside"),
    ],
)
def test_bad_period_is_one_clear_error(store_url, capsys, args, message):
    assert run(["digest", "--db", store_url, *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1, err


def test_a_period_still_to_come_is_refused_one_under_way_is_not(store_url, capsys):
    """A week in the future read "1 device not measured" as if its runner were down."""
    today = datetime.now(UTC).date()
    ahead = ["--from", str(today + timedelta(days=12)), "--to", str(today + timedelta(days=19))]
    assert run(["digest", "--db", store_url, *ahead]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"roofguard: error: --from: the period starts {ahead[1]}T00:00:00+00:00")
    assert err.endswith("UTC): it has not happened yet\n")
    assert run(["digest", "--db", store_url, "--since", "7d", "--to", ahead[3]]) == 2
    capsys.readouterr()
    under_way = ["--from", str(today - timedelta(days=3)), "--to", ahead[1], "--json"]
    assert run(["digest", "--db", store_url, *under_way]) == 0
    assert json.loads(capsys.readouterr().out)["repo"] == REPO


@pytest.mark.parametrize(
    ("since", "start", "to", "begins", "ends"),
    [
        (None, None, "2026-11-29", "2026-11-23T00:00:00+", "2026-11-29T23:59:59.999999"),
        ("2d", None, "2026-11-29", "2026-11-28T00:00:00+", "2026-11-29T23:59:59.999999"),
        (None, "2026-11-23", "2026-11-29", "2026-11-23T00:00:00+", "2026-11-29T23:59:59.999999"),
    ],
)
def test_a_bare_to_date_ends_a_period_of_whole_days(since, start, to, begins, ends):
    """``--to 2026-11-29`` alone began at 22 November 23:59:59.999999, a microsecond short."""
    now = datetime(2026, 12, 6, tzinfo=UTC)
    begin, stop = resolve_period(since, start, to, now=now)
    assert begin.isoformat().startswith(begins) and stop.isoformat().startswith(ends)


def test_post_creates_the_weeks_issue_once_then_updates_it(
    store_url, github_server: FakeGitHub, monkeypatch, capsys
):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_digest_token")
    monkeypatch.setenv("GITHUB_API_URL", github_server.url)
    args = ["digest", *PERIOD, "--repo", REPO, "--db", store_url, "--post", REPO]
    assert run(args) == 0
    assert run([*args[:2], PERIOD_START.isoformat(), *args[3:]]) == 0  # same week again
    issues = list(github_server.issues.values())
    assert len(issues) == 1
    issue = issues[0]
    assert issue["title"] == "roofguard digest 2026-W48"
    assert "roofguard-digest" in [
        label if isinstance(label, str) else label["name"] for label in issue["labels"]
    ]
    assert "2 new regressions" in issue["body"]
    calls = github_server.calls()
    assert calls.count(("POST", f"/repos/{REPO}/issues")) == 1
    assert "posted roofguard digest 2026-W48 as acme/kernels#" in capsys.readouterr().err


def test_post_without_repo_posts_that_repositorys_digest_only(
    tmp_path, github_server: FakeGitHub, monkeypatch, capsys
):
    """A store shared by two repositories: the other's regressions went into this one's issue."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    _fill(url)
    _fill(url, repo="other/private")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_digest_token")
    monkeypatch.setenv("GITHUB_API_URL", github_server.url)
    assert run(["digest", *PERIOD, "--db", url, "--post", REPO]) == 0
    (issue,) = github_server.issues.values()
    assert "2 new regressions" in issue["body"]  # the history has 2; both repositories', 4


def test_post_with_a_read_only_token_is_one_line(
    store_url, github_server: FakeGitHub, monkeypatch, capsys
):
    """It ended in "unexpected ReadOnlyToken": the job lacked `issues: write`."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_digest_token")
    monkeypatch.setenv("GITHUB_API_URL", github_server.url)
    github_server.read_only = True
    args = ["digest", *PERIOD, "--repo", REPO, "--db", store_url, "--post", REPO]
    assert run(args) == 2
    err = capsys.readouterr().err
    assert f"--post {REPO}: the token cannot write issues there" in err
    assert "permissions: issues: write" in err and "unexpected" not in err
    assert not github_server.issues


def test_min_segment_below_one_names_the_option(store_url, capsys):
    assert run(["digest", *PERIOD, "--db", store_url, "--min-segment", "0"]) == 2
    assert "--min-segment" in capsys.readouterr().err


def test_next_week_gets_a_new_issue(store_url, github_server: FakeGitHub, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_digest_token")
    monkeypatch.setenv("GITHUB_API_URL", github_server.url)
    base = ["digest", "--repo", REPO, "--db", store_url, "--post", REPO]
    assert run([*base, *PERIOD]) == 0
    assert run([*base, "--from", "2026-11-30", "--to", "2026-12-06"]) == 0
    titles = sorted(i["title"] for i in github_server.issues.values())
    assert titles == ["roofguard digest 2026-W48", "roofguard digest 2026-W49"]


@pytest.mark.postgres
def test_digest_on_postgresql(postgres_url, capsys):
    _fill(postgres_url)
    data = _json(capsys, "--db", postgres_url)
    assert {(e["kernel"], e["device"]) for e in data["regressions"]} == {
        ("fused_mlp", "A100-SXM4-80GB"),
        ("gemv_bf16", "H100-SXM5"),
    }


def test_markdown_to_stdout_by_default(store_url, capsys):
    assert run(["digest", *PERIOD, "--repo", REPO, "--db", store_url]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# roofguard digest 2026-W48\n")
    assert "| `gemv_bf16` | `H100-SXM5` | -19.9 % |" in out
