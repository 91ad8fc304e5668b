"""The Action as shipped: its release pin, secrets kept off command lines, the nightly check.

Static checks of action.yml, its scripts and the example workflows; the steps that run are in
``test_action_diagnose.py``.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

import pytest
from action_runner import ACTION, ACTION_DIR, EXAMPLES, ROOT

from service import __version__
from service.cli import run as cli

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
OURS = "roofguard/roofguard/.github/actions/roofguard@"
#: A shell expansion of a secret-looking variable: `$DATABASE_URL`, `${ROOFGUARD_SERVER_TOKEN}`.
SECRET_EXPANSION = re.compile(r"\$\{?\w*(DATABASE_URL|TOKEN|SECRET|PASSWORD)\w*", re.IGNORECASE)
#: Shell builtins that read a variable without putting it on any process's argv: an emptiness
#: test, a case, an assignment.
_VAR = r"\"\$\{?\w+(:-)?\}?\""
_NO_ARGV = re.compile(
    rf"\[ -[zn] {_VAR} \]|\bcase {_VAR} in\b|^\s*(local\s+)?\w+={_VAR}", re.MULTILINE
)


def _steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def _run_texts() -> dict[str, str]:
    """Every shell command line of the Action and the examples, by where it is."""
    texts = {f"action.yml: {s['name']}": s["run"] for s in ACTION["runs"]["steps"] if "run" in s}
    for name, workflow in EXAMPLES.items():
        for index, step in enumerate(_steps(workflow)):
            if "run" in step:
                texts[f"{name}: {step.get('name', index)}"] = step["run"]
    for script in ("install.sh", "patterns.sh", "diagnose.sh"):
        texts[script] = (ACTION_DIR / script).read_text()
    return texts


def test_the_version_is_one_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    assert __version__ == VERSION
    assert cli(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"roofguard {VERSION}"


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_examples_pin_this_release(name: str) -> None:
    """The release is tagged vVERSION: the examples must name a tag that exists."""
    pins = [s["uses"] for s in _steps(EXAMPLES[name]) if s.get("uses", "").startswith(OURS)]
    assert pins, f"{name} does not use the Action"
    assert {pin.removeprefix(OURS) for pin in pins} == {f"v{VERSION}"}
    assert "pip install" not in str(EXAMPLES[name]), "the Action installs (and caches) it"


def test_the_changelog_describes_this_release() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    section = text.split(f"## {VERSION}\n", 1)[1].split("\n## ", 1)[0]
    for topic in ("across devices", "compare", "fuzz", "typed verdict", "gate"):
        assert topic in section.lower(), topic


@pytest.mark.parametrize("where", sorted(_run_texts()))
def test_no_secret_on_a_command_line(where: str) -> None:
    """Secrets reach roofguard in its environment: argv shows in process lists and `set -x`."""
    text = _NO_ARGV.sub("", _run_texts()[where])
    assert "--db" not in text, where
    assert "secrets." not in text, where
    assert not SECRET_EXPANSION.search(text), f"{where}: {SECRET_EXPANSION.search(text)}"


def test_the_store_url_reaches_roofguard_in_its_environment() -> None:
    for step in ACTION["runs"]["steps"]:
        if "$ROOFGUARD" in step.get("run", "") and step.get("id") in ("check", "remeasure"):
            assert step["env"]["ROOFGUARD_DATABASE_URL"] == "${{ inputs.database-url }}"
    (remeasure,) = [s for s in ACTION["runs"]["steps"] if s.get("id") == "remeasure"]
    assert "-u ROOFGUARD_DATABASE_URL" in remeasure["run"], "the PR's profiler never sees it"


def test_the_nightly_example_runs_the_nightly_check() -> None:
    """`ingest` only stores a run; the nightly check stores the gate's levels, fails on a drop."""
    workflow = EXAMPLES["nightly.yml"]
    assert "ingest" not in str(workflow)
    (step,) = [s for s in _steps(workflow) if s.get("uses", "").startswith(OURS)]
    assert step["with"]["kind"] == "nightly" and "mode" not in step["with"]
    assert "secrets." in step["with"]["database-url"]


def test_the_install_is_cached_between_jobs() -> None:
    steps = ACTION["runs"]["steps"]
    names = [s["name"] for s in steps]
    (cache,) = [s for s in steps if s.get("uses", "").startswith("actions/cache@")]
    assert names.index(cache["name"]) < names.index("Install roofguard")
    assert cache["with"] == {
        "path": "${{ steps.plan.outputs.venv }}",
        "key": "${{ steps.plan.outputs.key }}",
    }
