"""Hostile requests to the service: each small hole of issue 14 item 7, through real HTTP.

Every case runs on SQLite and on PostgreSQL (which refuses NUL bytes and long values that
SQLite takes), through FastAPI's TestClient or a live uvicorn.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from datetime import UTC, datetime, timedelta

import httpx
import pandas as pd
import pytest
import sqlalchemy as sa
from factories import make_kernel, make_run
from fastapi.testclient import TestClient
from svc_helpers import Service, auth, start_live

from service.api.app import create_app
from service.api.routes.kernels import CSV_COLUMNS, history_csv
from service.config import RoofguardConfig
from service.settings import Settings
from service.store.tables import RenderedView

NIGHT = datetime(2026, 11, 1, 3, tzinfo=UTC)


def _night(repo: str, n: int, kernels=None):
    return make_run(
        repo=repo,
        commit=f"{n:07x}cc",
        timestamp=NIGHT + timedelta(days=n),
        kernels=kernels or [make_kernel("gemv", time_s=1e-3 * (1 + 0.01 * n))],
    )


def _form_upload(service: Service, repo: str, filename: str, body: bytes):
    return service.client.post(
        "/api/v1/runs",
        headers=auth(service.token(repo)),
        data={"repo": repo, "commit": "abc"},
        files=[("files", (filename, body, "application/json"))],
    )


def test_a_file_name_longer_than_a_file_system_takes_is_cut(service, repo) -> None:
    body = make_run(repo=None, commit=None).model_dump_json().encode()
    for name in ("x" * 300 + ".json", "é" * 200 + ".json", "a\0b.json"):
        answer = _form_upload(service, repo, name, body)
        assert answer.status_code in (200, 201), (name[:20], answer.text)
    bad = _form_upload(service, repo, "ü" * 300 + ".json", b"{not json")
    assert bad.status_code == 422 and ".json" in bad.json()["detail"]
    assert "roofguard-upload" not in bad.json()["detail"]


def test_a_report_of_no_measured_kernel_is_refused_and_nothing_stored(service, repo) -> None:
    """A runner that lost its GPU: every benchmark an error, a run of none that passed."""
    errored = {"name": "BM_gemv/64", "error_occurred": True, "error_message": "no CUDA device"}
    report = {"context": {"library_build_type": "release"}, "benchmarks": [errored]}
    answer = service.client.post(
        "/api/v1/runs",
        headers=auth(service.token(repo)),
        data={"repo": repo, "commit": "abc", "device": "H100-SXM5"},
        files=[("files", ("bench.json", json.dumps(report).encode(), "application/json"))],
    )
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert "bench.json: no measured kernel, nothing to store or judge" in detail
    assert "no CUDA device" in detail
    headers = auth(service.token(repo))
    runs = service.client.get("/api/v1/runs", params={"repo": repo}, headers=headers)
    assert runs.status_code == 200 and runs.json()["count"] == 0


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/search", {"q": "gemv\0"}),
        ("/kernels", {"repo": "acme/x", "key": "a\0b"}),
        ("/digest", {"repo": "acme/x\0"}),
        ("/api/v1/runs", {"repo": "acme/x\0"}),
        ("/api/v1/kernels/history", {"repo": "acme/x", "key": "\0"}),
    ],
)
def test_a_nul_byte_in_a_query_parameter_is_a_422(service, repo, path, params) -> None:
    headers = auth(service.token(repo))
    answer = service.client.get(path, params=params, headers=headers)
    assert answer.status_code == 422, answer.text
    (name,) = [k for k, v in params.items() if "\0" in v]
    assert answer.json() == {"detail": f"query parameter {name}: contains a NUL byte"}


def test_a_nul_byte_in_an_uploaded_record_names_its_field(service, repo) -> None:
    run = _night(repo, 0, [make_kernel("gemv\0<half>", key="gemv")])
    answer = service.upload(run, service.token(repo))
    assert answer.status_code == 422
    assert answer.json()["detail"] == "request body: kernels.0.name: contains a NUL byte"


def test_a_read_token_cannot_tell_another_repositorys_run_from_a_missing_one(service, repo) -> None:
    run_id = service.upload(_night(repo, 0), service.token(repo)).json()["run_id"]
    stranger = auth(service.token("other/repo", write=False))
    for suffix in ("", "/findings", "/verdict"):
        probe = service.client.get(f"/api/v1/runs/{run_id}{suffix}", headers=stranger)
        missing = service.client.get(f"/api/v1/runs/{2**31 - 1}{suffix}", headers=stranger)
        assert probe.status_code == missing.status_code == 404
        assert probe.json()["detail"] == f"run {run_id} is not in the history store"
        assert repo not in probe.text


def test_a_token_in_the_query_string_is_not_written_to_the_access_log(service, caplog) -> None:
    caplog.set_level(logging.INFO, logger="uvicorn.access")
    live = start_live(service.app)
    secret = "rgt_" + "s3cr3t" * 6
    try:
        for query in (f"token={secret}", f"q=x&access_token={secret}", f"q={secret}"):
            assert httpx.get(f"{live.url}/search?{query}").status_code == 200
    finally:
        live.stop()
    lines = [r.getMessage() for r in caplog.records if r.name == "uvicorn.access"]
    assert len(lines) == 3 and all("/search?" in line for line in lines)
    assert not any(secret in line or "s3cr3t" in line for line in lines), lines
    assert "token=[redacted]" in lines[0]


def test_an_unavailable_store_does_not_show_its_user_host_or_database(tmp_path) -> None:
    gone = Settings(database_url="postgresql+psycopg://rg_admin:pw@127.0.0.1:9/rg_history")
    with TestClient(create_app(gone, RoofguardConfig())) as client:
        answers = [
            client.get("/readyz"),
            client.get("/runs/1"),
            client.get("/search", params={"q": "gemv"}),
            client.post("/api/v1/runs", json={}, headers={"Authorization": "Bearer x"}),
        ]
    for answer in answers:
        assert answer.status_code == 503, answer.text
        detail = answer.json()["detail"]
        assert detail == "history store is unreachable"
        for secret in ("rg_admin", "127.0.0.1", "rg_history", "pw", "5432", ":9"):
            assert secret not in answer.text


def _statements(service: Service, path: str) -> tuple[httpx.Response, int]:
    """The answer to GET ``path`` and how many statements read a stored record."""
    seen = []

    def count(_conn, _cursor, statement, *_args) -> None:
        if "record_json" in statement.lower():  # only judging reads the whole record
            seen.append(statement)

    sa.event.listen(service.engine, "before_cursor_execute", count)
    try:
        answer = service.client.get(path, headers=auth(service.token("x/y", write=False)))
    finally:
        sa.event.remove(service.engine, "before_cursor_execute", count)
    return answer, len(seen)


def _views(service: Service, run_id: int) -> dict[str, str]:
    """The stored views of run ``run_id`` (other tests share the PostgreSQL database)."""
    table = RenderedView.__table__
    stmt = sa.select(table.c.view, table.c.cache_key).where(table.c.run_id == run_id)
    with service.engine.connect() as conn:
        return dict(conn.execute(stmt).all())


def test_a_run_page_is_judged_once_until_the_history_changes(service, repo) -> None:
    token = service.token(repo)
    kernels = [make_kernel(f"k{i}", time_s=1e-3 * (1 + i / 100)) for i in range(30)]
    ids = [service.upload(_night(repo, n, kernels), token).json()["run_id"] for n in range(4)]
    first, judged = _statements(service, f"/runs/{ids[-1]}")
    again, cached = _statements(service, f"/runs/{ids[-1]}")
    assert first.status_code == again.status_code == 200 and first.text == again.text
    assert cached == 0 < judged, "the second view is not judged again"
    keys = _views(service, ids[-1])
    assert set(keys) == {"page"}
    up = service.upload(_night(repo, 9, kernels), token)  # the baseline window moved on
    assert up.status_code == 201, up.text
    moved, rejudged = _statements(service, f"/runs/{ids[-1]}")
    assert moved.status_code == 200 and rejudged > cached
    assert _views(service, ids[-1])["page"] != keys["page"]
    svg = service.client.get(f"/runs/{ids[-1]}/roofline.svg")
    assert svg.text == service.client.get(f"/runs/{ids[-1]}/roofline.svg").text
    verdict = service.client.get(f"/api/v1/runs/{ids[-1]}/verdict", headers=auth(token))
    assert verdict.json()["run_id"] == ids[-1] and verdict.json()["verdict"]["kernels"]
    assert (
        verdict.json()
        == service.client.get(f"/api/v1/runs/{ids[-1]}/verdict", headers=auth(token)).json()
    )
    assert set(_views(service, ids[-1])) == {"page", "roofline.svg", "verdict"}


def test_a_run_from_the_future_is_refused(service, repo) -> None:
    ahead = _night(repo, 0).model_copy(update={"timestamp": datetime.now(UTC) + timedelta(days=2)})
    answer = service.upload(ahead, service.token(repo))
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert detail.startswith("request body: timestamp: ") and "in the future" in detail
    body = make_run(repo=None, commit=None).model_dump_json().encode()
    form = service.client.post(
        "/api/v1/runs",
        headers=auth(service.token(repo)),
        data={"repo": repo, "commit": "abc", "timestamp": "2099-01-01T00:00:00Z"},
        files=[("files", ("run.json", body, "application/json"))],
    )
    assert form.status_code == 422 and "in the future" in form.json()["detail"]


def test_a_report_naming_no_device_is_named_as_uploaded(service, repo) -> None:
    """The error named the service's temporary folder (/tmp/roofguard-upload-.../files/0/)."""
    csv = b"name,duration_s,flops_fp32,bytes_dram,launches\ngemv,0.001,1e9,1e6,1\n"
    answer = service.client.post(
        "/api/v1/runs",
        headers=auth(service.token(repo)),
        data={"repo": repo, "commit": "abc", "kind": "nightly", "branch": "main"},
        files=[("files", ("bert_nsight.csv", csv, "text/csv"))],
    )
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail.startswith("bert_nsight.csv: ") and "names no device" in detail
    assert "roofguard-upload" not in detail


@pytest.mark.parametrize("year", [1, 1970])
def test_a_run_from_before_any_gpu_is_refused(service, repo, year) -> None:
    """A year-1 placeholder was stored, and its kernels' pages failed with 500 for good."""
    old = _night(repo, 0).model_copy(update={"timestamp": datetime(year, 1, 1, tzinfo=UTC)})
    answer = service.upload(old, service.token(repo))
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert detail.startswith("request body: timestamp: ") and "before 2000" in detail


@pytest.mark.parametrize("seconds", [0.0, 1e-300, 5e-13])
def test_a_duration_that_is_no_measurement_is_refused(service, repo, seconds) -> None:
    run = _night(repo, 0, [make_kernel("gemv"), make_kernel("tiny", time_s=seconds)])
    answer = service.upload(run, service.token(repo))
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith("request body: kernels.1.duration_s: ")
    assert "'tiny'" in answer.json()["detail"]


def test_a_kernel_whose_every_launch_failed_may_have_no_duration(service, repo) -> None:
    failed = make_kernel("crashed", time_s=0.0, launches=0, failed_launches=3)
    run = _night(repo, 0, [make_kernel("gemv"), failed])
    assert service.upload(run, service.token(repo)).status_code == 201


def test_the_csv_export_never_hands_a_spreadsheet_a_formula(service, repo) -> None:
    token = service.token(repo)
    evil = '=HYPERLINK("http://evil.example","ok")'
    for n in range(2):
        run = _night(repo, n, [make_kernel(evil, key=evil)])
        run = run.model_copy(update={"branch": "+cmd|' /C calc'!A0"})
        assert service.upload(run, token).status_code == 201
    raw = service.client.get(
        "/api/v1/kernels/history",
        params={"repo": repo, "key": evil, "format": "csv"},
        headers=auth(token),
    )
    rows = list(csv.DictReader(io.StringIO(raw.text)))
    assert len(rows) == 2
    for row in rows:
        assert row["kernel_key"] == "'" + evil and row["branch"].startswith("'+cmd")
        assert float(row["time_s"]) > 0, "numbers stay numbers"


@pytest.mark.parametrize("dtype", ["object", "str", "category"])
def test_the_csv_export_defuses_text_whatever_its_dtype(dtype: str) -> None:
    """A history frame whose text columns are categorical (as the digest's are) is defused too."""
    row = dict.fromkeys(CSV_COLUMNS, "=1+1") | {"run_id": 1, "time_s": -0.5, "total_flops": 2.0}
    row["timestamp"] = pd.Timestamp("2026-12-01T03:00:00Z")
    frame = pd.DataFrame([row])
    text = [c for c in CSV_COLUMNS if isinstance(row[c], str)]
    frame = frame.astype(dict.fromkeys(text, dtype))
    cells = next(csv.DictReader(io.StringIO(history_csv(frame))))
    assert {cells[c] for c in text} == {"'=1+1"}
    assert (cells["time_s"], cells["run_id"]) == ("-0.5", "1"), "numbers stay numbers"


def test_repository_names_differing_only_in_case_share_one_history(service, repo) -> None:
    token = service.token(repo)
    shouting = repo.upper()
    first = service.upload(_night(shouting, 0), token)
    second = service.upload(_night(repo.title(), 1), token)
    assert first.status_code == second.status_code == 201, second.text
    baseline = second.json()["verdict"]["baseline"]
    assert baseline["runs"] == 1, "the first night is the second one's baseline"
    listed = service.client.get(
        "/api/v1/runs", params={"repo": repo.title()}, headers=auth(token)
    ).json()
    assert listed["count"] == 2 and {r["repo"] for r in listed["data"]} == {repo}


def test_an_upload_of_more_kernels_than_the_service_takes_is_a_413(make_service, repo) -> None:
    small = make_service(max_upload_kernels=5)
    run = _night(repo, 0, [make_kernel(f"k{i}") for i in range(6)])
    answer = small.upload(run, small.token(repo))
    assert answer.status_code == 413
    assert answer.json()["detail"].startswith("the run holds 6 kernels, more than the 5 ")
    assert (
        small.client.get(
            "/api/v1/runs", params={"repo": repo}, headers=auth(small.token(repo))
        ).json()["count"]
        == 0
    )
    assert small.upload(_night(repo, 1, run.kernels[:5]), small.token(repo)).status_code == 201


def test_dashboard_pages_draw_kernel_names_that_look_like_math_text(service, repo) -> None:
    name = r"gemv_$\frac{a}$<half>$"
    token = service.token(repo)
    ids = []
    for n in range(3):
        kernels = [make_kernel(name, time_s=1e-3 * (1 + n / 10)), make_kernel("$$", time_s=2e-3)]
        ids.append(service.upload(_night(repo, n, kernels), token).json()["run_id"])
    page = service.client.get(f"/runs/{ids[-1]}")
    assert page.status_code == 200 and "\\frac{a}" in page.text
    assert service.client.get(f"/runs/{ids[-1]}/roofline.svg").status_code == 200
    kernel = service.client.get("/kernels", params={"repo": repo, "key": name})
    assert kernel.status_code == 200 and kernel.text.count('<figure class="chart"') == 1


def test_a_bidi_override_in_a_kernel_name_does_not_reorder_the_pages(service, repo) -> None:
    """Autoescaped HTML kept U+202E: roofguard's own sentence about the kernel, figures
    included, read reversed on the run page, and a closing U+202C made the search page show
    ``gemmlive_kernel`` for ``gemm<U+202E>evil<U+202C>_kernel``."""
    name = "gemm\u202eevil\u202c_kernel"
    token = service.token(repo)
    kernels = [make_kernel(name, time_s=1e-3 * (1.3 if n == 5 else 1)) for n in range(6)]
    ids = [
        service.upload(_night(repo, n, [k]), token).json()["run_id"] for n, k in enumerate(kernels)
    ]
    pages = [f"/runs/{ids[-1]}", f"/search?q=evil&repo={repo}"]
    for path in pages:
        page = service.client.get(path)
        assert page.status_code == 200 and "evil" in page.text, path
        assert "\u202e" not in page.text and "\u202c" not in page.text, path


def test_the_digest_html_drops_bidi_overrides_as_the_pages_do() -> None:
    from service.render import digest_render

    page = digest_render._env(True).from_string("<code>{{ name }}</code>")
    assert page.render(name="gemm\u202eevil\u202c_<k>") == "<code>gemm evil _&lt;k&gt;</code>"
    markdown = digest_render._env(False).from_string("{{ name }}")
    assert markdown.render(name="a\u202eb") == "a\u202eb"  # markdown escapes its own cells
