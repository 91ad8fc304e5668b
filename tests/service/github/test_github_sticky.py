"""The sticky comment where another GitHub App posted a copy of roofguard's marker first.

With GITHUB_TOKEN (no login to learn) the first marked comment's bot is taken to be us; when
that is another App's, GitHub refuses our edit and roofguard posts its own comment instead.
Real github3.py against the local fake GitHub, which refuses an edit of someone else's comment.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
from github3 import exceptions as gh_exc
from github_server import READ_ONLY, FakeClock, FakeGitHub, github_server_fixture  # noqa: F401
from verdict_factory import regression_verdict

from rules.verdict import Conclusion, Verdict
from service.github.auth import GitHubCredentials
from service.github.client import PublishResult, make_client, publish_verdict
from service.github.retry import GitHubUnavailable, RetryPolicy
from service.render.markdown import render_verdict, verdict_marker

ROOT = Path(__file__).resolve().parents[3]
REPO, PR = "acme/kernels", 42
MARKER = verdict_marker(REPO, PR, "H100-SXM5")
MIRRORED = f"{MARKER}\nmirrored by another App"


def publish(server: FakeGitHub, verdict: Verdict | None = None, **retry: int) -> PublishResult:
    verdict = verdict or regression_verdict()
    client = make_client(
        GitHubCredentials(token="ghs_actions_token"),
        api_url=server.url,
        clock=FakeClock(),
        retry=RetryPolicy(**retry),
    )
    markdown = render_verdict(verdict)
    return publish_verdict(verdict, markdown, repo=REPO, pr=PR, sha=None, client=client)


def foreign_copy(server: FakeGitHub, login: str = "mirror-bot[bot]", body: str = MIRRORED) -> int:
    return server.add_comment(REPO, PR, body, login=login)


def edits(server: FakeGitHub, cid: int, since: int = 0) -> int:
    path = f"/repos/{REPO}/issues/comments/{cid}"
    return sum(1 for r in server.requests[since:] if (r.method, r.path) == ("PATCH", path))


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "roofguard.github"]


@pytest.mark.parametrize("status", [403, 404])
def test_another_apps_earlier_copy_is_left_alone_and_ours_posted(
    github_server: FakeGitHub, caplog: pytest.LogCaptureFixture, status: int
) -> None:
    """With no comment of ours yet, another App's copy of the marker was taken for ours: GitHub
    refused the edit and the whole run failed."""
    foreign = foreign_copy(github_server)
    if status == 404:
        github_server.fail_next("PATCH", rf"/issues/comments/{foreign}$", 404)
    with caplog.at_level(logging.WARNING, logger="roofguard.github"):
        result = publish(github_server)
    assert (result.posted, result.comment_action) == (True, "created")
    assert result.comment_id != foreign and edits(github_server, foreign) == 1
    assert github_server.comments[foreign]["body"] == MIRRORED
    ours = github_server.comments[result.comment_id]
    assert ours["user"]["login"] == "github-actions[bot]"
    assert ours["body"].splitlines()[0] == MARKER
    (line,) = warnings(caplog)
    assert f"refused to edit comment {foreign}," in line
    assert f"posted comment {result.comment_id} instead" in line


def test_the_next_runs_edit_our_new_comment_and_leave_the_other_apps_alone(
    github_server: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    """After the fallback two marked bot comments exist, the other App's first: later runs
    must not take it for ours again (refused, one more new comment each run)."""
    foreign = foreign_copy(github_server)
    first = publish(github_server)
    since = len(github_server.requests)
    caplog.clear()
    passing = regression_verdict(conclusion=Conclusion.PASS)
    with caplog.at_level(logging.WARNING, logger="roofguard.github"):
        second = publish(github_server, passing)
        third = publish(github_server)
    assert [(r.comment_action, r.comment_id) for r in (second, third)] == [
        ("updated", first.comment_id),
        ("updated", first.comment_id),
    ]
    assert sorted(github_server.comments) == sorted([foreign, first.comment_id])
    assert edits(github_server, foreign, since) == 0 and not warnings(caplog)
    assert edits(github_server, first.comment_id, since) == 2
    assert github_server.comments[foreign]["body"] == MIRRORED
    rendered = render_verdict(regression_verdict()).split("\n", 1)[1]
    assert github_server.comments[first.comment_id]["body"].endswith(rendered)


def test_an_app_mirroring_our_new_comment_is_left_alone_too(github_server: FakeGitHub) -> None:
    foreign = foreign_copy(github_server)
    ours = publish(github_server).comment_id
    assert ours is not None
    mirror = foreign_copy(github_server, "copycat[bot]", github_server.comments[ours]["body"])
    since = len(github_server.requests)
    result = publish(github_server, regression_verdict(conclusion=Conclusion.PASS))
    assert (result.comment_action, result.comment_id) == ("updated", ours)
    assert edits(github_server, foreign, since) == edits(github_server, mirror, since) == 0
    assert sorted(github_server.comments) == sorted([foreign, ours, mirror])


def test_our_comment_after_a_refused_one_is_edited_not_a_new_one_posted(
    github_server: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    """Our comment exists but another App's copy is older: the next author's comment is tried
    before posting, and the refused one is skipped from then on."""
    foreign = foreign_copy(github_server)
    ours = github_server.add_comment(REPO, PR, f"{MARKER}\nthe verdict before")
    with caplog.at_level(logging.WARNING, logger="roofguard.github"):
        first = publish(github_server)
    assert (first.comment_action, first.comment_id) == ("updated", ours)
    assert f"edited comment {ours} instead" in warnings(caplog)[0]
    since = len(github_server.requests)
    second = publish(github_server, regression_verdict(conclusion=Conclusion.PASS))
    assert (second.comment_action, second.comment_id) == ("updated", ours)
    assert edits(github_server, foreign, since) == 0 and len(github_server.comments) == 2


@pytest.mark.parametrize(
    ("status", "error"),
    [(401, gh_exc.AuthenticationFailed), (502, GitHubUnavailable)],
    ids=["401", "5xx-past-retries"],
)
def test_other_errors_of_the_edit_still_fail_the_run(
    github_server: FakeGitHub, status: int, error: type[Exception]
) -> None:
    foreign = foreign_copy(github_server)
    for _ in range(2):
        github_server.fail_next("PATCH", rf"/issues/comments/{foreign}$", status)
    with pytest.raises(error):
        publish(github_server, max_attempts=2)
    assert not github_server.calls("POST") and len(github_server.comments) == 1


def test_a_read_only_token_is_still_reported_not_posted_around(github_server: FakeGitHub) -> None:
    foreign = foreign_copy(github_server)
    github_server.fail_next("PATCH", rf"/issues/comments/{foreign}$", 403, body=READ_ONLY)
    result = publish(github_server)
    assert not result.posted and "cannot write" in (result.reason or "")
    assert not github_server.calls("POST")


def test_roofguard_comment_succeeds_twice_with_one_comment_of_its_own(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    foreign = foreign_copy(github_server)
    verdict = tmp_path / "verdict.json"
    verdict.write_text(regression_verdict().model_dump_json())
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "GITHUB_TOKEN": "ghs_test"}
    env["GITHUB_API_URL"] = github_server.url
    cmd = [sys.executable, "-m", "service", "comment", "--repo", REPO, "--verdict", str(verdict)]
    runs = [subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)]
    runs.append(subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60))
    assert [p.returncode for p in runs] == [0, 0], runs[0].stderr + runs[1].stderr
    assert f"refused to edit comment {foreign}," in runs[0].stderr
    assert "comment created" in runs[0].stderr and "comment unchanged" in runs[1].stderr
    assert "refused" not in runs[1].stderr and len(github_server.comments) == 2
