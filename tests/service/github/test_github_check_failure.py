"""A check run that fails after the sticky comment was posted: what the job is told."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from github_server import FakeClock, FakeGitHub, github_server_fixture  # noqa: F401
from test_github_cli import PR, REPO, actions_env, comment, outputs, write_verdict
from verdict_factory import regression_verdict

from service.github.publish import PostOptions, PostTarget, post_verdict_from_env
from service.github.retry import GitHubFailed

SHA = "e" * 40
CHECK = f"check run on commit {SHA[:12]} of {REPO}"
NO_COMMIT = {
    "message": "Validation Failed",
    "errors": [{"resource": "CheckRun", "message": f"No commit found for SHA: {SHA}"}],
}


def assert_the_comment_is_reported(server: FakeGitHub, tmp: Path, error: str, out: str) -> None:
    """The outputs, the error, the warning and the job summary name the comment and the check."""
    (posted,) = server.pr_comments(PR)
    assert not server.check_runs
    assert error.startswith(f"comment posted ({posted['html_url']}), but not the {CHECK}: ")
    assert f"PR #{PR}" not in error, error
    assert f"::warning title=roofguard::comment posted ({posted['html_url']})" in out
    assert {k: v for k, v in outputs(tmp / "output").items() if k != "conclusion"} == {
        "should-fail": "true",
        "posted": "true",
        "comment-url": posted["html_url"],
        "check": "",
    }
    summary = (tmp / "summary.md").read_text()
    assert "could not post" not in summary and CHECK in summary
    assert not (tmp / "artifact").exists()  # the verdict is on the PR: no fallback copy


def test_a_check_run_refused_after_the_comment_names_the_check_not_the_pr(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    """The comment was posted, yet the outputs said posted=false with no comment-url, the job
    summary "could not post to the pull request" and the error "posting to PR #42"."""
    github_server.fail_next("POST", r"/check-runs$", 422, body=NO_COMMIT)
    env = actions_env(github_server, tmp_path)
    path = write_verdict(tmp_path, regression_verdict())
    proc = comment(env, "--repo", REPO, "--verdict", str(path), "--sha", SHA)
    assert proc.returncode == 2, proc.stderr  # GitHub failed: an error, as documented
    error = proc.stderr.strip().splitlines()[-1].removeprefix("roofguard: error: ")
    assert error.endswith(f"422 Validation Failed: No commit found for SHA: {SHA}"), error
    assert_the_comment_is_reported(github_server, tmp_path, error, proc.stdout)


def test_github_down_past_the_retries_for_the_check_run_keeps_the_comment(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    for _ in range(5):  # every attempt the retries make
        github_server.fail_next("POST", r"/check-runs$", 502)
    env = actions_env(github_server, tmp_path)
    out = io.StringIO()
    target, options = PostTarget(REPO, PR, SHA), PostOptions(clock=FakeClock())
    with pytest.raises(GitHubFailed) as failed:
        post_verdict_from_env(regression_verdict(), target, options, env=env, out=out)
    assert "failed after 5 attempt(s): 502" in str(failed.value)
    assert_the_comment_is_reported(github_server, tmp_path, str(failed.value), out.getvalue())


def test_a_posted_check_is_named_in_the_outputs(github_server: FakeGitHub, tmp_path: Path) -> None:
    env = actions_env(github_server, tmp_path)
    path = write_verdict(tmp_path, regression_verdict())
    proc = comment(env, "--repo", REPO, "--verdict", str(path), "--sha", SHA)
    assert proc.returncode == 0, proc.stderr
    out = outputs(tmp_path / "output")
    assert (out["posted"], out["check"]) == ("true", "check-run")
    assert not (tmp_path / "summary.md").exists()
