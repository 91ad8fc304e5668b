"""An upload of the same bytes again answers the verdict as it stands, not the one kept.

The service keeps each upload's answer for its retries (``upload_claims``). A CI job re-run
uploads the same bytes: after a maintainer accepted the change, after re-measurements
confirmed a suspect, or after the service restarted with another configuration, it got the
kept verdict and its exit code, where ``roofguard check`` of the same files gave today's.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from factories import make_kernel, make_run
from remeasure_data import gemv_report, stable_history
from svc_helpers import Service, auth
from test_api_remeasure import _gemv, _upload
from test_api_webhook import NIGHT, comment_event, deliver, seed, slow_pr

from rules import RulesConfig
from rules.verdict import Verdict
from service.config import RoofguardConfig


def _pr_again(service: Service, repo: str, body: bytes) -> dict:
    """The answer to ``body`` uploaded again: stored before, so judged and not stored again."""
    answer = service.client.post(
        "/api/v1/runs",
        content=body,
        headers={**auth(service.token(repo)), "Content-Type": "application/json"},
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def _seed_and_body(service: Service, repo: str) -> bytes:
    """``seed``'s nights and failing PR run; the bytes its PR upload sent."""
    seed(service, repo)
    return slow_pr(repo).model_dump_json().encode()


def test_the_same_bytes_after_an_accept_answer_the_accepted_verdict(service, repo) -> None:
    body = _seed_and_body(service, repo)
    assert _pr_again(service, repo, body)["verdict"]["conclusion"] == "fail"  # the kept one
    accepted = deliver(service, "issue_comment", comment_event(repo, "/roofguard accept -- ok"))
    assert accepted.status_code == 202, accepted.text
    again = _pr_again(service, repo, body)
    assert again["verdict"]["conclusion"] == "pass"
    statuses = {k["status"] for k in again["verdict"]["kernels"]}
    assert statuses == {"accepted"}


def test_the_same_bytes_after_re_measurements_answer_the_confirmed_verdict(
    service: Service, repo: str, tmp_path: Path
) -> None:
    stable_history(tmp_path, service.settings.database_url, repo)
    token = service.token(repo)
    pr = gemv_report(tmp_path / "pr.json", 1.4)
    screened = _upload(service, repo, token, pr, remeasure=True)
    assert _gemv(screened.json()).status == "suspect"
    again = gemv_report(tmp_path / "again.json", 1.4)
    confirmed = _upload(service, repo, token, pr, (again,), remeasure=True).json()
    assert _gemv(confirmed).status == "regressed"
    repeated = _upload(service, repo, token, pr, remeasure=True)
    assert repeated.status_code == 200
    assert _gemv(repeated.json()).status == "regressed", "not the suspect of the first answer"
    assert Verdict.model_validate(repeated.json()["verdict"]).conclusion.value == "fail"


def test_the_same_bytes_under_another_configuration_are_judged_again(make_service, repo) -> None:
    strict = make_service()
    body = _seed_and_body(strict, repo)
    lenient = make_service(RoofguardConfig(rules=RulesConfig(fail_on="never")))
    answer = _pr_again(lenient, repo, body)
    assert answer["verdict"]["conclusion"] == "warn"
    assert any("configuration changed" in note for note in answer["verdict"]["notes"])


def test_an_accept_made_later_leaves_a_night_measured_before_it_failing(make_service, repo) -> None:
    """A failed night judged again read a later PR's accept as its own: it passed.

    Judged again under another configuration, its kernels' baselines restarted at the
    acceptance made after it was measured.
    """
    service = make_service()
    seed(service, repo)
    slower = [make_kernel(f"gemv_{i}", time_s=1.5e-3) for i in range(3)]
    nights = [
        make_run(
            repo=repo,
            commit=f"5{n}aa",
            timestamp=NIGHT + timedelta(days=8, hours=6 * n),
            kernels=slower,
        )
        for n in (0, 1)
    ]
    token = service.token(repo)
    answers = [service.upload(night, token).json() for night in nights]
    assert answers[-1]["verdict"]["conclusion"] == "fail"
    accepted = deliver(service, "issue_comment", comment_event(repo, "/roofguard accept -- ok"))
    assert accepted.status_code == 202, accepted.text
    elsewhere = make_service(RoofguardConfig(device="H100-SXM5"))  # a default no run uses
    again = _pr_again(elsewhere, repo, nights[-1].model_dump_json().encode())["verdict"]
    assert any("configuration changed" in note for note in again["notes"])
    assert again["conclusion"] == "fail"
    assert {k["status"] for k in again["kernels"]} == {"regressed"}
