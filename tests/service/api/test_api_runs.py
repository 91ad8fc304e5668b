"""The upload API and the queries, on a real SQLite file and on PostgreSQL."""

from __future__ import annotations

import csv
import io
import json
import logging
from datetime import timedelta

import pytest
import sqlalchemy as sa
from factories import make_kernel, make_run
from svc_helpers import NIGHT, Service, auth, nightly_run, pr_run

from service.store.tables import Run


def kernels(slowdown: float = 1.0, n: int = 3):
    return [
        make_kernel(f"gemv_{i}", time_s=1e-3 * (1 + 0.002 * ((i + 1) % 3)) * slowdown)
        for i in range(n)
    ]


def nightly(repo: str, night: int, slowdown: float = 1.0):
    return nightly_run(repo, night, kernels(slowdown))


def runs_stored(service: Service, repo: str) -> int:
    from service.store.tables import Repository

    runs, repos = Run.__table__, Repository.__table__
    stmt = sa.select(sa.func.count()).select_from(runs.join(repos, repos.c.id == runs.c.repo_id))
    with service.engine.connect() as conn:
        return int(conn.execute(stmt.where(repos.c.name == repo)).scalar_one())


def test_json_upload_returns_the_verdict_and_a_retry_the_first_result(service, repo) -> None:
    token = service.token(repo)
    first = service.upload(nightly(repo, 0), token)
    assert first.status_code == 201, first.text
    body = first.json()
    assert body["created"] is True
    assert body["verdict"]["conclusion"] in ("pass", "warn", "fail")
    assert body["verdict"]["run_id"] == body["run_id"]
    assert {k["key"] for k in body["verdict"]["kernels"]} == {"gemv_0", "gemv_1", "gemv_2"}
    assert f"http://testserver/runs/{body['run_id']}" in body["markdown"]
    again = service.upload(nightly(repo, 0), token)
    assert again.status_code == 200
    assert again.json()["run_id"] == body["run_id"] and again.json()["created"] is False
    assert again.json()["verdict"] == body["verdict"]
    assert runs_stored(service, repo) == 1


def test_a_regressed_pr_fails_against_its_nightly_baseline(service, repo) -> None:
    token = service.token(repo)
    for night in range(8):
        assert service.upload(nightly(repo, night), token).status_code == 201
    pr = pr_run(repo, kernels(slowdown=1.6))
    result = service.upload(pr, token).json()
    assert result["verdict"]["conclusion"] == "fail"
    listed = service.client.get("/api/v1/runs", params={"repo": repo}, headers=auth(token))
    # the first three nights had fewer runs before them than the gate needs (min_runs 3)
    assert [r["judged"] for r in listed.json()["data"]] == [True] * 6 + [False] * 3
    failing = {f["kernel"] for f in result["verdict"]["findings"] if f["severity"] == "fail"}
    assert failing == {"gemv_0", "gemv_1", "gemv_2"}
    findings = service.client.get(f"/api/v1/runs/{result['run_id']}/findings", headers=auth(token))
    assert findings.status_code == 200
    assert {f["kernel"] for f in findings.json()["data"] if f["severity"] == "fail"} == failing


def test_queries_filter_and_serve_history_as_json_and_csv(service, repo) -> None:
    token = service.token(repo)
    ids = [service.upload(nightly(repo, n), token).json()["run_id"] for n in range(3)]
    h = auth(service.token(repo, write=False, name="reader"))
    listed = service.client.get("/api/v1/runs", params={"repo": repo, "limit": 2}, headers=h)
    assert [r["id"] for r in listed.json()["data"]] == ids[::-1][:2]
    assert (
        service.client.get("/api/v1/runs", params={"repo": repo, "kind": "pr"}, headers=h).json()[
            "count"
        ]
        == 0
    )
    one = service.client.get(f"/api/v1/runs/{ids[1]}", headers=h).json()
    assert one["commit"] == "0000001aa" and one["device"] and one["url"].endswith(f"/runs/{ids[1]}")
    history = service.client.get(
        "/api/v1/kernels/history", params={"repo": repo, "key": "gemv_1"}, headers=h
    ).json()
    assert [p["run_id"] for p in history["data"]] == ids
    assert all(p["percent_of_roof"] > 0 for p in history["data"])
    raw = service.client.get(
        "/api/v1/kernels/history",
        headers=h,
        params={"repo": repo, "key": "gemv_1", "format": "csv"},
    )
    assert raw.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(raw.text)))
    assert [int(r["run_id"]) for r in rows] == ids and rows[0]["kernel_key"] == "gemv_1"
    devices = service.client.get("/api/v1/devices", params={"repo": repo}, headers=h).json()
    assert devices == {"repo": repo, "data": [one["device"]]}
    # the driver's name of the stored card found nothing, on either list (it is one card)
    driver_name = {"H100-SXM5": "NVIDIA H100 80GB HBM3"}[one["device"]]
    by_alias = {"repo": repo, "device": driver_name}
    runs = service.client.get("/api/v1/runs", params=by_alias, headers=h).json()
    assert runs["count"] == 3
    key = {**by_alias, "key": "gemv_1"}
    history = service.client.get("/api/v1/kernels/history", params=key, headers=h).json()
    assert [p["run_id"] for p in history["data"]] == ids
    nothing = {"repo": repo, "device": "MI300X"}
    assert service.client.get("/api/v1/runs", params=nothing, headers=h).json()["count"] == 0
    verdict = service.client.get(f"/api/v1/runs/{ids[0]}/verdict", headers=h).json()
    assert verdict["run_id"] == ids[0] and verdict["created"] is False
    assert runs_stored(service, repo) == 3  # reading a verdict stores nothing


def test_the_history_of_a_kernel_spelt_wrong_is_a_404_naming_it(service, repo) -> None:
    h = auth(service.token(repo))
    assert service.upload(nightly(repo, 0), service.token(repo)).status_code == 201

    def history(**params: object):
        return service.client.get("/api/v1/kernels/history", params=params, headers=h)

    typo = history(repo=repo, key="gemv_01")
    assert typo.status_code == 404
    assert typo.json() == {"detail": f"no measurement of kernel gemv_01 is stored for {repo}"}
    elsewhere = history(repo=repo, key="gemv_1", device="MI300X")
    assert elsewhere.status_code == 404 and "gemv_1 on MI300X" in elsewhere.json()["detail"]
    assert history(repo=repo, key="gemv_1", format="csv").status_code == 200
    # a page past the end of a kernel's history is an empty page, not an unknown kernel
    past = history(repo=repo, key="gemv_1", offset=5)
    assert past.status_code == 200 and past.json()["data"] == []


def test_tokens_are_required_and_scoped(service, repo) -> None:
    run = nightly(repo, 0)
    unknown = service.upload(run, "rgt_not-a-token")
    assert unknown.status_code == 401
    no_auth = service.client.post(
        "/api/v1/runs", content=run.model_dump_json(), headers={"Content-Type": "application/json"}
    )
    assert no_auth.status_code == 401
    # RFC 6750: a 401 names the scheme; it came with no WWW-Authenticate header at all
    challenges = {unknown.headers.get("WWW-Authenticate"), no_auth.headers.get("WWW-Authenticate")}
    assert challenges == {'Bearer realm="roofguard"'}
    assert service.upload(run, service.token(repo, write=False)).status_code == 403
    other = service.upload(run, service.token("acme/other"))
    assert other.status_code == 403 and "scoped to acme/other" in other.json()["detail"]
    reader = service.token("acme/other", write=False)
    assert (
        service.client.get("/api/v1/runs", params={"repo": repo}, headers=auth(reader)).status_code
        == 403
    )
    assert runs_stored(service, repo) == 0


def test_revoked_token_is_refused(service, repo) -> None:
    from service.store.db import session_scope
    from service.store.tokens import list_tokens, revoke_token

    token = service.token(repo)
    assert service.upload(nightly(repo, 0), token).status_code == 201
    with session_scope(service.engine) as session:
        (info,) = list_tokens(session=session, repo=repo)
        assert info.last_used_at is not None
        revoke_token(session=session, token_id=info.id)
    assert service.upload(nightly(repo, 1), token).status_code == 401


def test_bad_uploads_get_one_clear_error_and_store_nothing(make_service, repo) -> None:
    service = make_service(max_upload_bytes=64 * 1024)
    h = auth(service.token(repo))
    bad = json.loads(nightly(repo, 0).model_dump_json())
    bad["kernels"][1]["duration_s"] = -1
    r = service.client.post("/api/v1/runs", json=bad, headers=h)
    assert r.status_code == 422 and "kernels.1.duration_s" in r.json()["detail"]
    nameless = make_run(repo=None).model_dump_json()
    json_h = {**h, "Content-Type": "application/json"}
    r = service.client.post("/api/v1/runs", content=nameless, headers=json_h)
    assert r.status_code == 422 and "repo: the run must name its repository" in r.json()["detail"]
    r = service.client.post(
        "/api/v1/runs", content=b"hello", headers={**h, "Content-Type": "text/plain"}
    )
    assert r.status_code == 415
    big = make_run(repo=repo, kernels=[make_kernel(f"k{i:05d}") for i in range(2000)])
    r = service.client.post(
        "/api/v1/runs",
        content=big.model_dump_json(),
        headers={**h, "Content-Type": "application/json"},
    )
    assert r.status_code == 413 and "65536 bytes" in r.json()["detail"]
    broken = [("files", ("bench.json", b'{"benchmarks": [', "application/json"))]
    r = service.client.post(
        "/api/v1/runs", headers=h, data={"repo": repo, "commit": "abc"}, files=broken
    )
    assert r.status_code == 422
    assert "bench.json" in r.json()["detail"] and "roofguard-upload" not in r.json()["detail"]
    assert runs_stored(service, repo) == 0


def test_multipart_upload_merges_several_files_into_one_run(service, repo, tmp_path) -> None:
    halves = [
        make_run(repo=None, commit=None, kernels=kernels()[:2]),
        make_run(repo=None, commit=None, kernels=kernels()[2:]),
    ]
    files = []
    for i, run in enumerate(halves):
        (tmp_path / f"part{i}.json").write_text(run.model_dump_json())
        content = (tmp_path / f"part{i}.json").read_bytes()
        files.append(("files", (f"../../etc/part{i}.json", content, "application/json")))
    form = {"repo": repo, "commit": "fee1dead", "kind": "pr", "pr": "12", "branch": "topic"}
    r = service.client.post(
        "/api/v1/runs", headers=auth(service.token(repo)), data=form, files=files
    )
    assert r.status_code == 201, r.text
    verdict = r.json()["verdict"]
    assert (verdict["repo"], verdict["commit"], verdict["pull_request"]) == (repo, "fee1dead", 12)
    assert sorted(k["key"] for k in verdict["kernels"]) == ["gemv_0", "gemv_1", "gemv_2"]
    run = service.client.get(
        f"/api/v1/runs/{r.json()['run_id']}", headers=auth(service.token(repo))
    ).json()
    assert (run["kind"], run["branch"]) == ("pr", "topic")


def test_multipart_upload_of_a_real_report(service, repo, corpus_dir) -> None:
    from collectors.errors import UnknownFormat
    from collectors.registry import detect

    report = (
        corpus_dir / "ncu-csv" / "AndrewXu22_optimal_unified_memory__lassen_nsight_cfd_097K.log"
    )
    try:
        detect(report)
    except UnknownFormat:
        pytest.skip("the ncu CSV collector is not in this build")
    h = auth(service.token(repo))
    form = {
        "repo": repo,
        "commit": "0123abc",
        "branch": "main",
        "kind": "nightly",
        "device": "V100",
    }
    with report.open("rb") as fh:
        r = service.client.post(
            "/api/v1/runs", headers=h, data=form, files=[("files", (report.name, fh, "text/csv"))]
        )
    assert r.status_code == 201, r.text
    verdict = r.json()["verdict"]
    assert verdict["repo"] == repo and verdict["commit"] == "0123abc"
    assert len(verdict["kernels"]) == 3 and verdict["roof"].startswith("V100")
    assert runs_stored(service, repo) == 1
    unknown = corpus_dir / "ncu-csv" / "wangzy0327_cuda-roofline__output_V100.csv"
    with unknown.open("rb") as fh:
        r = service.client.post(
            "/api/v1/runs",
            headers=h,
            data={**form, "commit": "1"},
            files=[("files", (unknown.name, fh, "text/csv"))],
        )
    # The device a report names wins: a V100-PCIe report is no V100-SXM2 run, whatever the form
    # says (the form's device only names reports that name none).
    detail = r.json()["detail"]
    assert r.status_code == 422 and "names device 'Tesla V100-PCIE-32GB'" in detail
    assert "the upload's device field gives 'V100'" in detail
    assert detail.startswith(unknown.name)  # the file as uploaded, not where it was kept
    assert runs_stored(service, repo) == 1


def test_a_method_no_route_takes_is_answered_with_every_method_the_path_takes(service) -> None:
    """``DELETE /api/v1/runs`` said ``Allow: POST``: the first route's methods, not ``GET``."""
    for method, path, allowed in (
        ("DELETE", "/api/v1/runs", "GET, POST"),
        ("PATCH", "/api/v1/runs/12", "GET"),
        ("POST", "/api/v1/kernels/history", "GET"),
    ):
        answer = service.client.request(method, path)
        assert answer.status_code == 405 and answer.headers["allow"] == allowed, path
        assert answer.json() == {"detail": "Method Not Allowed"}


def test_health_readiness_and_metrics(make_service, repo, tmp_path) -> None:
    service = make_service()
    assert service.client.get("/healthz").json() == {"status": "ok", "detail": None}
    assert service.client.get("/readyz").status_code == 200
    service.upload(nightly(repo, 0), service.token(repo))
    for made_up in ("M1", "M2", "FOO"):  # each was a new series anyone could add, unsigned
        assert service.client.request(made_up, "/healthz").status_code == 405
    metrics = service.client.get("/metrics").text
    assert 'roofguard_uploads_total{outcome="created"} 1.0' in metrics
    assert 'route="/api/v1/runs"' in metrics and "/runs/1" not in metrics
    assert 'method="other",route="/healthz",status="405"} 3.0' in metrics
    assert 'method="M1"' not in metrics


def test_readiness_fails_on_an_unmigrated_store(tmp_path) -> None:
    from fastapi.testclient import TestClient

    from service.api.app import create_app
    from service.config import RoofguardConfig
    from service.settings import Settings

    settings = Settings(database_url=f"sqlite:///{tmp_path / 'empty.db'}")
    with TestClient(create_app(settings, RoofguardConfig())) as client:
        ready = client.get("/readyz")
        assert client.get("/healthz").status_code == 200
    assert ready.status_code == 503 and "roofguard db upgrade" in ready.json()["detail"]
    gone = Settings(database_url="postgresql+psycopg://roofguard:pw@127.0.0.1:9/none")
    with TestClient(create_app(gone, RoofguardConfig())) as client:
        down = client.get("/readyz")
        alive = client.get("/healthz")
        upload = client.post("/api/v1/runs", json={}, headers={"Authorization": "Bearer x"})
    assert down.status_code == 503 and "unreachable" in down.json()["detail"]
    assert "pw" not in down.json()["detail"] and alive.status_code == 200
    assert upload.status_code == 503 and upload.headers["retry-after"] == "5"


def test_no_token_or_secret_reaches_a_log_line(service, repo, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    token = service.token(repo)
    service.upload(nightly(repo, 0), token)
    service.upload(nightly(repo, 0), token + "x")
    service.client.post(
        "/api/v1/github/webhook",
        content=b"{}",
        headers={"X-GitHub-Event": "ping", "X-Hub-Signature-256": "sha256=00"},
    )
    assert any("upload repo=" in r.getMessage() for r in caplog.records)
    secret = service.settings.webhook_secret.get_secret_value()
    for record in caplog.records:
        text = record.getMessage() + repr(record.args)
        assert token not in text and secret not in text
    assert secret not in repr(service.settings)


def test_upload_may_choose_its_baseline(service, repo) -> None:
    token = service.token(repo)
    for night in range(8):
        service.upload(nightly(repo, night), token)
    pr = pr_run(repo, kernels(slowdown=1.6))
    h = {**auth(token), "Content-Type": "application/json"}
    other = service.client.post(
        "/api/v1/runs", params={"base_branch": "release"}, content=pr.model_dump_json(), headers=h
    ).json()
    assert {k["status"] for k in other["verdict"]["kernels"]} == {"new"}
    for revision in ("HEAD~1", "origin/main", "not hex!"):
        bad = service.client.post(
            "/api/v1/runs", params={"base_sha": revision}, content=pr.model_dump_json(), headers=h
        )
        assert bad.status_code == 422, revision
    merged_off = (NIGHT + timedelta(days=3, hours=5)).isoformat()
    for query in ({"base_time": merged_off}, {"base_sha": "deadbee1", "base_time": "yesterday"}):
        refused = service.client.post(
            "/api/v1/runs", params=query, content=pr.model_dump_json(), headers=h
        )
        assert refused.status_code == 422 and "base_time" in refused.text, refused.text
    cut = service.client.post(
        "/api/v1/runs",
        params={"base_sha": "deadbee1", "base_time": merged_off},
        content=pr.model_dump_json(),
        headers=h,
    ).json()["verdict"]
    assert cut["baseline"]["commits"] == ["0000000aa", "0000003aa"]  # nights 0-3 of 0-7
    merge_base = "merge base deadbee1 has no stored main run: judged"
    assert any(note.startswith(merge_base) for note in cut["notes"]), cut["notes"]
    # stored under base_branch=release first: this answer alone is judged under main
    assert any("as asked, and not stored" in note for note in cut["notes"]), cut["notes"]
    # a commit as a CI names it, not only hex: as stored runs' commits and `check` take it
    tagged = service.client.post(
        "/api/v1/runs", params={"base_sha": "v0.3.1-rc"}, content=pr.model_dump_json(), headers=h
    )
    assert tagged.status_code == 200, tagged.text
    assert any(
        n.startswith("merge base v0.3.1-rc has no") for n in tagged.json()["verdict"]["notes"]
    )


def test_a_form_with_a_pr_number_is_a_pr_run(service, repo, tmp_path) -> None:
    body = make_run(repo=None, commit=None, kind="local").model_dump_json().encode()
    form = {"repo": repo, "commit": "abc", "pr": "9"}
    r = service.client.post(
        "/api/v1/runs",
        headers=auth(service.token(repo)),
        data=form,
        files=[("files", ("run.json", body, "application/json"))],
    )
    run = service.client.get(
        f"/api/v1/runs/{r.json()['run_id']}", headers=auth(service.token(repo))
    ).json()
    assert (run["kind"], run["pull_request"]) == ("pr", 9)


@pytest.mark.parametrize(
    ("fields", "detail"),
    [
        ({"kind": "weekly"}, "form field kind: Input should be 'pr', 'nightly' or 'local'"),
        ({"pull_request": "9"}, "form field pull_request: Extra inputs are not permitted"),
        ({"pr": "0"}, "form field pr: Input should be greater than or equal to 1"),
        # it named the command line's flags (--pr 9 given with --kind nightly)
        ({"pr": "9", "kind": "nightly"}, "pr=9 given with kind=nightly; use kind=pr"),
    ],
)
def test_the_form_keeps_its_public_field_names_and_errors(service, repo, fields, detail) -> None:
    # The form derives from the run's meta (RunMeta.pull_request inside); its fields and
    # their errors are the API's, with the pull request spelt `pr`.
    body = make_run(repo=None, commit=None).model_dump_json().encode()
    r = service.client.post(
        "/api/v1/runs",
        headers=auth(service.token(repo)),
        data={"repo": repo, "commit": "abc", **fields},
        files=[("files", ("run.json", body, "application/json"))],
    )
    assert (r.status_code, r.json()["detail"]) == (422, detail)
    assert runs_stored(service, repo) == 0


def test_multipart_upload_of_a_binary_ncu_report(service, repo, corpus_dir) -> None:
    from collectors import collect
    from collectors.errors import CollectorError

    report = corpus_dir / "ncu-rep" / "flyinglandlord_sglang__profile.ncu-rep"
    try:
        expected = collect(report)
    except CollectorError as exc:
        pytest.skip(f"the .ncu-rep collector cannot read it here: {exc}")
    form = {"repo": repo, "commit": "5eed", "kind": "nightly"}
    with report.open("rb") as fh:
        files = [("files", (report.name, fh, "application/octet-stream"))]
        r = service.client.post(
            "/api/v1/runs", headers=auth(service.token(repo)), data=form, files=files
        )
    assert r.status_code == 201, r.text
    verdict = r.json()["verdict"]
    measured = {k.key for k in expected.kernels if k.measured}  # one replay read NaN
    assert {k["key"] for k in verdict["kernels"]} == measured and len(measured) == 1
    assert verdict["roof"].startswith("H800")


def test_a_nightly_uploaded_late_is_judged_against_the_nights_measured_before_it(
    service, repo
) -> None:
    token = service.token(repo)
    for night in (0, 1, 3, 4, 5):  # night 2's upload failed, and is retried after night 5
        assert service.upload(nightly(repo, night), token).status_code == 201
    late = service.upload(nightly(repo, 2, slowdown=1.5), token).json()
    assert late["verdict"]["baseline"]["runs"] == 2  # not nights 3-5, measured after it
    assert late["verdict"]["baseline"]["commits"] == ["0000000aa", "0000001aa"]
    assert "baseline too short: 2 of the 3 runs the gate needs" in late["markdown"]
