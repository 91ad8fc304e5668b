"""The real ``roofguard`` command line on a store holding the demo, for tests that read it."""

from __future__ import annotations

import sqlite3
from contextlib import closing
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


#: The demo's store as the demo command left it, built once per test process.
_DEMO_STORE: list[Path] = []


def demo_db(tmp_path_factory: pytest.TempPathFactory, name: str) -> str:
    """A SQLite store holding the demo's 30 nights and its PR run, for this caller alone.

    Building it runs the whole demo (the slow part), so it is built once per test process
    and each caller gets a copy (SQLite's backup API): callers write to their store.
    """
    if not _DEMO_STORE:
        built = tmp_path_factory.mktemp("demo-store") / "history.db"
        invoke(["demo", "--db", f"sqlite:///{built}", "--format", "json"])
        _DEMO_STORE.append(built)
    path = tmp_path_factory.mktemp(name) / "history.db"
    with closing(sqlite3.connect(_DEMO_STORE[0])) as source, closing(sqlite3.connect(path)) as copy:
        source.backup(copy)
    return f"sqlite:///{path}"


def check_demo_pr(db: str, *extra: str, config: Path = DEMO_CONFIG) -> str:
    """``roofguard check`` of the demo's pull-request report against the store ``db``."""
    pr = ["--commit", demo_commit("pr-1234"), "--pr", "1234"]
    where = ["--repo", DEMO_REPO, "--config", str(config), "--db", db]
    return invoke(["check", str(DATA_DIR / "pr-1234.csv"), *pr, *where, *extra])
