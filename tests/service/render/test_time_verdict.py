"""Issue 13 through the real commands: time first, like-for-like roofs, MFU, terminal output.

The demo's pull request makes the verify GEMM fall off the tensor cores (0.34 ms -> 5.10 ms)
and splits the fused residual-add + RMSNorm. Every assertion reads the output of
``roofguard demo`` or ``roofguard check`` on a real SQLite store.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from demo_cli import VERIFY, check_demo_pr, demo_db
from typer.testing import CliRunner

from rules.verdict import KernelStatus, Verdict
from service.cli import build_app
from service.cli.demo_cmd import DEMO_CONFIG, demo_commit

GOLDEN = Path(__file__).parents[1] / "golden"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    """A store holding the demo's 30 nights (and its PR run)."""
    return demo_db(tmp_path_factory, "time")


@pytest.fixture(scope="module")
def verdict(db) -> Verdict:
    return Verdict.model_validate_json(check(db, "--format", "json"))


def check(db: str, *extra: str, config: Path = DEMO_CONFIG) -> str:
    """The demo's PR against the last night's commit."""
    return check_demo_pr(db, "--base-sha", demo_commit("night-30"), *extra, config=config)


def kernel(verdict: Verdict, key: str):
    return next(k for k in verdict.kernels if k.key == key)


def group(verdict: Verdict, name: str):
    return next(g for g in verdict.groups if g.name == name)


# 1. Time is first-class.


def test_json_carries_time_now_baseline_and_ratio(verdict):
    gemm = kernel(verdict, VERIFY)
    assert gemm.time_s == pytest.approx(5.10e-3, rel=0.01)
    assert gemm.baseline is not None and gemm.baseline.time_s == pytest.approx(0.338e-3, rel=0.01)
    assert gemm.time_ratio == pytest.approx(15.1, rel=0.01)
    assert verdict.time_s == pytest.approx(7.34e-3, rel=0.01)
    assert verdict.baseline is not None and verdict.baseline.time_s == pytest.approx(
        2.58e-3, rel=0.01
    )
    assert verdict.time_ratio == pytest.approx(2.84, rel=0.01)
    verify = group(verdict, "speculative verify")
    assert verify.baseline is not None and verify.baseline.time_s == pytest.approx(
        0.338e-3, rel=0.01
    )
    assert verify.time_ratio == pytest.approx(15.1, rel=0.01)


def test_same_work_slower_is_a_time_regression_whatever_percent_of_roof_says(verdict):
    found = [f for f in verdict.findings if f.kernel == VERIFY and f.rule == "time-regression"]
    assert len(found) == 1 and found[0].severity == "fail"
    assert "15.1× the time, same FLOPs and bytes" in found[0].message
    assert kernel(verdict, VERIFY).status == KernelStatus.REGRESSED


def test_markdown_shows_time_and_names_the_largest_time_regression(db):
    md = check(db, "--format", "markdown").replace("\\", "")
    row = next(line for line in md.splitlines() if line.startswith("| ❌ | `verify_gemm"))
    assert "0.34 → 5.10 ms (15.1×)" in row
    headline = next(line for line in md.splitlines() if line.startswith("⏱️"))
    assert "GPU time 2.58 → 7.34 ms (2.84×)" in headline
    assert f"slowest: `{VERIFY}` 0.34 → 5.10 ms (15.1×)" in headline
    assert "bound by fp32 instead of tensor_bf16" in headline


# 2. Like-for-like roofs.


def test_percent_of_the_baseline_roof_beside_the_new_one(verdict):
    gemm = kernel(verdict, VERIFY)
    assert gemm.percent_of_roof == pytest.approx(70.5, abs=0.2)
    assert gemm.percent_of_baseline_roof == pytest.approx(4.7, abs=0.2)
    assert gemm.baseline is not None and gemm.baseline.binding == "tensor_bf16"
    steady = [k for k in verdict.kernels if k.baseline and k.baseline.binding == k.binding]
    assert steady and all(k.percent_of_baseline_roof == k.percent_of_roof for k in steady)


def test_roof_drop_judges_like_for_like_and_regime_flip_gives_the_numbers(verdict):
    by_rule = {f.rule: f for f in verdict.findings if f.kernel == VERIFY}
    assert by_rule["roof-drop"].numbers["current"] == pytest.approx(4.7, abs=0.2)
    assert "of roof (tensor_bf16)" in by_rule["roof-drop"].message
    flip = by_rule["regime-flip"].message
    assert re.search(r"level 71\.\d% over \d+ runs → 4\.\d% of the tensor_bf16 roof", flip), flip
    assert "(15.1× slower)" in flip


# 3. MFU against the right peak.


def test_group_mfu_against_the_baselines_dominant_precision(verdict):
    verify = group(verdict, "speculative verify")
    assert verify.mfu_precision == "tensor_bf16"
    assert verify.mfu == pytest.approx(0.048, abs=0.003)
    assert verify.mfu_baseline is not None
    assert verify.mfu_baseline.center == pytest.approx(0.718, abs=0.005)


def test_group_mfu_against_the_declared_precision(db, tmp_path):
    config = tmp_path / "roofguard.toml"
    text = DEMO_CONFIG.read_text(encoding="utf-8")
    text = text.replace("target_percent = 65", 'target_percent = 65\nprecision = "fp32"')
    config.write_text(text, encoding="utf-8")
    # Its own commit: the shared PR run, judged under another config, would be judged again.
    json_text = check(db, "--format", "json", "--commit", "declared-fp32", config=config)
    declared = Verdict.model_validate_json(json_text)
    verify = group(declared, "speculative verify")
    gemm = kernel(declared, VERIFY)
    # All FLOPs are fp32 now and compute-bound: MFU is the percent of the fp32 roof.
    assert verify.mfu == pytest.approx(gemm.percent_of_roof / 100, rel=1e-6)
    # The baseline's nights ran on the tensor cores, faster than fp32: each reads against
    # the tensor_bf16 peak it ran at (71.9%), not 1063% of fp32, and the mix names no one.
    assert verify.mfu_baseline is not None
    assert verify.mfu_baseline.center == pytest.approx(0.718, abs=0.005)
    assert verify.mfu_precision is None


# 5. Readable everywhere.


def test_terminal_view_is_a_table_in_words_not_escaped_markdown(db, golden):
    text = check(db, "--format", "text")
    assert "\\_" not in text and "<details>" not in text and "|---" not in text
    row = next(line for line in text.splitlines() if line.startswith("verify_gemm"))
    assert "0.34 → 5.10 ms (15.1×)" in row and "71.9 → 4.8% of tensor_bf16" in row
    assert "compute (tensor_bf16 → fp32)" in row
    assert re.search(r"time +5\.10 ms", text) and "± 0.6 pts" in text
    assert "percent_of_roof" not in text and "baseline_center" not in text  # words, not keys
    golden(GOLDEN / "demo-verdict.txt", text)


def test_markdown_goes_to_files_and_is_the_demo_golden(db, tmp_path, golden):
    out = tmp_path / "verdict.md"
    check(db, "--output", str(out))
    markdown = out.read_text(encoding="utf-8")
    assert markdown.startswith("<!-- roofguard:verdict")
    golden(GOLDEN / "demo-verdict.md", markdown)


def test_unknown_format_is_a_usage_error(db):
    result = CliRunner().invoke(build_app(), ["demo", "--format", "xml", "--db", db])
    assert result.exit_code == 2 and "auto, text, markdown, json" in result.output


def test_json_is_unchanged_by_the_terminal_view(db):
    data = json.loads(check(db, "--format", "json"))
    assert {"time_s", "baseline", "time_ratio"} <= data.keys()
    gemm = next(k for k in data["kernels"] if k["key"] == VERIFY)
    assert {"time_s", "time_ratio", "percent_of_baseline_roof"} <= gemm.keys()
    assert "time_s" in gemm["baseline"]


def test_table_and_finding_state_one_set_of_figures(db):
    # The table's baseline of a kernel with a finding is that finding's level ± noise (n):
    # not the 14-run summary (71.8% ±0.4, n=14) beside a finding of 71.9% ± 0.6 over 30 runs.
    verdict = Verdict.model_validate_json(check(db, "--format", "json"))
    drop = next(f for f in verdict.findings if f.rule == "roof-drop" and f.kernel == VERIFY)
    gate = drop.gate
    assert gate is not None and gate.n > kernel(verdict, VERIFY).baseline.n, "two windows"
    md_row = next(
        line
        for line in check(db, "--format", "markdown").splitlines()
        if line.startswith("| ❌ | `verify_gemm")
    )
    assert f"| {gate.level:.1f}% ±{gate.noise:.1f} (n={gate.n}) |" in md_row
    assert f"({100 * gate.relative_change:.1f}%)".replace("-", "−") in md_row
    text = check(db, "--format", "text")
    text_row = next(line for line in text.splitlines() if line.startswith("verify_gemm"))
    assert f"{gate.level:.1f} → 4.8% of tensor_bf16" in text_row
    assert "Baseline: with a finding, the level it was judged against" in text
