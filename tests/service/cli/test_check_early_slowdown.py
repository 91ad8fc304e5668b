"""``roofguard check`` of a PR on a baseline too short for the gate: a kernel 18x slower is named.

The gate judges a kernel from 3 nights. A repository's first PR, one night in, read "NOT
JUDGED" with its GEMV 18x slower listed as new beside the others, with no warning
(``early-slowdown``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from test_check_cli import check

from service.cli import run
from tests.factories import make_kernel, make_run


def _report(path: Path, night: int, gemv: float = 1.0, others: float = 1.0) -> Path:
    """A run of gemv, norm and a timed-only benchmark, each time scaled as given."""
    kernels = [
        make_kernel("gemv", flops={"tensor_bf16": 2e10}, dram_bytes=4e9, time_s=1.5e-3 * gemv),
        make_kernel("norm", flops={"fp32": 1e7}, dram_bytes=4e8, time_s=2e-4 * others),
        make_kernel("bench_copy", flops={}, dram_bytes=None, time_s=5e-5 * others),
    ]
    when = datetime(2026, 11, 1, 2, tzinfo=UTC) + timedelta(days=night)
    record = make_run(kernels=kernels, commit=f"c{night:04d}", timestamp=when)
    path.write_text(record.model_dump_json(), encoding="utf-8")
    return path


def _nights(tmp_path: Path, n: int) -> str:
    """A fresh store with ``n`` nightly runs, each checked as the nightly job does."""
    db = f"sqlite:///{tmp_path / 'h.db'}"
    for night in range(n):
        report = _report(tmp_path / f"n{night}.json", night, others=1 + 0.01 * (night % 3))
        argv = ["check", str(report), "--repo", "acme/kernels", "--commit", f"c{night:04d}"]
        argv += ["--branch", "main", "--kind", "nightly", "--db", db, "--format", "json"]
        assert run([*argv, "--output", str(tmp_path / f"n{night}.verdict.json")]) == 0
    return db


def _slow_pr(tmp_path: Path) -> Path:
    return _report(tmp_path / "pr.json", 9, gemv=18.0, others=1.9)


def test_the_first_pr_names_the_kernel_18x_slower_than_its_one_night(tmp_path):
    db = _nights(tmp_path, 1)
    code, verdict = check(tmp_path, db, _slow_pr(tmp_path))
    assert code == 0 and verdict["conclusion"] == "warn"
    assert [(f["rule"], f["kernel"], f["severity"]) for f in verdict["findings"]] == [
        ("early-slowdown", "gemv", "warn")
    ]
    (finding,) = verdict["findings"]
    numbers = finding["numbers"]
    # Reproducible from the stored record: the ratio is the base night's over the run's.
    assert numbers["times_worse"] == numbers["worst_night"] / numbers["current"] > 17.9
    assert (numbers["baseline_runs"], numbers["gate_min_runs"]) == (1, 3)
    statuses = {k["key"]: k["status"] for k in verdict["kernels"]}
    assert statuses == {"gemv": "suspect", "norm": "new", "bench_copy": "new"}
    assert (verdict["baseline"]["runs"], verdict["baseline"]["min_runs"]) == (1, 3)


def test_its_comment_stays_not_judged_and_shows_the_warning(tmp_path):
    db, out = _nights(tmp_path, 1), tmp_path / "comment.md"
    argv = ["check", str(_slow_pr(tmp_path)), "--repo", "acme/kernels", "--commit", "f00d"]
    argv += ["--pr", "7", "--db", db, "--format", "markdown", "--output", str(out)]
    assert run(argv) == 0
    markdown = out.read_text(encoding="utf-8")
    assert "**NOT JUDGED** · baseline too short: 1 of the 3 runs the gate needs" in markdown
    assert "1 warning" in markdown and "warn: early\\-slowdown" in markdown
    assert "18\\.0× below the lowest" in markdown


def test_with_three_nights_the_gate_judges_and_the_rule_is_silent(tmp_path):
    db = _nights(tmp_path, 3)
    code, verdict = check(tmp_path, db, _slow_pr(tmp_path))
    rules = {f["rule"] for f in verdict["findings"]}
    assert "early-slowdown" not in rules and "roof-drop" in rules
    assert code == 1 and verdict["conclusion"] == "fail"


def test_a_gate_short_of_its_rules_min_runs_still_judges_nothing(tmp_path):
    """With the warning, the verdict still records the 10 runs roof-drop needs, not 3."""
    db, config = _nights(tmp_path, 8), tmp_path / "roofguard.toml"
    needs = "min_runs = 10\n"
    config.write_text(
        f"[rules.options.roof-drop]\n{needs}[rules.options.time-regression]\n{needs}",
        encoding="utf-8",
    )
    code, verdict = check(tmp_path, db, _slow_pr(tmp_path), "--config", str(config))
    assert [(f["rule"], f["kernel"]) for f in verdict["findings"]] == [("early-slowdown", "gemv")]
    assert (verdict["baseline"]["runs"], verdict["baseline"]["min_runs"]) == (8, 10)
    assert code == 0
