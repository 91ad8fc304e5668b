"""``/roofguard accept`` on a repository measured on several cards, through signed deliveries.

An acceptance restarts the kernel's baseline on its card. The nightly merged after it was
judged against the other card's history (its own card's, cut by the acceptance, read as too
young), or as a new kernel on one card; and a PR checked on two cards could only be accepted
on the card whose run was uploaded last.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from factories import make_kernel, make_run
from svc_helpers import Service
from test_api_webhook import acceptances, comment_event, deliver, seed

from collectors.schema import KernelRecord, RunRecord

H100, H200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
#: The datasheet dram bandwidth of each card (the copy kernel runs at 80% of it).
DRAM = {H100: 3.35e12, H200: 4.8e12}
GEMM_FLOPS = 2e12
#: Before the first acceptance: the runs measured before it are in the past.
START = datetime.now(UTC).replace(microsecond=0) - timedelta(days=40)


def kernels(card: str, *, fell: bool = False) -> list[KernelRecord]:
    """A GEMM at 70% of its tensor roof (of fp32's once ``fell``), a copy at 80% of dram."""
    precision, peak = ("fp32", 66.9e12) if fell else ("tensor_bf16", 989.4e12)
    return [
        make_kernel(
            "gemm", flops={precision: GEMM_FLOPS}, dram_bytes=1e8, time_s=GEMM_FLOPS / peak / 0.7
        ),
        make_kernel("copy", flops={}, dram_bytes=2e9, time_s=2e9 / DRAM[card] / 0.8),
    ]


def night(repo: str, card: str, when: datetime, *, fell: bool = False, **kw: object) -> RunRecord:
    """A nightly run of ``repo`` on ``card`` (its own commit), unless ``kw`` says otherwise."""
    fields = {"commit": f"{when:%m%d%H%M%S}{card[-4:]}", "timestamp": when} | kw
    return make_run(repo=repo, device=card, kernels=kernels(card, fell=fell), **fields)


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
    pr = night(repo, H100, START + timedelta(days=19), fell=True, kind="pr", pull_request=7)
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
    assert "by alice: ok; judged again from 3 main runs measured since" in note
    assert len(acceptances(service, repo)) == 3
