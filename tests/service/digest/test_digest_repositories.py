"""``roofguard digest`` without ``--repo`` is one repository's digest, or refused.

A store of two repositories on one card read both as one: each (kernel, card) series held
the nights of both, so a kernel 1.3x slower in the newer repository read as a regression (and
an improvement, back and forth), with commits of each, 12 nights in a 7-day week and a
below-target figure of both blended, while ``--repo`` of either read 0. Now nights of more
than one repository in the digest's reach are refused, naming them; a store of one digests it.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from device_fleet import FIRST, datasheet, nights, slowed, store
from scratchdb import scratch_database

from collectors.schema import RunKind, RunRecord
from service.cli import run
from service.store.db import open_store
from service.store.lookups import NAMED_REPOS

H100 = "H100-SXM5"
OLD, NEW = "acme/llm", "acme/new"
#: The week of nights 23 to 29 (the last of the old repository's 30).
WEEK = ["--from", (FIRST + timedelta(days=23)).date().isoformat()]
WEEK += ["--to", (FIRST + timedelta(days=29)).date().isoformat()]
REFUSED = (
    f"roofguard: error: --repo: the nightly runs this digest reads are of 2 repositories "
    f"({OLD}, {NEW}); a digest is one repository's: give --repo OWNER/NAME"
)


def _of(repo: str, runs: list[RunRecord], *, earlier: timedelta = timedelta()) -> list[RunRecord]:
    return [r.model_copy(update={"repo": repo, "timestamp": r.timestamp - earlier}) for r in runs]


def _fill(url: str, *repos: list[RunRecord]) -> str:
    engine = open_store(url)
    try:
        for runs in repos:
            store(engine, runs, datasheet(H100))
    finally:
        engine.dispose()
    return url


def _two_repositories(url: str) -> str:
    """30 steady nights of ``OLD``; the last 6 of ``NEW``, its gemv 1.3x slower throughout."""
    newer = [slowed(r, 1.3) for r in nights(H100, 6, start=24)]
    return _fill(url, _of(OLD, nights(H100, 30)), _of(NEW, newer, earlier=timedelta(minutes=30)))


def _digest(capsys, url: str, *args: str) -> tuple[int, str, str]:
    code = run(["digest", *WEEK, "--db", url, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_refused(capsys, url: str, tmp_path) -> None:
    written = tmp_path / "digest.md"
    code, out, err = _digest(capsys, url, "--json", "--output", str(written))
    assert (code, out, err.splitlines()) == (2, "", [REFUSED])
    assert not written.exists()
    for repo in (OLD, NEW):  # each on its own: a steady week
        code, out, _ = _digest(capsys, url, "--json", "--repo", repo)
        data = json.loads(out)
        assert code == 0 and data["repo"] == repo
        assert data["regressions"] == data["improvements"] == data["time_regressions"] == []
        assert [d["nights"] for d in data["devices"]] == [7 if repo == OLD else 6]


def test_nights_of_two_repositories_are_refused_naming_them(tmp_path, capsys) -> None:
    url = _two_repositories(f"sqlite:///{tmp_path / 'history.db'}")
    _assert_refused(capsys, url, tmp_path)


@pytest.mark.postgres
def test_nights_of_two_repositories_are_refused_on_postgresql(postgres_url, tmp_path, capsys):
    with scratch_database(postgres_url, "digestrepos") as url:  # no other test's repository
        _assert_refused(capsys, _two_repositories(url), tmp_path)


def test_a_store_of_one_repository_is_its_digest_by_name(tmp_path, capsys) -> None:
    """A repository of PR runs only, or of nights before the reach, is not a second one."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    before = _of("acme/gone", nights(H100, 3))  # nights 0 to 2: 21 days before the week
    prs = _of("acme/prs", nights(H100, 3, start=25, kind=RunKind.PR))
    _fill(url, _of(OLD, nights(H100, 30)), prs, before)
    lookback = ["--lookback-days", "14"]
    code, named, _ = _digest(capsys, url, "--json", "--repo", OLD, *lookback)
    assert code == 0
    assert _digest(capsys, url, "--json", *lookback) == (0, named, "")
    assert json.loads(named)["repo"] == OLD
    code, out, err = _digest(capsys, url, "--json")  # 90 days back: acme/gone's nights too
    assert code == 2 and out == "" and "are of 2 repositories (acme/gone, acme/llm)" in err


def test_many_repositories_are_named_up_to_a_few_then_counted(tmp_path, capsys) -> None:
    repos = [f"acme/r{i}" for i in range(NAMED_REPOS + 2)]
    url = _fill(
        f"sqlite:///{tmp_path / 'history.db'}", *(_of(r, nights(H100, 2, start=27)) for r in repos)
    )
    code, _, err = _digest(capsys, url)
    named = ", ".join(repos[:NAMED_REPOS])
    assert code == 2 and f"are of {len(repos)} repositories ({named} and 2 more);" in err
