"""The GitHub webhook: signatures, staleness, replays; re-posting and /roofguard accept.

Posting goes through the real github3.py client to the loopback fake GitHub.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from factories import make_kernel, make_run
from github_server import FakeGitHub
from svc_helpers import Service

from collectors.schema import RunRecord
from service.github.signatures import sign
from service.store.tables import BaselineAcceptance, Repository

SECRET = "whsec-test-0123456789"
HEAD = "feedfacecafe0123456789abcdef0123456789ab"
PR = 7
NIGHT = datetime(2026, 11, 1, 3, 0, tzinfo=UTC)


def now_iso(ago: timedelta = timedelta(seconds=5)) -> str:
    return (datetime.now(UTC) - ago).strftime("%Y-%m-%dT%H:%M:%SZ")


def deliver(
    service: Service,
    event: str,
    payload: dict,
    *,
    delivery: str | None = None,
    secret: str = SECRET,
    signature: str | None = None,
):
    body = json.dumps(payload).encode()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "Content-Type": "application/json",
        "X-Hub-Signature-256": signature or sign(secret, body),
    }
    return service.client.post("/api/v1/github/webhook", content=body, headers=headers)


def pr_event(repo: str, action: str = "reopened", sha: str = HEAD, ago=timedelta(seconds=5)):
    return {
        "action": action,
        "number": PR,
        "repository": {"full_name": repo},
        "pull_request": {"number": PR, "head": {"sha": sha}, "updated_at": now_iso(ago)},
    }


def comment_event(repo: str, body: str, association: str = "MEMBER", login: str = "alice"):
    return {
        "action": "created",
        "repository": {"full_name": repo},
        "issue": {"number": PR, "pull_request": {"url": "x"}, "updated_at": now_iso()},
        "comment": {
            "body": body,
            "author_association": association,
            "user": {"login": login},
            "updated_at": now_iso(),
        },
    }


@pytest.fixture
def gh_service(make_service, github_server: FakeGitHub) -> Service:
    return make_service(
        github_token="ghs_service_token",
        github_api_url=github_server.url,
        public_url="https://roofguard.example.com",
    )


def slow_pr(repo: str) -> RunRecord:
    """PR 7's run at ``HEAD``, whose three kernels are 60 % slower than ``seed``'s nights."""
    return make_run(
        repo=repo,
        commit=HEAD,
        kind="pr",
        pull_request=PR,
        branch="topic",
        timestamp=NIGHT + timedelta(days=9),
        kernels=[make_kernel(f"gemv_{i}", time_s=1.6e-3) for i in range(3)],
    )


def seed(service: Service, repo: str) -> int:
    """Eight steady nights and a PR whose three kernels are 60 % slower; the PR run's id."""
    token = service.token(repo)
    for night in range(8):
        run = make_run(
            repo=repo,
            commit=f"{night:07x}aa",
            timestamp=NIGHT + timedelta(days=night),
            kernels=[make_kernel(f"gemv_{i}", time_s=1e-3 * (1 + 0.002 * i)) for i in range(3)],
        )
        assert service.upload(run, token).status_code == 201
    result = service.upload(slow_pr(repo), token).json()
    assert result["verdict"]["conclusion"] == "fail"
    return int(result["run_id"])


def acceptances(service: Service, repo: str) -> list[dict]:
    """The acceptances of ``repo`` (other tests share the PostgreSQL database)."""
    table, repos = BaselineAcceptance.__table__, Repository.__table__
    stmt = (
        sa.select(table)
        .join(repos, repos.c.id == table.c.repo_id)
        .where(repos.c.name == repo)
        .order_by(table.c.id)
    )
    with service.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(stmt)]


def test_unsigned_forged_stale_and_replayed_deliveries_are_refused(service, repo) -> None:
    assert (
        deliver(service, "pull_request", pr_event(repo), signature="sha256=" + "0" * 64).status_code
        == 401
    )
    body = json.dumps(pr_event(repo)).encode()
    unsigned = service.client.post(
        "/api/v1/github/webhook",
        content=body,
        headers={"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-1"},
    )
    assert unsigned.status_code == 401 and "X-Hub-Signature-256" in unsigned.json()["detail"]
    assert deliver(service, "pull_request", pr_event(repo), secret="other").status_code == 401
    stale = deliver(service, "pull_request", pr_event(repo, ago=timedelta(hours=1)))
    assert stale.status_code == 401 and "stale" in stale.json()["detail"]
    first = deliver(service, "pull_request", pr_event(repo, "synchronize"), delivery="d-2")
    assert first.status_code == 202 and first.json()["outcome"] == "no-run"
    replay = deliver(service, "pull_request", pr_event(repo, "synchronize"), delivery="d-2")
    assert replay.status_code == 401 and "replayed" in replay.json()["detail"]
    assert deliver(service, "ping", {"zen": "hi"}).json()["outcome"] == "pong"


@pytest.mark.parametrize("event", ["push", "workflow_run", "check_suite", "installation"])
def test_an_event_roofguard_does_not_act_on_is_ignored_not_refused(service, repo, event) -> None:
    """A hook sent every event (an org's or an App's) must not fill GitHub's log with 401s."""
    payload = {"action": "completed", "repository": {"full_name": repo}}  # no time in it
    answer = deliver(service, event, payload, delivery="d-same")
    assert answer.status_code == 202, answer.text
    assert answer.json()["outcome"] == "ignored"
    assert f"event {event!r} is not handled" in answer.json()["detail"]
    assert deliver(service, event, payload, delivery="d-same").status_code == 202  # not a replay
    forged = deliver(service, event, payload, signature="sha256=" + "0" * 64)
    assert forged.status_code == 401  # still signed, or refused


def test_reopened_pr_gets_its_stored_verdict_posted_again(gh_service, repo, github_server) -> None:
    run_id = seed(gh_service, repo)
    answer = deliver(gh_service, "pull_request", pr_event(repo, "reopened"))
    assert answer.status_code == 202, answer.text
    assert answer.json() == {
        "outcome": "repost",
        "posted": False,
        "queued": True,
        "detail": f"verdict of run {run_id} to be posted again",
    }
    (comment,) = github_server.pr_comments(PR)
    assert f"https://roofguard.example.com/runs/{run_id}" in comment["body"]
    assert "gemv_0" in comment["body"]
    assert [c["conclusion"] for c in github_server.check_runs] == ["failure"]
    again = deliver(gh_service, "pull_request", pr_event(repo, "synchronize"))
    assert again.json()["outcome"] == "repost"
    assert len(github_server.pr_comments(PR)) == 1  # edited in place, not duplicated
    other = deliver(gh_service, "pull_request", pr_event(repo, "synchronize", sha="ab" * 20))
    assert other.json()["outcome"] == "no-run"


def test_maintainer_accepts_a_change_as_the_new_baseline(gh_service, repo, github_server) -> None:
    run_id = seed(gh_service, repo)
    sneaky = comment_event(repo, "/roofguard accept -- trust me", "CONTRIBUTOR", "eve")
    outsider = deliver(gh_service, "issue_comment", sneaky)
    assert (
        outsider.json()["outcome"] == "ignored" and "not a maintainer" in outsider.json()["detail"]
    )
    assert acceptances(gh_service, repo) == []
    command = "/roofguard accept gemv_0 -- new tiling, slower on purpose"
    answer = deliver(gh_service, "issue_comment", comment_event(repo, command))
    assert answer.status_code == 202 and answer.json()["outcome"] == "accepted", answer.text
    assert answer.json()["queued"] is True
    (row,) = acceptances(gh_service, repo)
    assert (row["kernel_key"], row["accepted_by"], row["reason"], row["run_id"]) == (
        "gemv_0",
        "alice",
        "new tiling, slower on purpose",
        run_id,
    )
    # Posted again: gemv_0 no longer fails, and the verdict says who accepted it and why.
    (comment,) = github_server.pr_comments(PR)
    assert "gemv\\_0\\' accepted as the new baseline by alice" in comment["body"]
    (row,) = [line for line in comment["body"].splitlines() if "| `gemv_0` |" in line]
    assert row.startswith("| ☑️ |") and "| accepted |" in row  # not shown as a new kernel
    assert github_server.check_runs[-1]["output"]["title"].startswith("FAIL: 2 regressions")
    with gh_service.engine.connect() as conn:  # posted again, it kept what it was judged under
        stmt = sa.text("SELECT judged_config FROM runs WHERE id = :id")
        assert conn.execute(stmt, {"id": run_id}).scalar_one() is not None
    everything = deliver(
        gh_service, "issue_comment", comment_event(repo, "/roofguard accept -- ok")
    )
    assert everything.json()["outcome"] == "accepted"
    accepted = sorted(r["kernel_key"] for r in acceptances(gh_service, repo))
    assert accepted == ["gemv_0", "gemv_1", "gemv_2"]  # the failing ones: gemv_0 was accepted
    assert len(github_server.pr_comments(PR)) == 1
    # Unblocked: every kernel accepted against the baseline it was judged on (the accept,
    # made after the run was measured, restarts the baselines of the runs after it).
    assert github_server.check_runs[-1]["conclusion"] == "success"


def test_without_github_credentials_the_action_is_recorded_but_not_posted(service, repo) -> None:
    seed(service, repo)
    answer = deliver(
        service, "issue_comment", comment_event(repo, "/roofguard accept gemv_1 -- ok")
    )
    assert answer.json()["outcome"] == "accepted" and answer.json()["posted"] is False
    assert "no GitHub credentials" in answer.json()["detail"]
    bad = deliver(service, "issue_comment", comment_event(repo, "/roofguard accept gemv_1"))
    assert bad.json()["outcome"] == "ignored" and "-- REASON" in bad.json()["detail"]


def test_an_unknown_command_is_answered_with_the_known_ones(service, repo) -> None:
    """It was answered "no /roofguard command in the comment", as if the line were not there."""
    seed(service, repo)
    answer = deliver(service, "issue_comment", comment_event(repo, "/roofguard rerun"))
    assert answer.status_code == 202 and answer.json()["outcome"] == "ignored"
    assert answer.json()["detail"] == (
        "unknown /roofguard command 'rerun'; known commands: /roofguard accept [KERNEL] -- REASON"
    )
    plain = deliver(service, "issue_comment", comment_event(repo, "LGTM"))
    assert plain.json()["detail"] == "no /roofguard command in the comment"
    assert acceptances(service, repo) == []


def test_upload_can_ask_the_service_to_post(gh_service, service, repo, github_server) -> None:
    pr = make_run(
        repo=repo,
        commit=HEAD,
        kind="pr",
        pull_request=PR,
        branch="topic",
        kernels=[make_kernel("gemv_0")],
    )
    token = gh_service.token(repo)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    body = pr.model_dump_json()
    answer = gh_service.client.post("/api/v1/runs?post=true", content=body, headers=headers).json()
    assert answer["posted"] is True and answer["post_detail"] is None
    (comment,) = github_server.pr_comments(PR)
    assert f"https://roofguard.example.com/runs/{answer['run_id']}" in comment["body"]
    github_server.fail_next("GET", r"/repos/.*/issues/\d+/comments", 422)
    again = gh_service.client.post("/api/v1/runs?post=true", content=body, headers=headers).json()
    assert again["created"] is False and again["posted"] is False
    assert again["post_detail"].startswith("GitHub failed")
    plain = service.upload(pr, service.token(repo))
    assert plain.json()["posted"] is False
    headers["Authorization"] = f"Bearer {service.token(repo)}"
    bare = service.client.post("/api/v1/runs?post=true", content=body, headers=headers).json()
    assert bare["post_detail"] == "the service has no GitHub credentials"


def test_a_replay_is_refused_by_every_replica(make_service, repo) -> None:
    first, second = make_service(), make_service()  # two processes on one store
    assert deliver(first, "pull_request", pr_event(repo), delivery="d-x").status_code == 202
    replay = deliver(second, "pull_request", pr_event(repo), delivery="d-x")
    assert replay.status_code == 401 and "replayed" in replay.json()["detail"]
    other = pr_event(repo, "synchronize")  # another event: another body
    assert deliver(second, "pull_request", other, delivery="d-y").status_code == 202
