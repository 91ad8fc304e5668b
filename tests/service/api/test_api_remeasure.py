"""The PR gate's re-measure step through the upload API: ``remeasure`` and ``reruns`` files."""

from __future__ import annotations

from pathlib import Path

from remeasure_data import gemv_report, stable_history
from svc_helpers import Service, auth
from test_api_runs import runs_stored

from rules.verdict import Verdict


def _upload(
    service: Service,
    repo: str,
    token: str,
    run: Path,
    reruns: tuple[Path, ...] = (),
    remeasure: bool = False,
    commit: str = "c0009",
):
    files = [("files", (run.name, run.read_bytes(), "application/json"))]
    files += [("reruns", (p.name, p.read_bytes(), "application/json")) for p in reruns]
    return service.client.post(
        "/api/v1/runs" + ("?remeasure=true" if remeasure else ""),
        headers=auth(token),
        data={"repo": repo, "commit": commit, "pr": "7"},
        files=files,
    )


def _gemv(answer: dict[str, object]):
    verdict = Verdict.model_validate(answer["verdict"])
    return next(k for k in verdict.kernels if k.key == "gemv")


def test_a_caller_that_re_measures_fails_nothing_on_one_measurement(
    service: Service, repo: str, tmp_path: Path
) -> None:
    stable_history(tmp_path, service.settings.database_url, repo)
    token = service.token(repo)
    pr = gemv_report(tmp_path / "pr.json", 2.0)  # half the speed
    unscreened = gemv_report(tmp_path / "unscreened.json", 2.0, commit="c0010")
    once = _upload(service, repo, token, unscreened, commit="c0010").json()
    assert once["verdict"]["conclusion"] == "fail"  # far beyond noise: fails at once
    screened = _upload(service, repo, token, pr, remeasure=True)
    assert screened.status_code == 201, screened.text
    assert _gemv(screened.json()).status == "suspect"
    assert screened.json()["verdict"]["conclusion"] != "fail"
    again = gemv_report(tmp_path / "again.json", 2.0)
    confirmed = _upload(service, repo, token, pr, (again,), remeasure=True)
    assert confirmed.status_code == 200  # the same run: stored once, judged anew
    gemv = _gemv(confirmed.json())
    assert gemv.status == "regressed" and len(gemv.measurements) == 2
    assert confirmed.json()["verdict"]["conclusion"] == "fail"


def test_a_normal_re_measurement_clears_the_suspect(
    service: Service, repo: str, tmp_path: Path
) -> None:
    stable_history(tmp_path, service.settings.database_url, repo)
    token = service.token(repo)
    pr = gemv_report(tmp_path / "pr.json", 1.25)
    assert _gemv(_upload(service, repo, token, pr, remeasure=True).json()).status == "suspect"
    again = gemv_report(tmp_path / "again.json", 1.0)
    cleared = _upload(service, repo, token, pr, (again,), remeasure=True).json()
    assert _gemv(cleared).status == "unchanged"
    assert cleared["verdict"]["conclusion"] != "fail"


def test_a_bad_re_measurement_is_one_error_and_stores_nothing(
    service: Service, repo: str, tmp_path: Path
) -> None:
    stable_history(tmp_path, service.settings.database_url, repo)
    token = service.token(repo)
    before = runs_stored(service, repo)
    pr = gemv_report(tmp_path / "pr.json", 1.25)
    other = gemv_report(tmp_path / "other-commit.json", 1.0, commit="d00d")
    answer = _upload(service, repo, token, pr, (other,))
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert "other-commit.json" in detail and "'d00d'" in detail and "tmp" not in detail
    assert runs_stored(service, repo) == before
