"""The real ``roofguard`` command line on a store holding the demo, for tests that read it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.cli import build_app
from service.cli.demo_cmd import DEMO_CONFIG, DEMO_REPO, demo_commit
from service.demo.generate import DATA_DIR

VERIFY = "verify_gemm_bf16<512, 14336, 4096>"


def invoke(args: list[str]) -> str:
    """Run ``roofguard ARGS``; its stdout (exit 0 or 1: a verdict, even a failing one)."""
    result = CliRunner().invoke(build_app(), args, catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def demo_db(tmp_path_factory: pytest.TempPathFactory, name: str) -> str:
    """A SQLite store holding the demo's 30 nights and its PR run."""
    url = f"sqlite:///{tmp_path_factory.mktemp(name) / 'history.db'}"
    invoke(["demo", "--db", url, "--format", "json"])
    return url


def check_demo_pr(db: str, *extra: str, config: Path = DEMO_CONFIG) -> str:
    """``roofguard check`` of the demo's pull-request report against the store ``db``."""
    pr = ["--commit", demo_commit("pr-1234"), "--pr", "1234"]
    where = ["--repo", DEMO_REPO, "--config", str(config), "--db", db]
    return invoke(["check", str(DATA_DIR / "pr-1234.csv"), *pr, *where, *extra])
