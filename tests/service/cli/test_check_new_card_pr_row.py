"""A PR on a card main moved to a night ago: its rows state what the gate judged it against.

30 A100 nights, one H100 night, then a PR whose GEMV is 25% slower. The gate judged it on the
A100's level scaled to the H100's night (``rules.newcard``): level 84.0% over 31 runs, −20%.
The markdown row read ``84.0% ±0.3 (n=31, A100-SXM4-80GB)``, a figure never measured on the
A100 (85%), and the JSON row said the A100's level, 30 runs and −32%: a bot read another fall
than the table. A kernel whose work binds another resource on the H100 (the ridge moved) had
the H100's binding beside the A100's level.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from device_fleet import KERNELS, REPO, Work, datasheet, nights, slowed, store, stored_history

from collectors.schema import RunKind
from service.cli import run
from service.store.db import open_store

A100, H100 = "A100-SXM4-80GB", "H100-SXM5"
#: Intensity 200: compute-bound on the A100 (bf16 ridge 153), memory-bound on the H100 (295).
FLEET = {**KERNELS, "attention": Work({"tensor_bf16": 2e11}, {"dram": 1e9}, {A100: 70, H100: 70})}


def _pr_check(tmp_path: Path, fmt: str) -> str:
    url = stored_history(tmp_path, A100, FLEET)
    engine = open_store(url)
    try:
        store(engine, nights(H100, 1, start=30, kernels=FLEET), datasheet(H100))
    finally:
        engine.dispose()
    [pr] = nights(H100, 1, start=31, kernels=FLEET, kind=RunKind.PR)
    report, out = tmp_path / "pr.json", tmp_path / f"verdict.{fmt}"
    report.write_text(slowed(pr, 1.25).model_dump_json())
    argv = ["check", str(report), "--repo", REPO, "--commit", "pr1", "--branch", "feature"]
    argv += ["--pr", "7", "--base-sha", "n0030", "--db", url]
    assert run([*argv, "--format", fmt, "--output", str(out)]) == 1
    return out.read_text()


def test_the_json_row_states_the_level_the_gate_judged_the_pr_against(tmp_path) -> None:
    verdict = json.loads(_pr_check(tmp_path, "json"))
    [finding] = [f for f in verdict["findings"] if f["kernel"] == "gemv"]
    gate = finding["numbers"]
    rows = {k["key"]: k for k in verdict["kernels"]}
    base = rows["gemv"]["baseline"]
    assert (base["center"], base["n"]) == (gate["level"], gate["baseline_n"])
    assert base["center"] == pytest.approx(84.0, abs=0.5) and base["n"] == 31
    assert base["relative_change"] == gate["relative_change"] == pytest.approx(-0.2, abs=0.01)
    assert base["spread"] == gate["noise_used"]
    assert (base["device"], base["scaled_to"], base["scaled_n"]) == (A100, H100, 30)
    own = base["device_level"]  # the A100's own level, as measured there
    assert (own["device"], own["n"], own["binding"]) == (A100, 30, "dram")
    assert own["center"] == pytest.approx(85.0, abs=0.5)
    gemv = rows["gemv"]  # percent now / the A100's level = the roofs' ratio / the measured one
    ratio = gemv["expected_time_ratio"] / gemv["time_ratio"]
    assert gemv["percent_of_baseline_roof"] / own["center"] == pytest.approx(ratio)
    attention = rows["attention"]["baseline"]  # each figure with its own card's binding
    assert (attention["binding"], attention["device_level"]["binding"]) == ("dram", "tensor_bf16")


def test_the_markdown_row_labels_the_level_as_the_other_cards_scaled(tmp_path) -> None:
    text = _pr_check(tmp_path, "markdown")
    [row] = [line for line in text.splitlines() if line.startswith("| ❌ | `gemv`")]
    assert f"(n=31: 30 on {A100} scaled to {H100}\\, 1 on {H100})".replace("-", "\\-") in row
    assert "(−20." in row and "(n=30" not in row
