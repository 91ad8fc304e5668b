"""``roofguard check`` against a misspelt base branch names the branch and those holding runs.

``--base-branch mian`` (or ``base_branch = "mian"`` in roofguard.toml) found no runs, and
the verdict said "no baseline yet", as on a repository's first run: nothing named the branch
it searched.
"""

from __future__ import annotations

import pytest
from test_check_cli import check, nightly

from service.cli import run

MISSPELT = (
    "no nightly or local run of base branch 'mian' is stored on H100-SXM5; "
    "this repository's are on main (8)"
)


@pytest.fixture
def main_nights(tmp_path):
    """Eight nightly runs of acme/kernels on main, stored by ``roofguard ingest``."""
    db = f"sqlite:///{tmp_path / 'h.db'}"
    for night in range(8):
        report = nightly(tmp_path / f"n{night}.json", night)
        ingest = ["ingest", str(report), "--repo", "acme/kernels", "--commit", f"c{night:04d}"]
        assert run([*ingest, "--branch", "main", "--kind", "nightly", "--db", db]) == 0
    return tmp_path, db


def _branch_notes(verdict: dict) -> list[str]:
    return [note for note in verdict["notes"] if "nightly or local run of base branch" in note]


def test_a_misspelt_base_branch_names_the_branches_that_hold_runs(main_nights):
    tmp_path, db = main_nights
    code, verdict = check(tmp_path, db, nightly(tmp_path / "pr.json", 9), "--base-branch", "mian")
    assert code == 0 and verdict["baseline"]["runs"] == 0
    assert _branch_notes(verdict) == [MISSPELT]


def test_a_misspelt_configured_branch_is_named_too(main_nights):
    tmp_path, db = main_nights
    config = tmp_path / "roofguard.toml"
    config.write_text('base_branch = "mian"\n', encoding="utf-8")
    pr = nightly(tmp_path / "pr.json", 9)
    code, verdict = check(tmp_path, db, pr, "--config", str(config))
    assert code == 0 and _branch_notes(verdict) == [MISSPELT]


def test_a_verdict_with_a_baseline_has_no_such_note(main_nights):
    tmp_path, db = main_nights
    code, verdict = check(tmp_path, db, nightly(tmp_path / "pr.json", 9))
    assert code == 0 and verdict["baseline"]["runs"] == 8
    assert _branch_notes(verdict) == []


def test_a_first_run_has_no_such_note(tmp_path):
    db = f"sqlite:///{tmp_path / 'empty.db'}"
    code, verdict = check(tmp_path, db, nightly(tmp_path / "pr.json", 9), "--base-branch", "mian")
    assert code == 0 and verdict["baseline"]["runs"] == 0
    assert _branch_notes(verdict) == []
