"""Two runners of one model whose measured roofs differ: percent of roof stays comparable.

Two A100 runners: the second's HBM delivers 10% less than the first's (clocks, cooling, a
weaker die). Kernels run at the same percent of *their runner's* measured roof, so on the
second runner they take 11% longer. Judged on measured roofs that is no change; on the
datasheet roof, which both runners share, it reads as a drop.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from calibrate_factories import make_ceilings
from device_fleet import KERNELS, REPO, Work, datasheet, nights, store

from collectors.schema import RunKind
from service.calibrate.storage import save_ceilings
from service.cli import run
from service.cli.common import store_session
from service.store.db import open_store

A100 = "A100-SXM4-80GB"
FIRST, SECOND = "a100-runner-1", "a100-runner-2"


def ceilings(runner: str, scale: float):
    made = make_ceilings(
        device="NVIDIA A100-SXM4-80GB",
        runner=runner,
        bandwidth={"dram": 1.80e12 * scale},
        peaks={"fp32": 18.5e12 * scale, "tensor_bf16": 270e12 * scale},
    )
    return made.model_copy(update={"catalog_id": A100})


RUNNERS = {FIRST: ceilings(FIRST, 1.0), SECOND: ceilings(SECOND, 0.9)}
#: Both kernels at the same percent of their runner's measured roof.
KEPT = {key: Work(w.flops, w.nbytes, {A100: w.percent[A100]}) for key, w in KERNELS.items()}


def history(tmp_path: Path, source: str) -> str:
    """30 nights on the first runner, placed on its measured roof or the datasheet's."""
    url = f"sqlite:///{tmp_path / f'{source}.db'}"
    roof = RUNNERS[FIRST].roof() if source == "measured" else datasheet(A100)
    engine = open_store(url)
    try:
        runs = nights(A100, 30, kernels=KEPT, roof=RUNNERS[FIRST].roof(), runner=FIRST)
        store(engine, runs, roof)
    finally:
        engine.dispose()
    with store_session(url) as session:
        for made in RUNNERS.values():
            save_ceilings(session=session, ceilings=made)
    return url


def check_on_second_runner(tmp_path: Path, url: str, source: str) -> dict:
    pr = nights(A100, 1, start=40, kernels=KEPT, roof=RUNNERS[SECOND].roof(), runner=SECOND)
    report = tmp_path / "pr.json"
    report.write_text(pr[0].model_copy(update={"kind": RunKind.PR}).model_dump_json())
    out = tmp_path / f"{source}.json"
    argv = ["check", str(report), "--repo", REPO, "--commit", "pr1", "--branch", "feature"]
    argv += ["--runner", SECOND, "--roof", source, "--db", url]
    assert run([*argv, "--format", "json", "--output", str(out)]) in (0, 1)
    return json.loads(out.read_text())


def test_measured_roofs_keep_percent_of_roof_comparable_across_runners(tmp_path) -> None:
    verdict = check_on_second_runner(tmp_path, history(tmp_path, "measured"), "measured")
    assert verdict["roof"] == f"{A100} (measured)"
    assert verdict["conclusion"] == "pass" and not verdict["findings"]
    for kernel in verdict["kernels"]:
        assert kernel["status"] == "unchanged"
        assert kernel["percent_of_roof"] == pytest.approx(kernel["baseline"]["center"], rel=5e-3)
        assert kernel["time_ratio"] == pytest.approx(1 / 0.9, rel=5e-3)


def test_the_datasheet_roof_reads_the_slower_runner_as_a_drop(tmp_path) -> None:
    verdict = check_on_second_runner(tmp_path, history(tmp_path, "datasheet"), "datasheet")
    # 10% below a quiet history: far beyond any one-night dip the kernel has shown, so
    # it fails at once (rules.stats.dips) rather than waiting as a suspect.
    assert verdict["conclusion"] == "fail"
    assert {f["rule"] for f in verdict["findings"]} == {"roof-drop"}
    assert {k["status"] for k in verdict["kernels"]} == {"regressed"}


def test_compare_by_runner_shows_it(tmp_path, capsys) -> None:
    url = history(tmp_path, "measured")
    engine = open_store(url)
    try:
        runs = nights(A100, 8, start=30, kernels=KEPT, roof=RUNNERS[SECOND].roof(), runner=SECOND)
        store(engine, runs, RUNNERS[SECOND].roof())
    finally:
        engine.dispose()
    argv = ["compare", "--repo", REPO, "--db", url, "--roof", "measured", "--by-runner"]
    assert run([*argv, "--format", "json"]) == 0
    rows = {(r["kernel"], r["device"]): r for r in json.loads(capsys.readouterr().out)}
    first, second = f"{A100} / {FIRST}", f"{A100} / {SECOND}"
    for key in KEPT:
        assert rows[key, first]["percent_of_roof"] == pytest.approx(
            rows[key, second]["percent_of_roof"], rel=5e-3
        )
        assert rows[key, second]["expected_time_ratio"] == pytest.approx(1 / 0.9)
        assert rows[key, second]["keeping"] == "kept-up"
