"""A run past the kernel cap is refused while it is read, not after (issue 32 item 2).

A 60 MB upload of 1.26 M kernels was parsed in full (66 s, 6.2 GB) before the cap refused it.
Each file here holds a broken row after the cap: an answer about the cap, not about that row,
shows the reader stopped at the cap. The command line has the same cap, from the same setting.
"""

from __future__ import annotations

import pytest
from factories import make_kernel, make_run
from svc_helpers import auth

from service.cli import run

CSV = "# device: NVIDIA H100 80GB HBM3\nname,duration_s,flops_fp32,bytes_dram,launches\n"
CAP = 10


def _big_csv(rows: int = 1000) -> str:
    body = "".join(f"k{i},0.001,1e9,1e6,1\n" for i in range(rows))
    return CSV + body + "broken,not-a-number,1e9,1e6,1\n"


def test_a_form_upload_past_the_cap_is_a_413_before_it_is_read_in_full(make_service, repo):
    service = make_service(max_upload_kernels=CAP)
    answer = service.client.post(
        "/api/v1/runs",
        headers=auth(service.token(repo)),
        data={"repo": repo, "commit": "abc"},
        files=[("files", ("big.csv", _big_csv().encode(), "text/csv"))],
    )
    assert answer.status_code == 413, answer.text
    # It said "more than the 10 this service takes": the noun was missing.
    assert answer.json()["detail"] == (
        f"the run holds more than the {CAP} kernels this service takes in one upload "
        "(ROOFGUARD_MAX_UPLOAD_KERNELS); split it by device or benchmark family"
    )


def test_a_json_upload_past_the_cap_is_a_413_before_it_is_validated(make_service, repo):
    service = make_service(max_upload_kernels=CAP)
    kernels = [make_kernel(f"k{i}") for i in range(CAP + 1)]
    body = make_run(repo=repo, kernels=kernels).model_dump_json()
    body = body.replace('"launches":1', '"launches":"many"', 1)  # broken, but never read
    headers = {**auth(service.token(repo)), "Content-Type": "application/json"}
    answer = service.client.post("/api/v1/runs", content=body, headers=headers)
    assert answer.status_code == 413, answer.text
    assert answer.json()["detail"].startswith(
        f"the run holds {CAP + 1} kernels, more than the {CAP} kernels this service takes"
    )


@pytest.mark.parametrize("command", ["ingest", "check"])
def test_the_command_line_has_the_same_cap(tmp_path, capsys, monkeypatch, command):
    monkeypatch.setenv("ROOFGUARD_MAX_UPLOAD_KERNELS", str(CAP))
    report = tmp_path / "big.csv"
    report.write_text(_big_csv(), encoding="utf-8")
    args = [command, str(report), "--repo", "a/b", "--commit", "c1", "--branch", "main"]
    assert run([*args, "--db", f"sqlite:///{tmp_path / 'h.db'}"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"roofguard: error: {report}: more than {CAP} kernels, the most one run may hold "
        "(ROOFGUARD_MAX_UPLOAD_KERNELS); split it by device or benchmark family\n"
    )
    assert not (tmp_path / "h.db").exists()


def test_files_of_one_run_past_the_cap_together_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ROOFGUARD_MAX_UPLOAD_KERNELS", str(CAP))
    paths = []
    for part in range(2):
        path = tmp_path / f"p{part}.csv"
        path.write_text(CSV + "".join(f"k{part}-{i},0.001,1e9,1e6,1\n" for i in range(CAP)))
        paths.append(str(path))
    args = ["ingest", *paths, "--repo", "a/b", "--commit", "c1", "--branch", "main"]
    assert run([*args, "--db", f"sqlite:///{tmp_path / 'h.db'}"]) == 2
    assert f"the run holds 20 kernels, more than the {CAP} one run may hold" in (
        capsys.readouterr().err
    )
