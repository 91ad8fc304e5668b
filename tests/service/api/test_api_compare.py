"""The dashboard's ``/compare`` page: every kernel on every card, through the HTTP client."""

from __future__ import annotations

from device_fleet import datasheet, nights, store
from svc_helpers import Service

A100, H100 = "A100-SXM4-80GB", "H100-SXM5"


def seed(service: Service, repo: str) -> None:
    """30 A100 nights, then 8 on an H100 (the GEMM did not keep up), in ``repo``."""
    a100 = [r.model_copy(update={"repo": repo}) for r in nights(A100, 30)]
    h100 = [r.model_copy(update={"repo": repo}) for r in nights(H100, 8, start=30)]
    store(service.engine, a100, datasheet(A100))
    store(service.engine, h100, datasheet(H100))


def test_compare_page_shows_every_card_and_one_roofline_each(service, repo) -> None:
    seed(service, repo)
    page = service.client.get("/compare", params={"repo": repo, "forecast": "H200-SXM"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert '<table id="compare">' in html
    assert '<tr class="not-kept-up">' in html and '<tr class="kept-up">' in html
    assert "did not keep up" in html and "roofs predict 0.32×" in html
    assert f"<h2>{A100}</h2>" in html and f"<h2>{H100}</h2>" in html
    assert "<h2>H200-SXM</h2>" in html and 'id="assumption"' in html
    assert html.count('<figure class="chart"') == 3
    assert f"/kernels?repo={repo}&amp;key=gemm" in html


def test_compare_page_without_a_repository_is_the_form(service) -> None:
    page = service.client.get("/compare")
    assert page.status_code == 200 and '<form action="/compare"' in page.text
    assert '<table id="compare">' not in page.text


def test_an_unknown_card_is_the_page_with_the_error(service, repo) -> None:
    seed(service, repo)
    page = service.client.get("/compare", params={"repo": repo, "devices": "A100,H1000"})
    assert page.status_code == 422
    assert 'id="error"' in page.text and "unknown card &#39;H1000&#39;" in page.text
    assert "closest known: H100" in page.text
