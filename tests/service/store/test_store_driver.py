"""A database URL whose driver is missing: one clear error naming the extra, exit 2.

The driver is made unimportable in a child process (``sys.modules[name] = None`` makes
``import name`` fail as a missing module does), so the real CLI and SQLAlchemy run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
REPORT = ROOT / "service" / "demo" / "data" / "pr-1234.csv"


def run_without(module: str, *argv: str) -> subprocess.CompletedProcess[str]:
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "from service.cli import run\n"
        f"sys.exit(run({list(argv)!r}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.parametrize(
    ("url", "module", "hint"),
    [
        ("postgresql+psycopg://ci:s3cret@db.invalid/perf", "psycopg", "roofguard[postgres]"),
        ("postgresql+psycopg2://ci:s3cret@db.invalid/perf", "psycopg2", "postgresql+psycopg://"),
    ],
)
def test_missing_driver_is_one_clear_error(url: str, module: str, hint: str) -> None:
    args = ["check", str(REPORT), "--repo", "acme/k", "--commit", "abc1234", "--db", url]
    proc = run_without(module, *args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("roofguard: error: history store postgresql+")
    assert f"driver {module!r} is not installed" in line and hint in line
    assert "s3cret" not in line
