"""``/roofguard accept`` on a repository measured on several cards, through signed deliveries.

An acceptance restarts the kernel's baseline on its card. The nightly merged after it was
judged against the other card's history (its own card's, cut by the acceptance, read as too
young), or as a new kernel on one card; and a PR checked on two cards could only be accepted
on the card whose run was uploaded last.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from factories import make_kernel, make_run
from github_server import FakeGitHub
from svc_helpers import Service
from test_api_webhook import PR, acceptances, comment_event, deliver, pr_event, seed

from collectors.schema import KernelRecord, RunRecord

H100, H200, A100 = "NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA A100-SXM4-80GB"
#: Each card's datasheet tensor bf16 and fp32 peaks and dram bandwidth.
PEAKS = {
    H100: (989.4e12, 66.9e12, 3.35e12),
    H200: (989.4e12, 66.9e12, 4.8e12),
    A100: (312e12, 19.5e12, 2.039e12),
}
GEMM_FLOPS = 2e12
#: Before the first acceptance: the runs measured before it are in the past.
START = datetime.now(UTC).replace(microsecond=0) - timedelta(days=40)


def kernels(card: str, *, fell: bool = False, slow_copy: float = 1.0) -> list[KernelRecord]:
    """A GEMM at 70% of its tensor roof (of fp32's once ``fell``), a copy at 80% of dram."""
    tensor, fp32, dram = PEAKS[card]
    precision, peak = ("fp32", fp32) if fell else ("tensor_bf16", tensor)
    return [
        make_kernel(
            "gemm", flops={precision: GEMM_FLOPS}, dram_bytes=1e8, time_s=GEMM_FLOPS / peak / 0.7
        ),
        make_kernel("copy", flops={}, dram_bytes=2e9, time_s=slow_copy * 2e9 / dram / 0.8),
    ]


def night(repo: str, card: str, when: datetime, *, fell: bool = False, **kw: object) -> RunRecord:
    """A nightly run of ``repo`` on ``card`` (its own commit), unless ``kw`` says otherwise."""
    fields = {"commit": f"{when:%m%d%H%M%S}{card[-4:]}", "timestamp": when} | kw
    return make_run(repo=repo, device=card, kernels=kernels(card, fell=fell), **fields)


def pr_run(repo: str, card: str, **kernel_changes: object) -> RunRecord:
    """PR 7's run on ``card``, a day after the nights of ``two_cards``."""
    return make_run(
        repo=repo,
        device=card,
        commit="feedface",
        branch="topic",
        kind="pr",
        pull_request=PR,
        timestamp=START + timedelta(days=9, hours=2),
        kernels=kernels(card, **kernel_changes),
    )


def upload(service: Service, run: RunRecord) -> dict:
    answer = service.upload(run, service.token(repo=run.repo or ""))
    assert answer.status_code in (200, 201), answer.text
    return answer.json()["verdict"]


def the(verdict: dict, key: str) -> dict:
    (row,) = [k for k in verdict["kernels"] if k["key"] == key]
    return row


def h100_history_then_h200(service: Service, repo: str) -> None:
    """Ten H100 nights, then eight H200 nights (the runners moved, one stayed behind)."""
    for n in range(10):
        upload(service, night(repo, H100, START + timedelta(days=n)))
    for n in range(10, 18):
        upload(service, night(repo, H200, START + timedelta(days=n, hours=1)))


def test_an_accepted_kernel_restarts_on_its_own_card_not_on_another(service, repo) -> None:
    h100_history_then_h200(service, repo)
    pr = night(repo, H100, START + timedelta(days=19), fell=True, kind="pr", pull_request=PR)
    judged = upload(service, pr.model_copy(update={"branch": "topic", "commit": "feedface"}))
    assert judged["conclusion"] == "fail" and the(judged, "gemm")["status"] == "regressed"
    answer = deliver(service, "issue_comment", comment_event(repo, "/roofguard accept -- intended"))
    assert answer.json()["outcome"] == "accepted", answer.text
    # The merged nights: the GEMM's H100 history restarts at the acceptance, on the H100.
    for after in range(4):
        when = datetime.now(UTC) + timedelta(seconds=10 * (after + 1))
        verdict = upload(service, night(repo, H100, when, fell=True))
        gemm = the(verdict, "gemm")
        assert verdict["conclusion"] == "pass", verdict["findings"]
        assert not [n for n in verdict["notes"] if "judged against H200" in n], verdict["notes"]
        assert verdict["baseline"]["device"] == "H100-SXM5"
        assert gemm["expected_time_ratio"] is None  # no ratio the two cards' roofs predict
        if after < 3:  # fewer runs since than the gate needs: restarted, not new
            assert gemm["status"] == "accepted"
            (note,) = [n for n in verdict["notes"] if n.startswith("restarted by")]
            assert "'gemm' accepted as the new baseline on H100-SXM5 by alice: intended" in note
        else:  # judged on the three H100 nights since: the accepted level, unchanged
            assert gemm["status"] == "unchanged"
            assert gemm["baseline"]["n"] == 3 and gemm["baseline"]["device"] is None
            assert not [n for n in verdict["notes"] if n.startswith("restarted by")]


def test_the_nightly_after_an_acceptance_calls_no_kernel_new(service, repo) -> None:
    """On one card: accepted kernels have no baseline left, and they are no new kernels."""
    seed(service, repo)
    answer = deliver(service, "issue_comment", comment_event(repo, "/roofguard accept -- ok"))
    assert answer.json()["outcome"] == "accepted", answer.text
    merged = make_run(
        repo=repo,
        commit="feedfacecafe0123456789abcdef0123456789ab",
        timestamp=datetime.now(UTC) + timedelta(seconds=5),
        kernels=[make_kernel(f"gemv_{i}", time_s=1.6e-3) for i in range(3)],
    )
    verdict = upload(service, merged)
    assert [k["status"] for k in verdict["kernels"]] == ["accepted"] * 3
    assert verdict["findings"] == [] and verdict["conclusion"] == "pass"
    (note,) = [n for n in verdict["notes"] if n.startswith("restarted by")]
    assert "'gemv_0', 'gemv_1', 'gemv_2' accepted as the new baseline" in note
    assert "by alice: ok; judged again once 3 main runs have been measured since" in note
    assert len(acceptances(service, repo)) == 3


@pytest.fixture
def gh_service(make_service, github_server: FakeGitHub) -> Service:
    return make_service(github_token="ghs_service_token", github_api_url=github_server.url)


def two_cards(service: Service, repo: str) -> tuple[int, int]:
    """Eight nights on an A100 and an H100, then PR 7 on both: the GEMM fell off the tensor
    cores on the A100 (uploaded first), the copy is 60% slower on the H100 (uploaded last).

    Returns:
        The PR's A100 run and H100 run.
    """
    for n in range(8):
        upload(service, night(repo, A100, START + timedelta(days=n)))
        upload(service, night(repo, H100, START + timedelta(days=n, hours=1)))
    token = service.token(repo)
    on_a100 = service.upload(pr_run(repo, A100, fell=True), token).json()
    on_h100 = service.upload(pr_run(repo, H100, slow_copy=1.6), token).json()
    assert the(on_a100["verdict"], "gemm")["status"] == "regressed"
    assert the(on_h100["verdict"], "copy")["status"] == "regressed"
    assert the(on_h100["verdict"], "gemm")["status"] == "unchanged"
    return int(on_a100["run_id"]), int(on_h100["run_id"])


def accept(service: Service, repo: str, body: str, comment_id: int) -> dict:
    """A maintainer's comment ``body`` (its own comment: the same text is no replay)."""
    payload = comment_event(repo, body)
    payload["comment"]["id"] = comment_id
    answer = deliver(service, "issue_comment", payload)
    assert answer.status_code == 202, answer.text
    assert "None" not in answer.json()["detail"]
    return answer.json()


def accepted(service: Service, repo: str) -> list[tuple[str, int]]:
    return [(row["kernel_key"], row["run_id"]) for row in acceptances(service, repo)]


def test_accept_applies_to_each_cards_newest_run_of_the_pr(gh_service, repo, github_server) -> None:
    on_a100, on_h100 = two_cards(gh_service, repo)
    named = accept(gh_service, repo, "/roofguard accept gemm -- fp32 on purpose", 1)
    assert named["outcome"] == "accepted"
    assert named["detail"] == f"alice accepted 'gemm' on A100-SXM4-80GB (run {on_a100})"
    assert accepted(gh_service, repo) == [("gemm", on_a100)]  # where it regressed, not the H100
    (comment,) = github_server.pr_comments(PR)  # the A100's verdict, posted again
    assert "gemm\\' accepted as the new baseline by alice" in comment["body"]
    again = accept(gh_service, repo, "/roofguard accept gemm -- fp32 on purpose", 2)
    assert again["detail"] == (
        f"nothing new accepted by alice; already accepted: 'gemm' on A100-SXM4-80GB (run {on_a100})"
    )
    assert accepted(gh_service, repo) == [("gemm", on_a100)]  # the same accept stores nothing
    every = accept(gh_service, repo, "/roofguard accept -- both intended", 3)
    assert every["detail"] == (
        f"alice accepted 'copy' on H100-SXM5 (run {on_h100}); "
        f"already accepted: 'gemm' on A100-SXM4-80GB (run {on_a100})"
    )
    assert accepted(gh_service, repo) == [("gemm", on_a100), ("copy", on_h100)]
    comments = github_server.pr_comments(PR)
    cards = sorted(c["body"].split(" device=")[1].split(" ")[0] for c in comments)
    assert cards == ["A100-SXM4-80GB", "H100-SXM5"]  # one verdict per card, each posted again
    assert "failure" not in [c["conclusion"] for c in github_server.check_runs[-2:]]
    none = accept(gh_service, repo, "/roofguard accept softmax -- x", 4)
    assert none["outcome"] == "ignored"
    assert none["detail"] == (
        f"nothing to accept in PR #{PR}: no kernel 'softmax' regressed in its newest run on any "
        f"card (run {on_h100} on H100-SXM5, run {on_a100} on A100-SXM4-80GB)"
    )


def test_a_failure_on_the_card_uploaded_first_can_be_accepted(service, repo) -> None:
    for n in range(8):
        upload(service, night(repo, A100, START + timedelta(days=n)))
        upload(service, night(repo, H100, START + timedelta(days=n, hours=1)))
    on_a100 = upload(service, pr_run(repo, A100, fell=True))
    assert on_a100["conclusion"] == "fail"
    assert upload(service, pr_run(repo, H100))["conclusion"] == "pass"  # uploaded last
    answer = accept(service, repo, "/roofguard accept -- fp32 on purpose", 1)
    assert answer["outcome"] == "accepted"
    assert answer["detail"].startswith("alice accepted 'gemm' on A100-SXM4-80GB (run ")
    assert [key for key, _ in accepted(service, repo)] == ["gemm"]


def test_a_reopened_pr_gets_each_cards_verdict_posted(gh_service, repo, github_server) -> None:
    on_a100, on_h100 = two_cards(gh_service, repo)
    answer = deliver(gh_service, "pull_request", pr_event(repo, "reopened", sha="feedface"))
    assert answer.json()["detail"] == (
        f"verdicts of runs {on_h100}, {on_a100} (one per card) to be posted again"
    )
    assert len(github_server.pr_comments(PR)) == 2
    assert [c["conclusion"] for c in github_server.check_runs] == ["failure", "failure"]
