"""Hostile webhook deliveries: replays under new ids, future dates, odd headers and payloads,
and a GitHub that hangs while the verdict is posted."""

from __future__ import annotations

import json
import logging
import threading
import time
from datetime import timedelta

import httpx
import pytest
from github_server import FakeGitHub
from svc_helpers import start_live
from test_api_webhook import PR, SECRET, comment_event, deliver, pr_event, seed

from service.github.signatures import sign

#: Words of an SQL statement or its parameters in a log line.
SQL_WORDS = ("SELECT", "INSERT", "[parameters", "webhook_deliveries")


def _no_sql_logged(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        text = record.getMessage() + (record.exc_text or "")
        assert not any(word in text for word in SQL_WORDS), text[:300]


def test_a_signed_body_replayed_under_a_new_delivery_id_is_refused(make_service, repo) -> None:
    first, second = make_service(), make_service()  # two replicas on one store
    seed(first, repo)
    accept = comment_event(repo, "/roofguard accept -- on purpose")
    assert deliver(first, "issue_comment", accept).json()["outcome"] == "accepted"
    for replica in (first, second):
        again = deliver(replica, "issue_comment", accept)  # a fresh delivery id each time
        assert again.status_code == 401, again.text
        assert again.json()["detail"] == "replayed delivery: this signed body was seen"


def test_an_event_dated_in_the_future_is_refused(service, repo) -> None:
    ahead = deliver(service, "pull_request", pr_event(repo, ago=-timedelta(hours=1)))
    assert ahead.status_code == 401 and "future" in ahead.json()["detail"]
    slightly = deliver(service, "pull_request", pr_event(repo, ago=-timedelta(seconds=20)))
    assert slightly.status_code == 202, "a clock a few seconds ahead is tolerated"


def test_a_malformed_delivery_id_is_refused_for_an_event_the_service_ignores(service) -> None:
    answer = deliver(service, "star", {"action": "created"}, delivery="../../etc")
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith("X-GitHub-Delivery: not a delivery id")


def test_a_huge_delivery_id_is_refused_without_logging_sql(service, repo, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    answer = deliver(service, "pull_request", pr_event(repo), delivery="d" * 10_000)
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith("X-GitHub-Delivery: not a delivery id")
    odd = deliver(service, "pull_request", pr_event(repo, "synchronize"), delivery="a'; --")
    assert odd.status_code == 422
    _no_sql_logged(caplog)


@pytest.mark.parametrize(
    "header", ["sha256=é".encode(), b"sha256=\xe9" + b"0" * 63], ids=["utf-8", "latin-1"]
)
def test_a_signature_with_non_ascii_letters_is_refused_not_a_crash(service, repo, header) -> None:
    """hmac.compare_digest raised a TypeError on it: an HTTP 500 with a traceback."""
    body = json.dumps(pr_event(repo)).encode()
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": "d-non-ascii",
        "Content-Type": "application/json",
        "X-Hub-Signature-256": header,
    }
    answer = service.client.post("/api/v1/github/webhook", content=body, headers=headers)
    assert answer.status_code == 401, answer.text
    assert answer.json()["detail"] == "X-Hub-Signature-256 is not a sha256= signature"


@pytest.mark.parametrize(
    ("event", "mutate", "named"),
    [
        ("pull_request", lambda p: p["pull_request"].pop("head"), "pull_request.head"),
        ("pull_request", lambda p: p["pull_request"].update(number="7"), "pull_request.number"),
        ("pull_request", lambda p: p["pull_request"].update(head=[1]), "pull_request.head.sha"),
        ("pull_request", lambda p: p["repository"].pop("full_name"), "repository.full_name"),
        ("issue_comment", lambda p: p["issue"].pop("number"), "issue.number"),
        ("issue_comment", lambda p: p["comment"].pop("user"), "comment.user"),
        ("issue_comment", lambda p: p["comment"].update(body="/roofguard accept a\0 -- x"), ""),
        # refused as a "stale delivery" (401): an operator went after the clock
        ("pull_request", lambda p: p.pop("pull_request"), "pull_request.updated_at is missing"),
        (
            "issue_comment",
            lambda p: [p[k].pop("updated_at") for k in ("comment", "issue")],
            "comment",
        ),
    ],
)
def test_payloads_with_missing_or_wrong_keys_get_422(
    service, repo, caplog, event, mutate, named
) -> None:
    caplog.set_level(logging.DEBUG)
    payload = (
        pr_event(repo) if event == "pull_request" else comment_event(repo, "/roofguard accept")
    )
    if event == "issue_comment":
        payload["comment"]["body"] = "/roofguard accept -- ok"
    mutate(payload)
    answer = deliver(service, event, payload)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith(f"webhook payload: {named}"), answer.json()
    _no_sql_logged(caplog)


def test_a_hanging_github_does_not_hold_the_webhook(
    make_service, repo, github_server: FakeGitHub
) -> None:
    gh_service = make_service(
        github_token="ghs_service_token",
        github_api_url=github_server.url,
        public_url="https://roofguard.example.com",
    )
    run_id = seed(gh_service, repo)
    gate, handle = threading.Event(), github_server.handle

    def stalled(req):  # GitHub answers only once the test lets it (or after 30 s)
        gate.wait(30)
        return handle(req)

    github_server.handle = stalled  # type: ignore[method-assign]
    live = start_live(gh_service.app)
    try:
        body = pr_event(repo, "reopened")
        raw = httpx.Request("POST", "/", json=body).content
        headers = {
            "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": "d-hang",
            "Content-Type": "application/json",
            "X-Hub-Signature-256": sign(SECRET, raw),
        }
        answer = httpx.post(f"{live.url}/api/v1/github/webhook", content=raw, headers=headers)
        assert not gate.is_set() and not github_server.pr_comments(PR), "answered before posting"
        assert answer.status_code == 202 and answer.json()["queued"] is True
        assert answer.json()["detail"] == f"verdict of run {run_id} to be posted again"
        gate.set()
        deadline = time.monotonic() + 20
        while not github_server.pr_comments(PR) and time.monotonic() < deadline:
            time.sleep(0.05)
        (comment,) = github_server.pr_comments(PR)
        assert f"https://roofguard.example.com/runs/{run_id}" in comment["body"]
    finally:
        gate.set()
        live.stop()
