"""publish_verdict with the real github3.py client against the local fake GitHub."""

from __future__ import annotations

import pytest
from github_server import FakeClock, FakeGitHub, github_server_fixture  # noqa: F401
from verdict_factory import make_kernel, make_verdict, regression_verdict

from rules.verdict import Conclusion, KernelStatus
from service.github.auth import GitHubCredentials
from service.github.client import GitHubClient, make_client, publish_verdict
from service.github.policy import CheckKind, FailurePolicy, PublishPolicy
from service.github.retry import RetryPolicy
from service.render.markdown import render_verdict, verdict_marker

REPO, PR = "acme/kernels", 42
SHA = "0123456789abcdef0123456789abcdef01234567"


def client_for(server: FakeGitHub, clock: FakeClock | None = None, **kw: object) -> GitHubClient:
    creds = GitHubCredentials(token="ghs_actions_token")
    return make_client(creds, api_url=server.url, clock=clock or FakeClock(), **kw)  # type: ignore[arg-type]


def publish(server: FakeGitHub, verdict=None, *, policy=None, clock=None, sha=SHA):
    verdict = verdict or regression_verdict()
    return publish_verdict(
        verdict,
        render_verdict(verdict),
        repo=REPO,
        pr=PR,
        sha=sha,
        client=client_for(server, clock),
        policy=policy,
    )


def test_first_run_creates_one_comment_second_edits_it(github_server: FakeGitHub) -> None:
    first = publish(github_server)
    assert (first.posted, first.comment_action, first.check_kind) == (True, "created", "check-run")
    assert len(github_server.pr_comments(PR)) == 1
    assert github_server.calls("POST")[0] == ("POST", f"/repos/{REPO}/issues/{PR}/comments")

    passing = regression_verdict(conclusion=Conclusion.PASS)
    second = publish(github_server, passing)
    comments = github_server.pr_comments(PR)
    assert (second.comment_action, second.comment_id) == ("updated", first.comment_id)
    assert len(comments) == 1 and comments[0]["body"] == render_verdict(passing)
    assert ("PATCH", f"/repos/{REPO}/issues/comments/{first.comment_id}") in github_server.calls()
    assert [c["conclusion"] for c in github_server.check_runs] == ["failure", "success"]


def test_request_shapes_are_what_github_expects(github_server: FakeGitHub) -> None:
    publish(github_server)
    posted = [r for r in github_server.requests if r.method == "POST"]
    assert posted[0].json["body"].startswith(verdict_marker(REPO, PR, "H100-SXM5"))
    run = posted[1].json
    assert run["name"] == "roofguard (H100-SXM5)" and run["head_sha"] == SHA
    assert run["status"] == "completed" and run["conclusion"] == "failure"
    assert run["output"]["title"].startswith("FAIL: 1 regression")
    assert all(
        r.headers["authorization"] == "token ghs_actions_token" for r in github_server.requests
    )


def test_another_users_comment_with_the_marker_is_left_alone(github_server: FakeGitHub) -> None:
    marker = verdict_marker(REPO, PR, "H100-SXM5")
    spoof = github_server.add_comment(REPO, PR, f"{marker}\nlooks official", login="mallory")
    result = publish(github_server)
    assert result.comment_action == "created" and result.comment_id != spoof
    assert github_server.comments[spoof]["body"] == f"{marker}\nlooks official"
    assert ("PATCH", f"/repos/{REPO}/issues/comments/{spoof}") not in github_server.calls()


def test_another_apps_later_copy_of_the_marker_is_left_alone(github_server: FakeGitHub) -> None:
    """With GITHUB_TOKEN (no login to learn) any App's bot may be us: a mirroring App's newer
    comment carrying the marker was edited, and ours was left stale."""
    marker = verdict_marker(REPO, PR, "H100-SXM5")
    ours = github_server.add_comment(REPO, PR, f"{marker}\nthe verdict before")
    copy = github_server.add_comment(REPO, PR, f"{marker}\nmirrored", login="mirror-bot[bot]")
    result = publish(github_server)
    assert (result.comment_action, result.comment_id) == ("updated", ours)
    assert github_server.comments[copy]["body"] == f"{marker}\nmirrored"
    assert ("PATCH", f"/repos/{REPO}/issues/comments/{copy}") not in github_server.calls()


def test_one_comment_per_device(github_server: FakeGitHub) -> None:
    publish(github_server)
    publish(github_server, regression_verdict(device="A100-SXM4-80GB"))
    devices = sorted(c["body"].splitlines()[0] for c in github_server.pr_comments(PR))
    assert devices == [
        verdict_marker(REPO, PR, "A100-SXM4-80GB"),
        verdict_marker(REPO, PR, "H100-SXM5"),
    ]


@pytest.mark.parametrize("h100_first", [True, False], ids=["h100-first", "a100-first"])
def test_a_kernel_named_like_another_devices_marker_leaves_both_comments(
    github_server: FakeGitHub, h100_first: bool
) -> None:
    """The marker is matched on the first line only: anywhere in the body, a kernel name
    carrying the A100 comment's marker made the A100 verdict edit (or delete) the H100 one."""
    a100 = verdict_marker(REPO, PR, "A100-SXM4-80GB")
    h100 = make_verdict([make_kernel(a100, status=KernelStatus.REGRESSED)])
    other = regression_verdict(device="A100-SXM4-80GB")
    for verdict in [h100, other, other] if h100_first else [other, h100, other]:
        publish(github_server, verdict)
    firsts = sorted(c["body"].splitlines()[0] for c in github_server.pr_comments(PR))
    assert firsts == [a100, verdict_marker(REPO, PR, "H100-SXM5")]


def test_duplicates_from_a_race_are_healed(github_server: FakeGitHub) -> None:
    marker = verdict_marker(REPO, PR, "H100-SXM5")
    older = github_server.add_comment(REPO, PR, f"{marker}\nold 1")
    newer = github_server.add_comment(REPO, PR, f"{marker}\nold 2")
    result = publish(github_server)
    assert result.comment_id == newer and list(github_server.comments) == [newer]
    assert ("DELETE", f"/repos/{REPO}/issues/comments/{older}") in github_server.calls()


def test_comments_are_found_on_later_pages(github_server: FakeGitHub) -> None:
    github_server.per_page_cap = 2
    for i in range(5):
        github_server.add_comment(REPO, PR, f"chatter {i}", login="octocat")
    first = publish(github_server)
    second = publish(github_server)
    assert second.comment_id == first.comment_id and len(github_server.pr_comments(PR)) == 6
    assert any(r.query.get("page") == ["3"] for r in github_server.requests)


@pytest.mark.parametrize(
    ("conclusion", "failure", "expected"),
    [
        (Conclusion.FAIL, FailurePolicy.ON_REGRESSION, "failure"),
        (Conclusion.FAIL, FailurePolicy.NEVER, "neutral"),
        (Conclusion.WARN, FailurePolicy.ON_REGRESSION, "neutral"),
        (Conclusion.WARN, FailurePolicy.ON_WARNING, "failure"),
        (Conclusion.PASS, FailurePolicy.ON_WARNING, "success"),
    ],
)
def test_check_run_conclusion_follows_the_failure_policy(
    github_server, conclusion, failure, expected
):
    result = publish(
        github_server,
        regression_verdict(conclusion=conclusion),
        policy=PublishPolicy(failure=failure),
    )
    assert result.conclusion == expected
    assert [c["conclusion"] for c in github_server.check_runs] == [expected]


def test_untrusted_runner_gives_a_neutral_check(github_server: FakeGitHub) -> None:
    result = publish(github_server, regression_verdict(trusted=False))
    assert result.conclusion == "neutral" and github_server.check_runs[0]["conclusion"] == "neutral"


def test_status_when_check_runs_are_refused(github_server: FakeGitHub) -> None:
    github_server.fail_next(
        "POST", r"/check-runs$", 403, body={"message": "You must authenticate via a GitHub App."}
    )
    result = publish(github_server)
    assert result.check_kind == "status" and not github_server.check_runs
    (status,) = github_server.statuses
    assert status == {
        "sha": SHA,
        "state": "failure",
        "context": "roofguard (H100-SXM5)",
        "description": "FAIL: 1 regression, 1 warning on H100-SXM5",
    }


def test_status_on_request_and_neutral_passes(github_server: FakeGitHub) -> None:
    policy = PublishPolicy(check=CheckKind.STATUS, failure=FailurePolicy.NEVER)
    result = publish(github_server, policy=policy)
    assert result.conclusion == "neutral" and github_server.statuses[0]["state"] == "success"
    assert not github_server.calls("POST")[1][1].endswith("check-runs")


def test_no_sha_posts_only_the_comment(github_server: FakeGitHub) -> None:
    result = publish(github_server, sha=None)
    assert result.check_kind is None and github_server.calls("POST") == [
        ("POST", f"/repos/{REPO}/issues/{PR}/comments")
    ]


def test_enterprise_root_url_gets_api_v3(github_server: FakeGitHub) -> None:
    from service.github.auth import resolve_api_url

    api = resolve_api_url(github_server.url, {})
    assert api == github_server.url + "/api/v3"
    client = make_client(GitHubCredentials(token="t"), api_url=api, clock=FakeClock())
    verdict = make_verdict()
    result = publish_verdict(
        verdict, render_verdict(verdict), repo=REPO, pr=PR, sha=None, client=client
    )
    assert result.comment_action == "created"
    assert (
        resolve_api_url(None, {"GITHUB_API_URL": "https://ghe.corp/api/v3/"})
        == "https://ghe.corp/api/v3"
    )
    assert resolve_api_url(None, {}) == "https://api.github.com"


def test_bounded_retry_policy_is_used(github_server: FakeGitHub) -> None:
    clock = FakeClock()
    for _ in range(3):
        github_server.fail_next("GET", r"/issues/42$", 502)
    client = client_for(github_server, clock, retry=RetryPolicy(max_attempts=3))
    from service.github.retry import GitHubUnavailable

    verdict = make_verdict()
    with pytest.raises(GitHubUnavailable, match="after 3 attempt"):
        publish_verdict(verdict, "x", repo=REPO, pr=PR, sha=None, client=client)
    assert clock.sleeps == [2.0, 4.0] and not github_server.pr_comments(PR)
