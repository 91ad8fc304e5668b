"""Values past the store's column types are a 422 (exit 2), never a 500 (issue 32 items 3, 4).

PostgreSQL refuses a NUL byte in text and a value longer than its VARCHAR; SQLite takes both.
Every case runs on both, through the upload form, a JSON upload and the command line, and
stores nothing.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from factories import make_kernel, make_run
from svc_helpers import Service, auth

from service.cli import run

CSV = "# device: NVIDIA H100 80GB HBM3\nname,duration_s,flops_fp32,bytes_dram,launches\n"


def _runs_stored(service: Service, repo: str) -> int:
    with service.engine.connect() as conn:
        stmt = sa.text(
            "SELECT count(*) FROM runs JOIN repositories r ON r.id = runs.repo_id "
            "WHERE lower(r.name) = lower(:repo)"
        )
        return int(conn.execute(stmt, {"repo": repo}).scalar_one())


def _form(service: Service, repo: str, fields: dict[str, str], csv: str = "gemv,0.001,1e9,1e6,1\n"):
    data = {"repo": repo, "commit": "abc", "kind": "nightly", "branch": "main", **fields}
    files = [("files", ("r.csv", (CSV + csv).encode(), "text/csv"))]
    return service.client.post(
        "/api/v1/runs", headers=auth(service.token(repo)), data=data, files=files
    )


@pytest.mark.parametrize(
    ("fields", "csv", "detail"),
    [
        ({"commit": "ab\0c"}, None, "commit: contains a NUL byte"),
        ({"branch": "ma\0in"}, None, "branch: contains a NUL byte"),
        ({"runner": "gpu\0-1"}, None, "runner: contains a NUL byte"),
        ({"kind": "pr", "pr": str(2**31)}, None, "pr: "),
        ({}, "ge\0mv,0.001,1e9,1e6,1\n", "contains a NUL byte"),
        ({}, "gemv,0.001,1e9,1e6,2147483648\n", "launches"),
        ({}, "x" * 70_000 + ",0.001,1e9,1e6,1\n", "longer than the 65,536 a kernel name may be"),
        ({}, "gemv,1e308,1e9,1e6,1\n", "longer than a day"),
        ({}, "gemv,0.001,1e300,1e6,1\n", "no device comes near"),
    ],
)
def test_a_form_value_the_store_cannot_hold_is_a_422(service, repo, fields, csv, detail) -> None:
    answer = _form(service, repo, fields, *([csv] if csv else []))
    assert answer.status_code == 422, answer.text
    assert detail in answer.json()["detail"]
    assert _runs_stored(service, repo) == 0


@pytest.mark.parametrize(
    ("change", "detail"),
    [
        ({"commit": "a" * 65}, "commit: "),
        ({"branch": "b" * 256}, "branch: "),
        ({"runner": "r" * 300}, "runner: "),
        ({"kernels": [make_kernel("k" * 65_537)]}, "kernels.0.name: 65,537 bytes"),
        ({"kernels": [make_kernel("gemv", time_s=1e6)]}, "kernels.0.duration_s: "),
    ],
)
def test_a_json_value_the_store_cannot_hold_is_a_422(service, repo, change, detail) -> None:
    answer = service.upload(make_run(repo=repo, **change), service.token(repo))
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith("request body: ") and detail in answer.text
    assert _runs_stored(service, repo) == 0


def test_the_name_cap_is_a_setting(make_service, repo) -> None:
    service = make_service(max_name_bytes=4096)
    long_run = make_run(repo=repo, kernels=[make_kernel("k" * 5000)])
    answer = service.upload(long_run, service.token(repo))
    assert answer.status_code == 422 and "5,000 bytes, longer than the 4,096" in answer.text
    # the corpus's longest names (CUTLASS templates, 4.8 KB) pass the default
    assert make_service().upload(long_run, service.token(repo)).status_code == 201


@pytest.mark.parametrize(
    ("flags", "csv", "detail"),
    [
        (["--commit", "c" * 65], None, "commit: 65 characters, at most 64"),
        (["--runner", "r" * 256], None, "runner: 256 characters"),
        ([], "ge\0mv,0.001,1e9,1e6,1\n", "contains a NUL byte"),
        ([], "x" * 70_000 + ",0.001,1e9,1e6,1\n", "ROOFGUARD_MAX_NAME_BYTES"),
    ],
)
def test_the_command_line_refuses_them_with_exit_2(
    db_url, repo, tmp_path, capsys, flags, csv, detail
) -> None:
    report = tmp_path / "r.csv"
    report.write_text(CSV + (csv or "gemv,0.001,1e9,1e6,1\n"), encoding="utf-8")
    args = ["ingest", str(report), "--repo", repo, "--branch", "main", "--db", db_url]
    code = run([*args, *(flags if "--commit" in flags else ["--commit", "c1", *flags])])
    err = capsys.readouterr().err
    assert code == 2 and detail in err and err.count("\n") == 1, err
    engine = sa.create_engine(db_url)
    if sa.inspect(engine).has_table("repositories"):  # a new SQLite store is not even made
        with engine.connect() as conn:
            stmt = sa.text("SELECT count(*) FROM repositories WHERE lower(name) = lower(:r)")
            assert conn.execute(stmt, {"r": repo}).scalar_one() == 0
    engine.dispose()


def test_the_command_line_refuses_a_pr_past_the_stores_integers(tmp_path, capsys) -> None:
    report = tmp_path / "r.csv"
    report.write_text(CSV + "gemv,0.001,1e9,1e6,1\n", encoding="utf-8")
    args = ["ingest", str(report), "--repo", "a/b", "--commit", "c", "--branch", "main"]
    assert run([*args, "--pr", str(2**31), "--db", f"sqlite:///{tmp_path / 'h.db'}"]) == 2
    assert "--pr: Input should be less than or equal to 2147483647" in capsys.readouterr().err


def test_lists_the_api_returns_come_in_pages(service, repo) -> None:
    from factories import make_kernel as kernel

    token = service.token(repo)
    runs = [
        make_run(repo=repo, commit=f"c{n}", kernels=[kernel("gemv", time_s=1e-3 * (1 + n))])
        for n in range(5)
    ]
    ids = [service.upload(one, token).json()["run_id"] for one in runs]
    headers = auth(token)
    params = {"repo": repo, "key": "gemv", "limit": 2, "offset": 1}
    page = service.client.get("/api/v1/kernels/history", params=params, headers=headers).json()
    assert page["count"] == 2 and [p["commit"] for p in page["data"]] == ["c1", "c2"]
    too_many = service.client.get(
        "/api/v1/kernels/history", params={**params, "limit": 10_001}, headers=headers
    )
    assert too_many.status_code == 422
    url = f"/api/v1/runs/{ids[-1]}/findings"
    assert service.client.get(url, params={"limit": 1}, headers=headers).json()["count"] <= 1
    beyond = service.client.get(url, params={"offset": 10_000}, headers=headers).json()
    assert beyond["data"] == [] and beyond["count"] == 0
