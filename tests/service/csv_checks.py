"""`roofguard check` of a small CSV report, as the CLI tests of one behaviour each run it."""

from __future__ import annotations

from pathlib import Path

from rules.verdict import Verdict
from service.cli import run

HEADER = "name,duration_s,flops_fp32,bytes_dram,launches\n"


def check_csv(tmp_path: Path, repo: str, commit: str, rows: str, *extra: str) -> Verdict:
    """The verdict of a check of ``rows`` (CSV under ``HEADER``), nightly on main unless ``extra``.

    ``extra``: the branch and PR options (and any other); the store is ``tmp_path``'s.
    """
    report = tmp_path / f"{commit}.csv"
    report.write_text(HEADER + rows)
    out = tmp_path / f"{commit}.json"
    args = ["check", str(report), "--repo", repo, "--commit", commit]
    args += list(extra) or ["--branch", "main", "--kind", "nightly"]
    db = f"sqlite:///{tmp_path / 'history.db'}"
    args += ["--device", "H100-SXM5", "--db", db, "--format", "json", "--output", str(out)]
    assert run(args) in (0, 1)
    return Verdict.model_validate_json(out.read_text())
