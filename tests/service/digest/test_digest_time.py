"""The week the demo's broken PR landed on main, through ``roofguard digest`` (issue 13).

The demo's 30 nights, then its pull request's report ingested as three nightly runs of main:
the verify GEMM fell off the tensor cores (15x slower at the same percent of a lower roof) and
the fused residual-add + RMSNorm split in two. A digest that tracked percent of roof only said
"0 new regressions, 0 regime flips"; it must list all three.
"""

from __future__ import annotations

import json
import re

import pytest
from demo_cli import VERIFY, demo_db, invoke

from service.cli.demo_cmd import DEMO_CONFIG, DEMO_REPO
from service.demo.generate import DATA_DIR

FUSED = "fused_add_rmsnorm_kernel<__nv_bfloat16, 4096>"
PERIOD = ["--from", "2026-11-27", "--to", "2026-12-03"]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    url = demo_db(tmp_path_factory, "landed")
    # The PR lands: three runs of main run its code, after the demo's last night (29 Nov)
    # and before today (ingest refuses runs from the future).
    for night, when in enumerate(("2026-11-30T03:00", "2026-11-30T06:00", "2026-11-30T09:00"), 1):
        invoke(
            [
                "ingest",
                str(DATA_DIR / "pr-1234.csv"),
                "--repo",
                DEMO_REPO,
                "--commit",
                f"landed{night}",
                "--branch",
                "main",
                "--kind",
                "nightly",
                "--timestamp",
                f"{when}:00+00:00",
                "--config",
                str(DEMO_CONFIG),
                "--db",
                url,
            ]
        )
    return url


def digest(db: str, *extra: str) -> str:
    return invoke(["digest", "--db", db, *PERIOD, "--config", str(DEMO_CONFIG), *extra])


def test_json_lists_the_binding_flip_the_time_regression_and_the_split(db):
    data = json.loads(digest(db, "--json"))
    (flip,) = data["binding_flips"]
    assert (flip["kernel"], flip["from_binding"], flip["to_binding"]) == (
        VERIFY,
        "tensor_bf16",
        "fp32",
    )
    assert flip["time_ratio"] == pytest.approx(15.1, rel=0.01)
    assert (flip["from_commit"], flip["to_commit"])[1] == "landed1"
    (slower,) = data["time_regressions"]
    assert slower["kernel"] == VERIFY and slower["ratio"] == pytest.approx(15.1, rel=0.01)
    assert slower["to_commit"] == "landed1" and slower["to_binding"] == "fp32"
    (gone,) = data["vanished"]
    assert gone["kernel"] == FUSED and gone["change"] == "split"
    assert gone["replaced_by"] == [
        "residual_add_kernel<__nv_bfloat16>",
        "rmsnorm_kernel<__nv_bfloat16, 4096>",
    ]
    assert gone["to_commit"] == "landed1"
    headline = digest(db).splitlines()[2]
    assert headline.startswith("**1 time regression, ")
    assert "1 binding flip, 1 vanished or split kernel" in headline


def test_markdown_sections_with_commit_ranges(db):
    md = digest(db)
    # The headline leads with time: "0 new regressions" first read as a quiet week. Percent
    # of roof is like for like, so the GEMM's fall is a regression there too (70% -> 4.8% of
    # its tensor_bf16 roof), not a flat line at the fp32 roof's 70%.
    assert "**1 time regression, 1 new regression, " in md
    regressions = md.split("## New regressions")[1].split("##")[0]
    assert "72.0 % → 4.8 %" in regressions and "█▇██▁▁▁" in regressions
    section = md.split("## Time regressions")[1].split("##")[0]
    assert f"`{VERIFY}`" in section and "0.34 → 5.10 ms (15.1×)" in section
    assert "…landed1`" in section and "tensor_bf16 → fp32" in section
    flips = md.split("## Binding flips (precision or tier)")[1].split("##")[0]
    assert "15.1× the time" in flips
    vanished = md.split("## Vanished or split kernels")[1].split("##")[0]
    assert "split into 2" in vanished and "5.37 → 6.75 µs (1.26×)" in vanished


def test_html_charts_draw_every_roof_and_time(db, tmp_path):
    page = tmp_path / "digest.html"
    digest(db, "--html", str(page))
    html = page.read_text(encoding="utf-8")
    roofs = set(re.findall(r'id="roof:([a-z0-9_]+):dram"', html))
    assert {"tensor_bf16", "fp32"} <= roofs  # bf16 GEMMs under their own roof
    assert "time (µs)" in html  # the time regression's trend chart


def test_plot_kernel_draws_time(db, tmp_path):
    out = tmp_path / "trend.svg"
    args = ["plot", "kernel", VERIFY, "--repo", DEMO_REPO, "--db", db, "--metric", "time"]
    invoke([*args, "--output", str(out)])
    svg = out.read_text(encoding="utf-8")
    assert "time (µs)" in svg and 'id="series"' in svg
