"""A form upload's kernel the store cannot hold is named by its file as uploaded and its row.

The service named the place in the run merged from every file ("uploaded files:
kernels.3.name: 70,000 bytes"), which is no row of any file, where ``roofguard ingest`` of
the same files names the file, the row and the field (service/README.md promises so).
"""

from __future__ import annotations

from svc_helpers import Service, auth

CSV = "# device: NVIDIA H100 80GB HBM3\nname,duration_s,flops_fp32,bytes_dram,launches\n"
ROWS = "gemv,0.001,1e9,1e6,1\naxpy,0.002,1e9,1e6,1\n"
OTHER = "scal,0.001,1e9,1e6,1\ndot,0.002,1e9,1e6,1\n"


def _post(service: Service, repo: str, files: list[tuple[str, str]]):
    data = {"repo": repo, "commit": "abc", "kind": "nightly", "branch": "main"}
    parts = [("files", (name, (CSV + rows).encode(), "text/csv")) for name, rows in files]
    return service.client.post(
        "/api/v1/runs", headers=auth(service.token(repo)), data=data, files=parts
    )


def test_a_long_kernel_name_is_named_by_its_file_and_row(service: Service, repo: str) -> None:
    long = "L" * 70_000 + ",0.003,1e9,1e6,1\n"
    answer = _post(service, repo, [("short.csv", ROWS), ("ci/out/long.csv", OTHER + long)])
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail.startswith("long.csv, row 5, field 'name': 70,000 bytes, longer than"), detail
    assert "kernels." not in detail and "short.csv" not in detail
