"""A run measured on a runner that ran none of its baseline says so, through `roofguard check`."""

from __future__ import annotations

from pathlib import Path

import pytest

from rules.verdict import Verdict
from service.cli import run

NOTE = (
    "measured on runner gpu-b; its baseline's runs were on gpu-a (3): a move shared by many "
    "kernels may be the runner's"
)


def _check(tmp_path: Path, commit: str, runner: str | None, pr: bool = False) -> Verdict:
    """One check of 8 GEMMs, 6% slower as a PR (a slower card), on ``runner``."""
    rows = "".join(
        f"gemm_{i},{0.001 * (1 + i) * (1.06 if pr else 1)},1e10,1e8,1\n" for i in range(8)
    )
    report = tmp_path / f"{commit}.csv"
    report.write_text("name,duration_s,flops_fp32,bytes_dram,launches\n" + rows)
    out = tmp_path / f"{commit}.json"
    args = ["check", str(report), "--repo", "acme/swap", "--commit", commit, "--branch"]
    args += ["feat", "--pr", "7"] if pr else ["main", "--kind", "nightly"]
    args += ["--runner", runner] if runner else []
    db = f"sqlite:///{tmp_path / 'history.db'}"
    args += ["--device", "H100-SXM5", "--format", "json", "--db", db, "--output", str(out)]
    assert run(args) in (0, 1)
    return Verdict.model_validate_json(out.read_text())


@pytest.mark.parametrize(
    ("nights_on", "pr_on", "noted"),
    [
        ("gpu-a", "gpu-b", True),
        ("gpu-a", "gpu-a", False),
        ("gpu-a", None, False),
        (None, "gpu-b", False),
    ],
)
def test_a_pr_on_another_runner_than_its_baseline_is_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nights_on, pr_on, noted: bool
) -> None:
    monkeypatch.delenv("RUNNER_NAME", raising=False)  # the option's environment variable
    for night in ("n1", "n2", "n3"):
        _check(tmp_path, night, nights_on)
    verdict = _check(tmp_path, "pr1", pr_on, pr=True)
    assert [n for n in verdict.notes if n.startswith("measured on runner")] == (
        [NOTE] if noted else []
    )


def test_a_pool_of_runners_is_not_a_swap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nights rotating through three runners: a PR on a fourth is the pool, not a swap."""
    monkeypatch.delenv("RUNNER_NAME", raising=False)
    for night, runner in (("n1", "gpu-a"), ("n2", "gpu-c"), ("n3", "gpu-d")):
        _check(tmp_path, night, runner)
    assert not _check(tmp_path, "pr1", "gpu-b", pr=True).notes
