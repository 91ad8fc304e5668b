"""The real ``roofguard`` command line on a store holding the demo, for tests that read it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from service.cli import build_app

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
