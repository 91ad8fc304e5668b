"""A check that outlives the answer is a 202 to upload again after, not a timeout (issue 32
item 7).

Under load checks ran past ``roofguard upload``'s 120 s, so clients uploaded again and each
attempt was judged anew. The service now answers 202 with ``Retry-After`` once
``ROOFGUARD_UPLOAD_ANSWER_S`` has passed, the check goes on, and the same upload again waits
on that check. Here the deadline is 0 s, so every check outlives it.
"""

from __future__ import annotations

import time

import sqlalchemy as sa
from svc_helpers import auth

from service.cli.upload_cmd import CLIENT_TIMEOUT_S, upload
from service.settings import Settings

CSV = (
    "# device: NVIDIA H100 80GB HBM3\nname,duration_s,flops_fp32,bytes_dram,launches\n"
    "gemv,0.001,1e9,1e6,1\n"
)


def _runs(service, repo: str) -> int:
    with service.engine.connect() as conn:
        stmt = sa.text(
            "SELECT count(*) FROM runs JOIN repositories r ON r.id = runs.repo_id "
            "WHERE r.name = :repo"
        )
        return int(conn.execute(stmt, {"repo": repo}).scalar_one())


def test_a_slow_check_is_a_202_and_the_same_upload_again_gets_its_verdict(make_service, repo):
    service = make_service(upload_answer_s=0)
    send = {
        "headers": auth(service.token(repo)),
        "data": {"repo": repo, "commit": "abc", "kind": "nightly", "branch": "main"},
        "files": [("files", ("r.csv", CSV.encode(), "text/csv"))],
    }
    first = service.client.post("/api/v1/runs", **send)
    assert first.status_code == 202, first.text
    assert first.headers["Retry-After"] == "5" and first.json()["retry_after_s"] == 5
    deadline = time.monotonic() + 60
    answer = first
    while answer.status_code == 202 and time.monotonic() < deadline:
        time.sleep(0.2)
        answer = service.client.post("/api/v1/runs", **send)
    assert answer.status_code == 200, answer.text  # the first check's verdict, uploaded before
    assert answer.json()["verdict"]["conclusion"] in ("pass", "warn")
    assert service.app.state.roofguard.metrics.checks._value.get() == 1, "one check for both"
    assert _runs(service, repo) == 1


def test_roofguard_upload_uploads_again_after_a_202(make_service, repo, tmp_path):
    service = make_service(upload_answer_s=0)
    service.client.headers.update(auth(service.token(repo)))
    report = tmp_path / "r.csv"
    report.write_text(CSV, encoding="utf-8")
    result = upload(
        server="http://testserver",
        token="unused",  # the test client sends the header
        files=[report],
        data={"repo": repo, "commit": "abc", "kind": "nightly", "branch": "main"},
        client=service.client,
        delays=(0.01,),
    )
    assert result["verdict"]["conclusion"] in ("pass", "warn") and result["run_id"]
    assert _runs(service, repo) == 1


def test_the_service_answers_before_the_client_gives_up() -> None:
    limit = Settings.model_fields["upload_answer_s"].metadata
    most = next(m.le for m in limit if getattr(m, "le", None) is not None)
    assert Settings().upload_answer_s < most < CLIENT_TIMEOUT_S
