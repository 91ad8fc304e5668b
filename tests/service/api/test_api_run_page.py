"""The run page states what the PR comment states: each kernel's time, and its chart's words.

A verdict always shows a kernel's time now, at baseline and their ratio (time is the ground
truth); the run page showed none, and its roofline image kept bidirectional overrides.
"""

from __future__ import annotations

import html
import re

from factories import make_kernel
from svc_helpers import Service, nightly_run, pr_run

from collectors.schema import KernelRecord

RTL = "\u202eRTL_override_kernel"


def timed(name: str, time_s: float) -> KernelRecord:
    """A Google Benchmark result without counters: a time, no FLOPs, no bytes."""
    return make_kernel(name, flops={}, dram_bytes=None, time_s=time_s)


def page_rows(page: str) -> dict[str, list[str]]:
    """The kernel table of a run page: kernel name -> its other cells, as a browser reads them."""
    body = page.split('<table id="kernel-table">')[1].split("</tbody>")[0]
    rows = {}
    for row in body.split("<tr>")[2:]:
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td.*?</td>", row)]
        rows[cells[0]] = cells[1:]
    return rows


def comment_rows(markdown: str) -> dict[str, tuple[str, str]]:
    """The comment's kernel table: kernel name -> (GPU time share, time baseline → now)."""
    rows = {}
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 3 and cells[1].startswith("`"):
            rows[cells[1].strip("`")] = (cells[2], cells[3])
    return rows


def test_a_time_only_run_page_shows_each_kernels_time_as_the_comment_does(
    service: Service, repo: str
) -> None:
    """Every row read ``– | | | 24.8 % | regressed``: no time, a missing kernel's share 0.0 %."""
    token = service.token(repo)
    steady = [timed("BM_copy/1024", 200e-6), timed("BM_steady", 300e-6), timed("BM_gone", 1e-4)]
    for night in range(8):
        assert service.upload(nightly_run(repo, night, steady), token).status_code == 201
    now = [timed("BM_copy/1024", 400e-6), timed("BM_steady", 300e-6), timed("BM_new", 1e-7)]
    answer = service.upload(pr_run(repo, now), token).json()
    page = service.client.get(f"/runs/{answer['run_id']}").text
    assert "<th>time (baseline → now)</th>" in page
    rows = page_rows(page)
    comment = comment_rows(answer["markdown"])
    assert set(comment) == {"BM_copy/1024", "BM_gone", "BM_new"}  # the unchanged one is counted
    for name, (share, time) in comment.items():  # the comment's figures, cell for cell
        assert (rows[name][-2], rows[name][0]) == (share, time), name
    assert rows["BM_copy/1024"][0] == "200 → 400 µs (2.00×)"
    assert (rows["BM_gone"][-2], rows["BM_new"][-2]) == ("—", "<0.1%")
    assert rows["BM_steady"][0] == "300 → 300 µs (1.00×)"  # unchanged: its time all the same
    story = html.unescape(page.split('<p id="time-story"><strong>')[1].split("</strong>")[0])
    assert story == "GPU time 600 → 700 µs (1.17×) · slowest: BM_copy/1024 200 → 400 µs (2.00×)"


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
