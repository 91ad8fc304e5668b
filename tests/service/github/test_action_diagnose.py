"""The Action says what went wrong around the check: a store that is lost, ncu's permissions.

Each case runs the Action's steps in the simulated runner (``action_runner.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from action_runner import REPORT, Runner, fresh_venv_fixture  # noqa: F401
from github_server import FakeGitHub, github_server_fixture  # noqa: F401
from remeasure_data import gemv_report, stable_history

#: What ncu writes to its --log-file when the counters are restricted to admin users.
NCU_DENIED = (
    "==PROF== Connected to process 30026 (/home/ci/bench/gemm)\n"
    "==ERROR== Error: ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
    "Performance Counters on the target device 0. For instructions on enabling permissions and "
    "to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
)
FIX = "NVreg_RestrictProfilingToAdminUsers=0"


def test_a_store_that_does_not_persist_is_warned_about(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    runner = Runner(tmp_path, github_server, fresh_venv)
    steps = runner.run(reports=str(REPORT), device="H100-SXM5", post="false")
    check = steps["Check the reports"]
    assert check.returncode == 0, check.stdout + check.stderr
    assert "::warning title=roofguard store not kept::no database-url" in check.stdout
    assert (tmp_path / ".roofguard" / "history.db").exists(), "roofguard took its default"


@pytest.mark.parametrize(
    ("url", "warned"),
    [("sqlite:///.roofguard/h.db", True), ("sqlite:///{temp}/h.db", True), ("{kept}", False)],
    ids=["relative-sqlite", "runner-temp", "outside-the-job"],
)
def test_a_sqlite_store_inside_the_job_is_warned_about(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path, url: str, warned: bool
) -> None:
    runner = Runner(tmp_path, github_server, fresh_venv)
    url = url.format(temp=runner.temp, kept=f"sqlite:///{tmp_path / 'kept.db'}")
    steps = runner.run(
        reports=str(REPORT), device="H100-SXM5", post="false", **{"database-url": url}
    )
    check = steps["Check the reports"]
    assert check.returncode == 0, check.stdout + check.stderr
    assert ("store not kept" in check.stdout) == warned


def test_a_kept_sqlite_store_that_does_not_exist_yet_is_warned_about(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    """A mistyped path or an unmounted volume started an empty history: every kernel new."""
    runner = Runner(tmp_path, github_server, fresh_venv)
    url = f"sqlite:///{tmp_path / 'perf-volume' / 'history.db'}"
    inputs = {"reports": str(REPORT), "device": "H100-SXM5", "post": "false", "database-url": url}
    first = runner.run(**inputs)["Check the reports"]
    assert first.returncode == 0, first.stdout + first.stderr
    assert "::warning title=roofguard new history store::" in first.stdout
    assert f"({tmp_path / 'perf-volume' / 'history.db'})" in first.stdout
    second = runner.run(**inputs)["Check the reports"]
    assert second.returncode == 0 and "new history store" not in second.stdout


def test_ncu_without_counter_permissions_gets_the_fix(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    report = tmp_path / "ncu-raw.csv"
    report.write_text(NCU_DENIED)
    steps = Runner(tmp_path, github_server, fresh_venv).run(
        reports=str(report), **{"database-url": f"sqlite:///{tmp_path / 'h.db'}"}
    )
    check = steps["Check the reports"]
    assert check.returncode == 2
    assert "::error title=roofguard ERR_NVGPUCTRPERM::" in check.stdout
    assert FIX in check.stdout and "https://developer.nvidia.com/ERR_NVGPUCTRPERM" in check.stdout
    assert FIX in check.stderr, "roofguard's own error says it too"
    assert not github_server.requests


def test_a_re_measure_step_without_counter_permissions_gets_the_fix(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    db = stable_history(tmp_path)
    pr = gemv_report(tmp_path / "pr.json", 1.25)  # a suspect, so the profiler runs
    denied = tmp_path / "denied.txt"
    denied.write_text(NCU_DENIED)
    command = f'cat "{denied}"; exit 1'
    steps = Runner(tmp_path, github_server, fresh_venv).run(
        reports=str(pr), **{"database-url": db, "profile-command": command}
    )
    remeasure = steps["Re-measure the suspects"]
    assert remeasure.returncode == 2
    assert "::error title=roofguard ERR_NVGPUCTRPERM::" in remeasure.stdout
    assert FIX in remeasure.stdout


def test_the_store_url_is_on_no_command_line(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'secret-history.db'}"
    runner = Runner(tmp_path, github_server, fresh_venv)
    steps = runner.run(
        reports=str(REPORT), device="H100-SXM5", **{"database-url": url, "profile-command": "true"}
    )
    assert steps["Check the reports"].returncode == 0
    assert (tmp_path / "secret-history.db").exists(), "roofguard read it from its environment"
    argv = (runner.temp / "roofguard" / "check-args").read_text()
    assert "secret-history" not in argv and "--db" not in argv
