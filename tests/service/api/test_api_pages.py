"""Dashboard pages (server-rendered, autoescaped) and the OpenAPI document (golden)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from factories import make_kernel, make_run
from svc_helpers import Service

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "openapi.json"
NASTY = "gemv<half, 4>&<script>alert(1)</script>"


def seed(service: Service, repo: str, nights: int = 6, device: str | None = None) -> list[int]:
    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=nights)
    ids = []
    for night in range(nights):
        kernels = [
            make_kernel(NASTY, key="gemv_half", time_s=1e-3 * (1.5 if night > 3 else 1)),
            make_kernel("reduce", dram_bytes=8e9, time_s=4e-3),
        ]
        run = make_run(
            repo=repo,
            commit=f"{night:07x}bb",
            timestamp=start + timedelta(days=night),
            kernels=kernels,
            device=device,
        )
        ids.append(service.upload(run, token).json()["run_id"])
    return ids


def test_run_page_shows_the_verdict_with_its_roofline_chart(service, repo) -> None:
    run_id = seed(service, repo)[-1]
    page = service.client.get(f"/runs/{run_id}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert f"Run {run_id}" in html and repo in html
    assert '<figure class="chart" id="roofline"><svg' in html
    assert "gemv&lt;half, 4&gt;&amp;&lt;script&gt;" in html and "<script>" not in html
    assert f"/kernels?repo={repo}&amp;key=gemv_half" in html
    chart = service.client.get(f"/runs/{run_id}/roofline.svg")
    assert chart.headers["content-type"] == "image/svg+xml" and chart.text.lstrip().startswith(
        "<?xml"
    )
    assert service.client.get("/runs/99999").status_code == 404


def test_kernel_page_shows_its_trend_per_device(service, repo) -> None:
    seed(service, repo, nights=3, device="NVIDIA A100-SXM4-80GB")
    ids = seed(service, repo)
    html = service.client.get("/kernels", params={"repo": repo, "key": "gemv_half"}).text
    assert "gemv&lt;half, 4&gt;" in html and "<script>" not in html
    assert html.count('<figure class="chart"><svg') == 2
    assert "<h2>A100-SXM4-80GB</h2>" in html and "<h2>H100-SXM5</h2>" in html
    assert f'<a href="/runs/{ids[-1]}">' in html and "9 measurements on 2 device(s)" in html
    empty = service.client.get("/kernels", params={"repo": repo, "key": "nope"}).text
    assert "No stored measurements" in empty


def test_search_finds_kernels_by_part_of_the_name(service, repo) -> None:
    seed(service, repo, nights=1)
    html = service.client.get("/search", params={"q": "HALF", "repo": repo}).text
    assert "1 kernel(s) match" in html and "key=gemv_half" in html
    assert "0 kernel(s) match" in service.client.get("/search", params={"q": "100%_"}).text
    assert service.client.get("/", follow_redirects=False).headers["location"] == "/search"


def test_digest_page_summarises_the_last_week(service, repo) -> None:
    seed(service, repo, nights=10)
    html = service.client.get("/digest", params={"repo": repo}).text
    assert "Weekly digest" in html and repo in html
    assert "nightly measurements scanned" in html
    assert "No nightly runs" in service.client.get("/digest", params={"repo": "acme/none"}).text


def test_openapi_document_is_golden(service, golden) -> None:
    document = service.client.get("/openapi.json").json()
    assert "/api/v1/runs" in document["paths"] and "/runs/{run_id}" not in document["paths"]
    upload = document["paths"]["/api/v1/runs"]["post"]
    assert set(upload["requestBody"]["content"]) == {"application/json", "multipart/form-data"}
    golden(GOLDEN, json.dumps(document, indent=2, sort_keys=True) + "\n")
