"""The Action's install step: the extras its inputs need; a venv of its own on self-hosted runners.

Each case really installs (offline, from this checkout) into the session's fresh venv or a
tool-cache venv, as ``action_runner.py`` describes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from action_runner import ACTION_DIR, Runner, fresh_venv_fixture  # noqa: F401

SPEC = f"{ACTION_DIR}/../../.."
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
        ({"mode": "judge"}, "mode must be check, artifact or judge-artifact"),
    ],
)
def test_bad_install_inputs_stop_before_pip(
    tmp_path: Path, fresh_venv: Path, inputs: dict[str, str], message: str
) -> None:
    steps = Runner(tmp_path, None, fresh_venv).run(install="true", **inputs)
    install = steps["Install roofguard"]
    assert install.returncode == 2 and message in install.stdout
    assert "installing" not in install.stdout


def test_self_hosted_runners_get_a_venv_in_the_tool_cache(tmp_path: Path, fresh_venv: Path) -> None:
    runner = Runner(tmp_path, None, fresh_venv, runner_kind="self-hosted")
    first = runner.run(install="true", reports="a.csv")["Install roofguard"]
    assert first.returncode == 0, first.stdout + first.stderr
    venv = runner.tool_cache / "roofguard" / "0.1.0" / "py3.11"
    assert first.outputs["bin"] == str(venv / "bin" / "roofguard")
    assert f"into {venv}" in first.stdout
    created = (venv / "pyvenv.cfg").stat().st_mtime_ns
    again = runner.run(install="true", reports="a.csv")["Install roofguard"]
    assert again.returncode == 0 and again.outputs["bin"] == first.outputs["bin"]
    assert (venv / "pyvenv.cfg").stat().st_mtime_ns == created, "the venv is reused"
    # the runner's own Python is left as it was: the venv is not on the job's PATH
    assert "GITHUB_PATH" not in runner.env


def test_github_hosted_runners_install_into_the_runners_python(
    tmp_path: Path, fresh_venv: Path
) -> None:
    runner = Runner(tmp_path, None, fresh_venv)
    install = runner.run(install="true", reports="a.csv")["Install roofguard"]
    assert install.outputs["bin"] == str(fresh_venv / "bin" / "roofguard")
    assert not runner.tool_cache.exists()
