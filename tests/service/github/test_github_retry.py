"""Retries, rate limits, read-only tokens, App auth and the digest issue (fake GitHub)."""

from __future__ import annotations

import pytest
from github_server import FakeClock, FakeGitHub, github_server_fixture  # noqa: F401
from verdict_factory import regression_verdict

from service.errors import BadInput
from service.github.auth import GitHubCredentials
from service.github.client import make_client, publish_verdict
from service.github.retry import GitHubUnavailable, RetryPolicy
from service.render.markdown import render_verdict

REPO, PR = "acme/kernels", 7
SHA = "89abcdef0123456789abcdef0123456789abcdef"
COMMENTS = rf"/repos/{REPO}/issues/{PR}/comments$"


def run(server: FakeGitHub, clock: FakeClock, **kw: object):
    client = make_client(GitHubCredentials(token="ghs_x"), api_url=server.url, clock=clock, **kw)  # type: ignore[arg-type]
    verdict = regression_verdict(pr=PR)
    return publish_verdict(
        verdict, render_verdict(verdict), repo=REPO, pr=PR, sha=SHA, client=client
    )


@pytest.mark.parametrize("lost_response", [False, True], ids=["not-created", "created-but-500"])
def test_500_then_201_leaves_one_comment(github_server: FakeGitHub, lost_response: bool) -> None:
    clock = FakeClock()
    github_server.fail_next("POST", COMMENTS, 500, apply=lost_response)
    result = run(github_server, clock)
    assert result.posted and len(github_server.pr_comments(PR)) == 1
    assert clock.sleeps == [2.0]
    posts = [p for m, p in github_server.calls("POST") if p.endswith("/comments")]
    # after a lost response the re-listing finds the comment and edits it instead of re-creating
    assert len(posts) == (1 if lost_response else 2)
    # after a lost response the comment found holds this body already: no edit is sent, and
    # it is the comment this run created (it said "unchanged")
    assert result.comment_action == "created"


def test_403_rate_limit_waits_until_reset_then_succeeds(github_server: FakeGitHub) -> None:
    clock = FakeClock()
    reset = int(clock.now()) + 37
    github_server.fail_next(
        "POST",
        COMMENTS,
        403,
        headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)},
        body={"message": "API rate limit exceeded for installation ID 1."},
    )
    result = run(github_server, clock)
    assert result.posted and clock.sleeps == [38.0] and len(github_server.pr_comments(PR)) == 1


def test_retry_after_is_honoured_on_403_and_429(github_server: FakeGitHub) -> None:
    clock = FakeClock()
    secondary = {"message": "You have exceeded a secondary rate limit."}
    github_server.fail_next(
        "GET", rf"/issues/{PR}$", 403, headers={"Retry-After": "12"}, body=secondary
    )
    github_server.fail_next("POST", r"/check-runs$", 429, headers={"Retry-After": "5"})
    result = run(github_server, clock)
    assert result.check_kind == "check-run" and clock.sleeps == [12.0, 5.0]


def test_secondary_limit_without_headers_waits_a_minute(github_server: FakeGitHub) -> None:
    clock = FakeClock()
    github_server.fail_next("POST", COMMENTS, 403, body={"message": "secondary rate limit hit"})
    assert run(github_server, clock).posted and clock.sleeps == [60.0]


def test_total_wait_is_bounded(github_server: FakeGitHub) -> None:
    clock = FakeClock()
    far = str(int(clock.now()) + 3600)
    github_server.fail_next(
        "POST", COMMENTS, 403, headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": far}
    )
    with pytest.raises(GitHubUnavailable, match="sticky comment"):
        run(github_server, clock, retry=RetryPolicy(max_total_s=600))
    assert clock.sleeps == [] and not github_server.pr_comments(PR)


def test_plain_403_is_not_retried(github_server: FakeGitHub) -> None:
    from github3.exceptions import ForbiddenError

    github_server.fail_next("POST", COMMENTS, 403, body={"message": "Must have admin rights"})
    clock = FakeClock()
    with pytest.raises(ForbiddenError):
        run(github_server, clock)
    assert clock.sleeps == []


def test_fork_token_degrades_without_failing(github_server: FakeGitHub) -> None:
    github_server.read_only = True
    result = run(github_server, FakeClock())
    assert not result.posted and result.conclusion == "failure"
    assert "read-only GITHUB_TOKEN" in (result.reason or "") and "fork" in (result.reason or "")
    assert not github_server.pr_comments(PR) and github_server.calls("POST") == [
        ("POST", f"/repos/{REPO}/issues/{PR}/comments")
    ]


def test_github_app_installation_login(github_server: FakeGitHub, tmp_path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (tmp_path / "app.pem").write_bytes(pem)
    env = {
        "ROOFGUARD_GITHUB_APP_ID": "12345",
        "ROOFGUARD_GITHUB_APP_INSTALLATION_ID": "678",
        "ROOFGUARD_GITHUB_APP_PRIVATE_KEY_PATH": str(tmp_path / "app.pem"),
        "ROOFGUARD_GITHUB_APP_SLUG": "roofguard",
    }
    creds = GitHubCredentials.from_env(env)
    assert creds.app_id == "12345" and creds.bot_login == "roofguard[bot]"
    github_server.logins["ghs_installation_678"] = "roofguard[bot]"
    client = make_client(creds, api_url=github_server.url, clock=FakeClock())
    verdict = regression_verdict(pr=PR)
    first = publish_verdict(
        verdict, render_verdict(verdict), repo=REPO, pr=PR, sha=SHA, client=client
    )
    again = publish_verdict(
        verdict, render_verdict(verdict), repo=REPO, pr=PR, sha=SHA, client=client
    )
    token_req = github_server.requests[0]
    assert token_req.path == "/app/installations/678/access_tokens"
    assert token_req.headers["authorization"].startswith("Bearer ")
    assert github_server.requests[1].headers["authorization"] == "token ghs_installation_678"
    assert (first.comment_action, again.comment_action) == ("created", "unchanged")


@pytest.mark.parametrize(
    ("env", "field"),
    [
        ({}, "GITHUB_TOKEN"),
        ({"ROOFGUARD_GITHUB_APP_ID": "1"}, "ROOFGUARD_GITHUB_APP_SLUG"),
        (
            {"ROOFGUARD_GITHUB_APP_ID": "1", "ROOFGUARD_GITHUB_APP_SLUG": "s"},
            "ROOFGUARD_GITHUB_APP_PRIVATE_KEY",
        ),
        (
            {
                "ROOFGUARD_GITHUB_APP_ID": "1",
                "ROOFGUARD_GITHUB_APP_SLUG": "s",
                "ROOFGUARD_GITHUB_APP_PRIVATE_KEY": "k",
                "ROOFGUARD_GITHUB_APP_INSTALLATION_ID": "x",
            },
            "ROOFGUARD_GITHUB_APP_INSTALLATION_ID",
        ),
    ],
)
def test_incomplete_credentials_name_the_variable(env: dict[str, str], field: str) -> None:
    with pytest.raises(BadInput, match=field):
        GitHubCredentials.from_env(env)


def test_upsert_issue_updates_instead_of_duplicating(github_server: FakeGitHub) -> None:
    client = make_client(GitHubCredentials(token="t"), api_url=github_server.url, clock=FakeClock())
    title, labels = "roofguard weekly digest 2026-W48", ["perf-digest"]
    first = client.upsert_issue(REPO, title, "week one", labels)
    github_server.issues[99] = {
        "title": title,
        "body": "spoof " + github_server.issues[1]["body"],
        "labels": labels,
        "state": "open",
        "login": "mallory",
    }
    second = client.upsert_issue(REPO, title, "week one, rerun", labels)
    other = client.upsert_issue(REPO, "roofguard weekly digest 2026-W49", "next week", labels)
    assert first.number == second.number == 1 and other.number == 100
    assert github_server.issues[1]["body"].endswith("week one, rerun")
    assert github_server.issues[1]["body"].startswith("<!-- roofguard:issue title=")
    assert github_server.issues[99]["body"].startswith("spoof")
    assert ("PATCH", f"/repos/{REPO}/issues/1") in github_server.calls()
    listing = [
        r for r in github_server.requests if r.method == "GET" and r.path.endswith("/issues")
    ]
    assert listing[0].query["labels"] == ["perf-digest"] and listing[0].query["state"] == ["open"]


def test_comment_posted_but_check_and_status_refused(github_server: FakeGitHub) -> None:
    from github_server import READ_ONLY

    github_server.fail_next("POST", r"/check-runs$", 403, body=READ_ONLY)
    github_server.fail_next("POST", r"/statuses/", 403, body=READ_ONLY)
    result = run(github_server, FakeClock())
    assert result.posted and result.comment_action == "created" and result.check_kind is None
    assert "comment posted, but commit status" in (result.reason or "")
    assert len(github_server.pr_comments(PR)) == 1
