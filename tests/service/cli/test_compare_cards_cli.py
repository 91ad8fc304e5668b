"""``roofguard compare BASE --against PR`` across cards, read as ``roofguard check`` reads them.

Two reports on two cards give each kernel the figure the check gives its first night on the
new card (percent of the roof the base's work has there: ``rules.Prediction.percent_now``), to
a slower card as to a faster one and where the ridge moved; a card without a peak the work
needs judges the kernel by time alone, and says so.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from device_fleet import Work, datasheet, nightly_check, nights, store

from service.cli import run
from service.store.db import open_store

A100, H100, B100 = "A100-SXM4-80GB", "H100-SXM5", "B100"
#: A memory-bound GEMV, a bf16 GEMM that kept up, one 25% behind on the A100, and a bf16
#: kernel at the ridge: memory-bound on an H100 (ridge 295), compute-bound on an A100 (153).
KERNELS = {
    "gemv": Work({"fp32": 5e8}, {"dram": 1e9}, {A100: 85.0, H100: 85.0, B100: 85.0}),
    "gemm": Work({"tensor_bf16": 2e12}, {"dram": 4e9}, {A100: 80.0, H100: 80.0, B100: 80.0}),
    "behind": Work({"tensor_bf16": 2e12}, {"dram": 4e9}, {A100: 60.0, H100: 80.0, B100: 60.0}),
    "flip": Work({"tensor_bf16": 2e11}, {"dram": 1e9}, {A100: 80.0, H100: 80.0, B100: 80.0}),
}
#: Every base night at the same time (the wobble's first step): the check's level is the night.
STEP = 8


def _history(folder: Path, card: str) -> str:
    url = f"sqlite:///{folder / 'history.db'}"
    engine = open_store(url)
    try:
        runs = [nights(card, 1, start=STEP * i, kernels=KERNELS)[0] for i in range(30)]
        store(engine, runs, datasheet(card))
    finally:
        engine.dispose()
    return url


def _compare(capsys, base: Path, head: Path, fmt: str) -> str:
    assert run(["compare", str(base), "--against", str(head), "--format", fmt]) == 0
    return str(capsys.readouterr().out)


@pytest.mark.parametrize(("before", "after"), [(A100, H100), (H100, A100)])
def test_compare_gives_each_kernel_the_checks_figure_to_either_card(
    before: str, after: str, tmp_path: Path, capsys
) -> None:
    """H100 -> A100 read the ridge kernel that kept up (2.15× of 2.15×) as 61.2% of dram."""
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    base.write_text(nights(before, 1, kernels=KERNELS)[0].model_dump_json())
    pr = nights(after, 1, start=STEP * 30, kernels=KERNELS)[0]
    head.write_text(pr.model_dump_json())
    verdict = nightly_check(tmp_path, _history(tmp_path, before), pr)
    checked = {k["key"]: k["percent_of_baseline_roof"] for k in verdict["kernels"]}
    compared = json.loads(_compare(capsys, base, head, "json"))
    by = {k["key"]: k for k in compared["kernels"]}
    for key, figure in checked.items():
        assert by[key]["percent_of_baseline_roof"] == pytest.approx(figure, abs=0.05), key
    assert by["flip"]["percent_of_baseline_roof"] == pytest.approx(80.0)
    assert by["behind"]["percent_of_baseline_roof"] == pytest.approx(
        KERNELS["behind"].percent[after]
    )
    assert (
        by["flip"]["baseline_roof_binding"] == by["flip"]["binding"] != by["flip"]["base_binding"]
    )
    text = _compare(capsys, base, head, "text")
    flip = next(line for line in text.splitlines() if line.startswith("flip"))
    own = f"80.0% of {by['flip']['base_binding']} → 80.0% of {by['flip']['binding']}"
    assert own in flip and "unchanged" in flip
    assert own in _compare(capsys, base, head, "markdown").replace("\\", "")


def test_a_card_without_the_works_peak_judges_by_time_alone_and_says_so(
    tmp_path: Path, capsys
) -> None:
    """The B100 has no fp32 peak in the catalog: its fp32 kernels cannot be read on a roof."""
    assert "fp32" not in datasheet(B100).peak_flop_per_s
    kernels = {**KERNELS, "fp32": Work({"fp32": 1e11}, {"dram": 1e8}, {H100: 50.0, B100: 80.0})}
    base, head = tmp_path / "h100.json", tmp_path / "b100.json"
    base.write_text(nights(H100, 1, kernels=kernels)[0].model_dump_json())
    sheet = datasheet(B100)  # the times its fp32 units would give at 60 TFLOP/s
    timed = dataclasses.replace(sheet, peak_flop_per_s={**sheet.peak_flop_per_s, "fp32": 6e13})
    head.write_text(nights(B100, 1, kernels=kernels, roof=timed)[0].model_dump_json())
    data = json.loads(_compare(capsys, base, head, "json"))
    by = {k["key"]: k for k in data["kernels"]}
    why = "B100 has no fp32 peak in the catalog"
    assert {k for k, v in by.items() if v["by_time_alone"]} == {"gemv", "fp32"}
    assert by["fp32"]["by_time_alone"] == by["gemv"]["by_time_alone"] == why
    assert by["fp32"]["percent_of_baseline_roof"] is None  # no fp32 roof on the B100
    assert by["gemm"]["by_time_alone"] is None and by["gemm"]["expected_time_ratio"]
    (note,) = data["notes"]
    assert note.startswith(
        f"2 kernels judged by time alone (beyond ±5%), not against the roofs: {why}"
    )
    for fmt in ("text", "markdown"):
        out = _compare(capsys, base, head, fmt).replace("\\", "")  # markdown's escapes
        assert "2 kernels judged by time alone" in out and why in out
        row = next(line for line in out.splitlines() if "fp32" in line and "faster" in line)
        assert "50.0% of fp32 → no fp32 roof" in row and "faster, by time alone" in row
