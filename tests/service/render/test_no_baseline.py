"""A run judged against no baseline says so: headline, ``baseline.runs`` and a neutral check.

An empty store (a first run, or a store the job does not keep) makes every kernel ``new``;
that verdict used to read "PASS · 0 regressions" and publish a green check.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from demo_cli import check_demo_pr, demo_db

from rules.verdict import Verdict
from service.github.policy import FailurePolicy, check_conclusion
from service.render.markdown import render_verdict as render_markdown


def check(db: str, fmt: str) -> str:
    return check_demo_pr(db, "--format", fmt)


@pytest.fixture()
def empty_db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'empty.db'}"


def test_a_run_judged_against_nothing_says_so_and_its_check_is_neutral(empty_db: str) -> None:
    verdict = Verdict.model_validate_json(check(empty_db, "json"))
    n = sum(1 for k in verdict.kernels)
    assert verdict.baseline is not None and verdict.baseline.runs == 0
    assert f"no baseline yet: {n} kernels stored, nothing judged" in render_markdown(verdict)
    assert check_conclusion(verdict, FailurePolicy.ON_REGRESSION) == "neutral"


def test_the_terminal_headline_says_so_too(empty_db: str) -> None:
    head = check(empty_db, "text").splitlines()[0]
    assert "no baseline yet:" in head and "nothing judged" in head


def test_a_run_with_history_counts_its_baseline_runs(tmp_path_factory) -> None:
    verdict = Verdict.model_validate_json(check(demo_db(tmp_path_factory, "runs"), "json"))
    assert verdict.baseline is not None and verdict.baseline.runs >= 14
    assert "no baseline yet" not in render_markdown(verdict)
