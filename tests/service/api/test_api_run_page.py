"""The run page and its roofline image: what a browser shows of a run."""

from __future__ import annotations

import re

from factories import make_kernel
from svc_helpers import Service, nightly_run

RTL = "\u202eRTL_override_kernel"


def test_the_roofline_image_drops_bidirectional_overrides_as_the_pages_do(
    service: Service, repo: str
) -> None:
    """The SVG PR comments link kept U+202E in a label and its id (read reversed)."""
    token = service.token(repo)
    kernels = [make_kernel(RTL, key="rtl"), make_kernel("gemv", time_s=2e-3)]
    run_id = service.upload(nightly_run(repo, 0, kernels), token).json()["run_id"]
    svg = service.client.get(f"/runs/{run_id}/roofline.svg").text
    assert "\u202e" not in svg
    assert '<g id="label: RTL_override_kernel">' in svg and "> RTL_override_kernel<" in svg
    page = service.client.get(f"/runs/{run_id}").text
    assert "\u202e" not in page  # and the page's chart keeps the label's tooltip
    assert re.search(r'<g id="label: RTL_override_kernel">\s*<title> RTL_override_kernel<', page)
