"""The dashboard's charts say what ``roofguard plot`` says of the same history.

The kernel page (the page PR comments and digest links open) drew the nightly line alone: its
axis autoscaled to the noise, so ±1% swings looked like drops, and a confirmed regression had
no marker and no commit. It now draws ``plot kernel``'s chart, from the same code. And a run
with no kernel placed showed empty log-log axes under one roof picked for no reason, where
``plot run`` refuses the run and says why: the run page says so too.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from factories import make_kernel, make_run
from svc_helpers import Service

from collectors.schema import KernelRecord
from service.cli import run as cli

GEMM = "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_nn_align8>"
NIGHTS, DROP_AT = 24, 15
#: What the charts mark: changes, the baseline, bindings, runners, modes (``trends``).
MARKS = re.compile(r'id="((?:change|binding|runner):\d+|baseline-band|baseline-median|mode-\w+)"')


def _gemm(night: int) -> list[KernelRecord]:
    """A GEMM at 70% of its roof within ±1%, at 50% from ``DROP_AT`` on."""
    percent = (70.0 if night < DROP_AT else 50.0) * (1 + 0.01 * math.sin(night * 2.4))
    flops = 2 * 256 * 4096 * 4096.0
    time_s = flops / 989e12 / (percent / 100)
    return [make_kernel(GEMM, key="gemm", flops={"tensor_bf16": flops}, time_s=time_s)]


def _upload(service: Service, repo: str, nights: int, kernels=_gemm) -> list[int]:
    """Nightly runs of ``kernels(night)``, one a night up to yesterday; their run ids."""
    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=nights + 1)
    ids = []
    for night in range(nights):
        run = make_run(
            repo=repo,
            commit=f"{night:07x}bb",
            timestamp=start + timedelta(days=night),
            kernels=kernels(night),
        )
        answer = service.upload(run, token)
        assert answer.status_code in (200, 201), answer.text
        ids.append(int(answer.json()["run_id"]))
    return ids


def test_the_kernel_page_marks_the_change_and_baseline_plot_kernel_draws(
    service: Service, repo: str, db_url: str, tmp_path: Path
) -> None:
    _upload(service, repo, NIGHTS)
    page = service.client.get("/kernels", params={"repo": repo, "key": "gemm"}).text
    chart = page.split("<h2>H100-SXM5</h2>")[1].split("</figure>")[0]
    marks = set(MARKS.findall(chart))
    assert {"change:0", "baseline-band", "baseline-median"} <= marks
    assert f"{DROP_AT:07x}bb"[:8] in chart  # the change's label: its first commit, short
    # The CLI's chart of the same kernel has the same marks, drawn by the same code.
    svg = tmp_path / "trend.svg"
    args = ["--repo", repo, "--device", "H100-SXM5", "--db", db_url, "--output", str(svg)]
    assert cli(["plot", "kernel", "gemm", *args]) == 0
    assert set(MARKS.findall(svg.read_text())) == marks


def test_a_kernel_page_of_steady_nights_has_its_band_and_no_change(
    service: Service, repo: str
) -> None:
    """Noise is not a change: the band holds the nights, nothing is marked."""
    _upload(service, repo, DROP_AT)  # the nights before the drop
    page = service.client.get("/kernels", params={"repo": repo, "key": "gemm"}).text
    marks = set(MARKS.findall(page))
    assert "baseline-band" in marks and not {m for m in marks if m.startswith("change:")}


def test_a_run_with_no_kernel_placed_says_why_instead_of_an_empty_chart(
    service: Service, repo: str, db_url: str, tmp_path: Path, capsys
) -> None:
    """A run timed alone: no roof picked for nothing, ``plot run``'s words instead."""
    timed = [make_kernel("BM_fib/20", flops={}, dram_bytes=None, time_s=2e-5)]
    [run_id] = _upload(service, repo, 1, lambda night: timed)
    page = service.client.get(f"/runs/{run_id}").text
    assert 'id="roofline"' not in page and "<svg" not in page
    [note] = re.findall(r'<p class="muted" id="no-chart">(.*?)</p>', page)
    assert (
        cli(["plot", "run", str(run_id), "--db", db_url, "--output", str(tmp_path / "x.svg")]) != 0
    )
    refusal = capsys.readouterr().err.split(f"{run_id}: ", 1)[1].strip()
    assert refusal in note, "the page says why in plot run's words"
    image = service.client.get(f"/runs/{run_id}/roofline.svg")  # linked from PR comments
    assert image.status_code == 200 and 'id="no-chart"' in image.text
    assert 'id="roof:' not in image.text and 'id="kernels"' not in image.text
