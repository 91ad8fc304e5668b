"""``roofguard digest --repo`` of a repository with no run stored is refused, naming those stored.

Named wrong (``acme/servign`` for ``acme/serving``), the digest read "No nightly run of
acme/servign stored up to …: nothing to digest" and exited 0: a weekly cron job posted an
empty digest every week and nobody noticed. A repository with runs but no nightly one yet
(PR runs only) still gets that headline.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from device_fleet import FIRST, REPO, datasheet, nights, store
from github_server import FakeGitHub, github_server_fixture  # noqa: F401

from collectors.schema import RunKind, RunRecord
from service.cli import run
from service.store.db import open_store
from service.store.lookups import NAMED_REPOS, closest_first

A100 = "A100-SXM4-80GB"
TYPO = "acme/servign"


def _runs(repo: str, count: int = 3, kind: RunKind = RunKind.NIGHTLY) -> list[RunRecord]:
    return [r.model_copy(update={"repo": repo}) for r in nights(A100, count, kind=kind)]


def _stored(url: str, *repos: str, kind: RunKind = RunKind.NIGHTLY) -> str:
    """``url`` holding three runs of ``kind`` of each of ``repos``; the URL."""
    engine = open_store(url)
    try:
        for repo in repos:
            store(engine, _runs(repo, kind=kind), datasheet(A100))
    finally:
        engine.dispose()
    return url


def _sqlite(tmp_path, *repos: str, kind: RunKind = RunKind.NIGHTLY) -> str:
    return _stored(f"sqlite:///{tmp_path / 'history.db'}", *repos, kind=kind)


def _digest(url: str, *args: str, repo: str | None = None) -> list[str]:
    """``roofguard digest`` of the first week of ``url``, of ``repo`` when given."""
    start = FIRST.date()
    period = ["--from", start.isoformat(), "--to", (start + timedelta(days=6)).isoformat()]
    return ["digest", *(["--repo", repo] if repo else []), *period, "--db", url, *args]


def _refused(argv: list[str], capsys) -> str:
    """The one error line of ``argv``, which must exit 2 and print nothing else."""
    assert run(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def test_a_repository_named_wrong_exits_2_naming_the_stored_one(tmp_path, capsys) -> None:
    url = _sqlite(tmp_path, REPO)
    markdown, html = tmp_path / "digest.md", tmp_path / "digest.html"
    argv = _digest(url, "--output", str(markdown), "--html", str(html), repo=TYPO)
    line = _refused(argv, capsys)
    assert line == (
        f"roofguard: error: no run of {TYPO} is in the history store (a repository named "
        f"wrong?); it holds runs of {REPO}"
    )
    assert not markdown.exists() and not html.exists()
    assert _refused(_digest(url, "--json", repo=TYPO), capsys) == line  # no JSON of nothing


def test_the_closest_stored_repositories_come_first_and_the_list_is_capped(
    tmp_path, capsys
) -> None:
    others = [f"other/repo-{i}" for i in range(NAMED_REPOS + 2)]
    url = _sqlite(tmp_path, *others, "Acme/Serving", "acme/server")
    line = _refused(_digest(url, repo=TYPO), capsys)
    named = line.split("it holds runs of ")[1]
    assert named.startswith("Acme/Serving, acme/server, other/repo-")
    assert named.endswith(" and 4 more") and named.count(", ") == NAMED_REPOS - 1


def test_an_empty_store_says_it_holds_no_run_at_all(tmp_path, capsys) -> None:
    url = _sqlite(tmp_path)
    line = _refused(_digest(url, repo=TYPO), capsys)
    assert line.endswith(f"no run of {TYPO} is in the history store, nor of any repository")


def test_the_repository_in_another_letter_case_is_the_same_one(tmp_path, capsys) -> None:
    url = _sqlite(tmp_path, REPO)
    assert run(_digest(url, "--json", repo=REPO.upper())) == 0
    assert json.loads(capsys.readouterr().out)["measurements"] > 0


def test_a_repository_with_pr_runs_only_still_has_nothing_to_digest(tmp_path, capsys) -> None:
    url = _sqlite(tmp_path, REPO, kind=RunKind.PR)
    assert run(_digest(url, "--json", repo=REPO)) == 0
    headline = json.loads(capsys.readouterr().out)["headline"]
    assert headline == f"No nightly run of {REPO} stored up to 2026-02-07: nothing to digest"


def test_posting_the_digest_of_a_repository_named_wrong_posts_nothing(
    tmp_path, github_server: FakeGitHub, monkeypatch, capsys
) -> None:
    """``--post`` without ``--repo`` digests the repository it posts to: refused alike."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_digest_token")
    monkeypatch.setenv("GITHUB_API_URL", github_server.url)
    url = _sqlite(tmp_path, REPO)
    assert f"no run of {TYPO}" in _refused(_digest(url, "--post", TYPO), capsys)
    assert not github_server.issues and not github_server.calls()


def test_closest_first_ignores_letter_case_and_keeps_the_rest_in_order() -> None:
    names = ["a/one", "Acme/Serving", "b/two"]
    assert closest_first("acme/servign", names) == ["Acme/Serving", "a/one", "b/two"]
    assert closest_first("zzz", names, limit=2) == ["a/one", "Acme/Serving"]


@pytest.mark.postgres
def test_a_repository_named_wrong_on_postgresql(postgres_url, capsys) -> None:
    """The database is shared with other tests: the close name is still named first."""
    url = _stored(postgres_url, "acme/pg-serving-0042")
    line = _refused(_digest(url, repo="acme/pg-servign-0042"), capsys)
    assert "no run of acme/pg-servign-0042 is in the history store" in line
    assert "it holds runs of acme/pg-serving-0042" in line
