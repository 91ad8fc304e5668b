"""``roofguard demo --device-change``: the decode step moved to an H200, judged on the H100's.

The README quotes its headline and finding; both come from the goldens written here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rules import Verdict
from service.cli.demo_cmd import run_demo
from service.cli.verdict_output import verdict_text
from service.pipeline.check import CheckOutcome

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
ATTENTION = "flash_decode_attention_kernel<__nv_bfloat16, 128, 8>"


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> CheckOutcome:
    """The demo's history and its H200 run, judged once (what ``demo --device-change`` does)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('moved') / 'history.db'}"
    return run_demo(url, device_change=True)


def demo(outcome: CheckOutcome, fmt: str) -> str:
    """What ``roofguard demo --device-change --format FMT`` prints."""
    return verdict_text(outcome.verdict, outcome.markdown, fmt) + "\n"


@pytest.fixture(scope="module")
def verdict(outcome: CheckOutcome) -> Verdict:
    return Verdict.model_validate_json(demo(outcome, "json"))


def test_the_h200_run_is_judged_against_the_h100_history(verdict: Verdict) -> None:
    assert verdict.device == "H200-SXM" and verdict.conclusion == "warn"
    assert verdict.baseline is not None and verdict.baseline.device == "H100-SXM5"
    statuses = {k.name: k.status for k in verdict.kernels}
    assert statuses.pop(ATTENTION) == "suspect"
    assert set(statuses.values()) == {"unchanged"}  # kept up with the new card, not new
    verify = next(k for k in verdict.kernels if k.name.startswith("verify_gemm"))
    assert verify.expected_time_ratio == pytest.approx(1.0)  # same bf16 peak on both cards
    attention = next(k for k in verdict.kernels if k.name == ATTENTION)
    assert attention.expected_time_ratio == pytest.approx(3.35 / 4.8)


def test_terminal_and_markdown_goldens(outcome: CheckOutcome, golden) -> None:
    text = demo(outcome, "text")
    assert "judged against H100-SXM5 history, 30 runs, in percent of roof" in text
    golden(GOLDEN / "demo-device-change.txt", text)
    golden(GOLDEN / "demo-device-change.md", demo(outcome, "markdown"))


def test_the_readme_quotes_the_demo() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("**Moving to another card**") :].split("\n\n", 1)[0]
    quoted = [" ".join(q.split()) for q in re.findall(r"`([^`]+)`", section)]
    output = " ".join((GOLDEN / "demo-device-change.txt").read_text(encoding="utf-8").split())
    shown = [q for q in quoted if " " in q and not q.startswith("roofguard ")]
    assert len(shown) == 2 and all(q in output for q in shown), shown
