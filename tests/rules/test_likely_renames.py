"""A new kernel doing the work of one that vanished is named as its likely rename, not judged.

Through ``roofguard check``: nights of ``softmax<128>`` and ``softmax<384>``, then a PR that
renames both to ``softmax_v2`` and makes the 384 one 25% slower. Both were warnings about
inventory with nothing to say the slower one fell from 70% to 56% of the dram roof.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.renames import SAME_WORK, pair_by_work
from rules.verdict import Verdict
from service.cli import run

BANDWIDTH = 2.039e12  # A100-SXM4-80GB's dram roof, byte/s


def _check(
    tmp_path: Path,
    commit: str,
    kernels: dict[str, tuple[float, float]],
    pr: bool,
    config: Path | None = None,
):
    """A check of ``kernels`` (name: (dram bytes, percent of the dram roof))."""
    rows = "".join(
        f'"{name}",{nbytes / (BANDWIDTH * pct / 100)},{nbytes / 8},{nbytes},1\n'
        for name, (nbytes, pct) in kernels.items()
    )
    report = tmp_path / f"{commit}.csv"
    report.write_text("name,duration_s,flops_fp32,bytes_dram,launches\n" + rows)
    out = tmp_path / f"{commit}.json"
    args = ["check", str(report), "--repo", "acme/r", "--commit", commit, "--branch"]
    args += ["feat", "--pr", "3", "--kind", "pr"] if pr else ["main", "--kind", "nightly"]
    db = f"sqlite:///{tmp_path / 'history.db'}"
    args += ["--device", "A100-SXM4-80GB", "--format", "json", "--db", db, "--output", str(out)]
    args += ["--config", str(config)] if config else []
    assert run(args) in (0, 1)
    return Verdict.model_validate_json(out.read_text())


def _nights(tmp_path: Path, kernels: dict[str, tuple[float, float]]) -> None:
    for night in ("n1", "n2", "n3", "n4"):
        _check(tmp_path, night, kernels, pr=False)


def _numbers(verdict: Verdict, rule: str) -> dict[str, object]:
    return {f.kernel: f.numbers for f in verdict.findings if f.rule == rule}


def test_a_renamed_kernel_is_named_with_its_figures_against_the_old_baseline(tmp_path):
    _nights(tmp_path, {"softmax<128>": (2e8, 70.0), "softmax<384>": (6e8, 70.0)})
    verdict = _check(
        tmp_path, "pr", {"softmax_v2<128>": (2e8, 70.0), "softmax_v2<384>": (6e8, 56.0)}, pr=True
    )
    new = _numbers(verdict, "new-kernel")
    assert new["softmax_v2<384>"]["likely_rename_of"] == "softmax<384>"
    assert new["softmax_v2<384>"]["renamed_baseline_percent_of_roof"] == pytest.approx(70.0)
    assert _numbers(verdict, "missing-kernel")["softmax<128>"]["likely_renamed_to"] == (
        "softmax_v2<128>"
    )
    (message,) = [
        f.message for f in verdict.findings if f.rule == "new-kernel" and "384" in f.kernel
    ]
    assert (
        "likely a rename of softmax<384> (the same FLOPs and DRAM bytes): 70.0% → 56.0% of "
        "roof (-20.0%) against its baseline" in message
    )


def test_the_alias_the_message_gives_judges_the_kernel_against_its_history(tmp_path):
    """Pasted into roofguard.toml as given, the entry follows the old name's history."""
    _nights(tmp_path, {"softmax<384>": (6e8, 70.0)})
    renamed = {"softmax_v2<C:\\fast>": (6e8, 56.0)}  # a backslash, escaped in TOML
    findings = _check(tmp_path, "pr", renamed, pr=True).findings
    (message,) = [f.message for f in findings if f.rule == "new-kernel"]
    entry = re.search(r"add (.+) to aliases under \[rules\]", message)
    assert entry is not None, message
    config = tmp_path / "roofguard.toml"
    config.write_text(f"[rules]\naliases = {{ {entry.group(1)} }}\n")
    verdict = _check(tmp_path, "pr2", renamed, pr=True, config=config)
    rules = {f.rule for f in verdict.findings if f.kernel == "softmax_v2<C:\\fast>"}
    assert "new-kernel" not in rules and "roof-drop" in rules, rules


def test_two_kernels_of_one_shape_are_no_pair(tmp_path):
    """Each layer's GEMM does the same work: which new one is which old one is not known."""
    _nights(tmp_path, {"layer0_gemv": (4e8, 70.0), "layer1_gemv": (4e8, 70.0)})
    verdict = _check(tmp_path, "pr", {"gemv_a": (4e8, 70.0), "gemv_b": (4e8, 70.0)}, pr=True)
    findings = [f for f in verdict.findings if f.rule in ("new-kernel", "missing-kernel")]
    assert len(findings) == 4
    assert not any("likely" in f.message or "likely_rename_of" in f.numbers for f in findings)


def test_other_work_is_no_rename(tmp_path):
    _nights(tmp_path, {"softmax<128>": (2e8, 70.0)})
    verdict = _check(tmp_path, "pr", {"softmax<256>": (4e8, 70.0)}, pr=True)
    assert "likely_rename_of" not in _numbers(verdict, "new-kernel")["softmax<256>"]


def _naive_pairs(new, vanished):
    """The definition, pair by pair: each new kernel's one match, claimed by no other."""

    def same(a, b):
        close = all(
            math.isfinite(x) and math.isfinite(y) and abs(x - y) <= SAME_WORK * max(x, y)
            for x, y in zip(a, b, strict=True)
        )
        return close and max(a) > 0

    matches = {k: [o for o, was in vanished.items() if same(w, was)] for k, w in new.items()}
    claimed = [o for olds in matches.values() for o in olds]
    return {
        k: olds[0] for k, olds in matches.items() if len(olds) == 1 and claimed.count(olds[0]) == 1
    }


_WORK = st.tuples(
    st.sampled_from([0.0, 1e6, 1.004e6, 1.02e6, 5e8, math.nan]),
    st.sampled_from([0.0, 2e8, 2.01e8, 2.1e8, math.nan]),
)


@given(
    st.dictionaries(st.text("abc", min_size=1, max_size=3), _WORK, max_size=8),
    st.dictionaries(st.text("xyz", min_size=1, max_size=3), _WORK, max_size=8),
)
def test_the_sorted_search_pairs_as_the_definition_does(new, vanished):
    assert pair_by_work(new, vanished) == _naive_pairs(new, vanished)
