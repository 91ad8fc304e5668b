"""The Action's install step: the extras its inputs need; a venv of its own on self-hosted runners.

Each case really installs (offline, from this checkout) into the session's fresh venv or a
tool-cache venv, as ``action_runner.py`` describes.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from action_runner import ACTION_DIR, ROOT, Runner, fresh_venv_fixture  # noqa: F401

SPEC = f"{ACTION_DIR}/../../.."
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
PY = f"py{sys.version_info[0]}.{sys.version_info[1]}"
pytestmark = pytest.mark.slow  # each case runs pip (a few seconds)


@pytest.mark.parametrize(
    ("inputs", "requirement"),
    [
        ({"reports": "prof/*.ncu-rep"}, f"{SPEC}[ncu]"),
        ({"reports": "a.ncu-rep", "server-url": "https://rg.example"}, SPEC),  # the server reads
        (
            {"reports": "a.ncu-rep b.csv", "database-url": "postgresql+psycopg://ci@db/perf"},
            f"{SPEC}[postgres,ncu]",
        ),
        ({"mode": "artifact", "reports": "a.ncu-rep"}, SPEC),  # packing reads nothing
        ({"reports": "a.csv", "rerun-reports": "again/*.ncu-rep"}, f"{SPEC}[ncu]"),
    ],
    ids=["ncu-rep", "server-mode", "postgres-and-ncu", "pack-only", "ncu-rep-reruns"],
)
def test_extras_follow_the_inputs(
    tmp_path: Path, fresh_venv: Path, inputs: dict[str, str], requirement: str
) -> None:
    steps = Runner(tmp_path, None, fresh_venv).run(install="true", isolate="false", **inputs)
    install = steps["Install roofguard"]
    assert install.returncode == 0, install.stdout + install.stderr
    (line,) = [ln for ln in install.stdout.splitlines() if ln.startswith("roofguard: installing")]
    assert line == f"roofguard: installing {requirement}"


def test_the_judge_looks_into_the_artifact_for_ncu_reports(
    tmp_path: Path, fresh_venv: Path
) -> None:
    artifact = tmp_path / "roofguard-artifact" / "reports"
    artifact.mkdir(parents=True)
    (artifact / "gemm.ncu-rep").write_bytes(b"")
    steps = Runner(tmp_path, None, fresh_venv).run(
        install="true", isolate="false", mode="judge-artifact", artifact=str(artifact.parent)
    )
    assert f"roofguard: installing {SPEC}[ncu]" in steps["Install roofguard"].stdout


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"extras": "postgres;rm -rf /"}, "extras must be a comma-separated list"),
        ({"mode": "judge"}, "mode must be check, artifact, judge-artifact or install"),
        # read by the last steps only: the run was stored, then the job failed on the typo
        ({"failure-policy": "on-regresion"}, "failure-policy must be on-regression, on-warn"),
        ({"check": "checkrun"}, "check must be auto, check-run, status or none, not 'checkrun'"),
        ({"post": "yes"}, "post must be true or false, not 'yes'"),  # was: no post, no word
        ({"verify-head": "True"}, "verify-head must be true or false, not 'True'"),
    ],
)
def test_bad_install_inputs_stop_before_pip(
    tmp_path: Path, fresh_venv: Path, inputs: dict[str, str], message: str
) -> None:
    steps = Runner(tmp_path, None, fresh_venv).run(install="true", **inputs)
    plan = steps["Plan the install"]  # the first step that reads them stops the job
    assert plan.returncode == 2 and message in plan.stdout
    assert "Install roofguard" not in steps


def test_self_hosted_runners_get_a_venv_in_the_tool_cache(tmp_path: Path, fresh_venv: Path) -> None:
    runner = Runner(tmp_path, None, fresh_venv, runner_kind="self-hosted")
    first = runner.run(install="true", reports="a.csv")["Install roofguard"]
    assert first.returncode == 0, first.stdout + first.stderr
    venv = runner.tool_cache / "roofguard" / VERSION / PY
    assert first.outputs["bin"] == str(venv / "bin" / "roofguard")
    assert f"into {venv}" in first.stdout
    created = (venv / "pyvenv.cfg").stat().st_mtime_ns
    again = runner.run(install="true", reports="a.csv")["Install roofguard"]
    assert again.returncode == 0 and again.outputs["bin"] == first.outputs["bin"]
    assert (venv / "pyvenv.cfg").stat().st_mtime_ns == created, "the venv is reused"
    # the runner's own Python is left as it was: the venv is not on the job's PATH
    assert "GITHUB_PATH" not in runner.env


def test_github_hosted_runners_without_the_cache_install_into_the_runners_python(
    tmp_path: Path, fresh_venv: Path
) -> None:
    runner = Runner(tmp_path, None, fresh_venv)
    steps = runner.run(install="true", reports="a.csv", cache="false")
    assert steps["Plan the install"].outputs["cache"] == "false"
    assert steps["Install roofguard"].outputs["bin"] == str(fresh_venv / "bin" / "roofguard")
    assert not runner.tool_cache.exists()


def test_github_hosted_runners_cache_the_install_between_jobs(
    tmp_path: Path, fresh_venv: Path
) -> None:
    """The plan names the venv and a key for actions/cache; a restored venv runs no pip."""
    runner = Runner(tmp_path, None, fresh_venv)
    first = runner.run(install="true", reports="a.csv")
    plan = first["Plan the install"].outputs
    venv = runner.tool_cache / "roofguard" / VERSION / PY
    assert plan["cache"] == "true" and plan["venv"] == str(venv)
    assert plan["key"].startswith(f"roofguard-{VERSION}-") and plan["key"].endswith(
        sys.version.split()[0]
    )
    assert first["Install roofguard"].outputs["bin"] == str(venv / "bin" / "roofguard")
    assert "roofguard: installing" in first["Install roofguard"].stdout
    # the next job: actions/cache restored the folder (here: it stayed), so pip is not run
    again = runner.run(install="true", reports="a.csv")
    assert again["Plan the install"].outputs["key"] == plan["key"]
    install = again["Install roofguard"]
    assert install.returncode == 0 and "installing" not in install.stdout
    assert f"using the cached install in {venv}" in install.stdout
    # other extras are another install, under another key
    other = runner.run(install="true", reports="a.ncu-rep")
    assert other["Plan the install"].outputs["key"] != plan["key"]
    assert "roofguard: installing" in other["Install roofguard"].stdout


def test_install_mode_only_installs_for_the_jobs_own_steps(
    tmp_path: Path, fresh_venv: Path
) -> None:
    """weekly-digest.yml: the Action installs (cached) and names the command; nothing else runs."""
    steps = Runner(tmp_path, None, fresh_venv).run(
        mode="install", install="true", isolate="false", extras="postgres"
    )
    assert steps["Install roofguard"].returncode == 0
    ran = [name for name, step in steps.items() if name != "outputs" and not step.skipped]
    assert ran == ["Plan the install", "Install roofguard"]
    assert steps["outputs"].outputs["roofguard"] == str(fresh_venv / "bin" / "roofguard")
