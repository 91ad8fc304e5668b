"""What a ``roofguard check`` process imports: what it uses, not the service's other stacks.

The check reads and writes the store in Core (``service.store.coretables``,
``service.store.db.core_scope``) and renders markdown only when it writes markdown, so a
check with ``--format json`` never imports sqlmodel, SQLAlchemy's ORM or jinja2; nor does
any check import the web stack, plotting, the GitHub client or scipy. Each case runs a real
check in a fresh process, after it judged the run, so imports made on demand count too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from collectors.schema import RunKind
from service.cli import run
from tests.factories import make_kernel, make_run

#: Imported by no check with ``--format json`` on a store that exists, without a limit in
#: the environment: the ORM, the migrations, the markdown's templates, pydantic-settings.
NOT_FOR_JSON = ("sqlmodel", "sqlalchemy.orm", "service.store.tables", "jinja2", "alembic")
NOT_FOR_JSON += ("pydantic_settings",)
#: Imported by no check at all.
NEVER = ("fastapi", "starlette", "uvicorn", "matplotlib", "github3", "scipy", "torch")


def _report(path: Path, night: int, kind: RunKind = RunKind.NIGHTLY) -> Path:
    kernels = [make_kernel("gemv", time_s=1e-3 * (1 + night % 3 / 100)), make_kernel("gemm")]
    path.write_text(make_run(kernels=kernels, kind=kind, device="H100-SXM5").model_dump_json())
    return path


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store of four nightly checks (so the store exists: opening it migrates nothing)."""
    tmp = tmp_path_factory.mktemp("imports")
    db = f"sqlite:///{tmp / 'history.db'}"
    for night in range(4):
        report = _report(tmp / f"night-{night}.json", night)
        args = ["check", str(report), "--repo", "acme/kernels", "--commit", f"c{night:04d}"]
        args += ["--branch", "main", "--kind", "nightly", "--db", db, "--output", "/dev/null"]
        assert run([*args, "--timestamp", f"2026-11-0{night + 1}T00:00:00Z"]) == 0
    return tmp, db


def imported_by_check(tmp: Path, db: str, *extra: str) -> set[str]:
    """The modules a fresh ``roofguard check`` process of a PR run has imported at its end."""
    report = _report(tmp / "pr.json", 9, RunKind.PR)
    args = ["check", str(report), "--repo", "acme/kernels", "--commit", "f00d", "--pr", "7"]
    args += ["--db", db, "--output", str(tmp / "verdict.out"), *extra]
    code = (
        "import sys\n"
        "from service.cli import run\n"
        f"assert run({args!r}) in (0, 1)\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}  # not in Actions
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return set(proc.stdout.split())


def heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """Those of ``names`` (or their submodules) among ``modules``."""
    return sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in modules))


def test_a_json_check_on_a_named_runner_imports_no_orm_templates_or_other_stacks(history):
    tmp, db = history
    modules = imported_by_check(tmp, db, "--format", "json", "--runner", "ci-gpu-1")
    assert "pandas" in modules and "sqlalchemy" in modules  # what it does use
    assert heavy(modules, NOT_FOR_JSON + NEVER) == []


def test_a_markdown_check_imports_the_templates_but_still_no_orm(history):
    tmp, db = history
    modules = imported_by_check(tmp, db, "--format", "markdown")
    assert "jinja2" in modules  # the test sees an import when one happens
    assert (tmp / "verdict.out").read_text().startswith("<!-- roofguard:verdict")
    # No runner named, no health file: nothing of the calibration either.
    assert heavy(modules, ("sqlmodel", "sqlalchemy.orm", "service.calibrate", *NEVER)) == []


def test_the_limits_without_their_variables_are_the_settings_defaults(monkeypatch):
    from service.cli.common import LIMIT_VARIABLES, cli_limits
    from service.pipeline.storable import StoreLimits
    from service.settings import Settings

    for name in LIMIT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert cli_limits() == StoreLimits() == StoreLimits.of(Settings())
    monkeypatch.setenv(LIMIT_VARIABLES[1].lower(), "7")  # any letter case, as the service reads
    assert cli_limits().max_kernels == 7


def test_the_checks_default_health_file_is_the_one_calibrate_writes():
    from service.calibrate.storage import DEFAULT_HEALTH_PATH
    from service.cli import check_cmd

    assert check_cmd.DEFAULT_HEALTH_PATH == DEFAULT_HEALTH_PATH
