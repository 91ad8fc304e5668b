"""A simulated GitHub runner for the composite Action (imported by the Action tests).

The simulation evaluates each step's ``if:`` and ``env:`` expressions (the action keeps every
``${{ }}`` out of ``run:`` text, which this test also enforces), runs the script with bash as
the runner does (``bash --noprofile --norc -eo pipefail``), and carries ``$GITHUB_OUTPUT``
between steps. GitHub is the local fake server.

roofguard runs from a fresh virtual environment made once per test session, installed by the
Action's own install step (``install.sh``): not from this checkout's source. The build and its
dependencies stay offline: the venv sees the test interpreter's site-packages through
PYTHONPATH (pip counts them as installed; roofguard's own editable install there is a ``.pth``
that PYTHONPATH does not process), and pip builds without isolation from the hatchling there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from github_server import FakeGitHub, github_server_fixture  # noqa: F401

from rules.verdict import Verdict

ROOT = Path(__file__).resolve().parents[3]
ACTION_DIR = ROOT / ".github" / "actions" / "roofguard"
ACTION = yaml.safe_load((ACTION_DIR / "action.yml").read_text())
EXAMPLES = {p.name: yaml.safe_load(p.read_text()) for p in (ACTION_DIR / "examples").glob("*.yml")}
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
REPO, PR = "acme/kernels", 42
SHA = "0123456789abcdef0123456789abcdef01234567"
WRITE_SCOPES = {"pull-requests", "issues", "checks", "statuses"}
REPORT = ROOT / "service" / "demo" / "data" / "pr-1234.csv"
DEPENDENCIES = sysconfig.get_path("purelib")  # the test interpreter's packages, roofguard's deps


# -- a tiny expression evaluator: paths, '' literals, ==, !=, !, && and || (what the action uses)
def _value(term: str, ctx: dict[str, Any]) -> str:
    term = term.strip()
    if term.startswith("!"):
        return "" if _value(term[1:], ctx) else "true"
    if term.startswith("'"):
        return term[1:-1]
    if term in ("true", "false"):
        return "true" if term == "true" else ""
    value: Any = ctx
    for key in term.split("."):
        value = value.get(key, "") if isinstance(value, dict) else ""
    return "" if value is None else str(value)


def _compare(term: str, ctx: dict[str, Any]) -> str:
    for op in ("==", "!="):
        if op in term:
            left, right = (_value(t, ctx) for t in term.split(op, 1))
            return "true" if (left == right) == (op == "==") else ""
    return _value(term, ctx)


def expression(expr: str, ctx: dict[str, Any]) -> str:
    """``a || b``: the first non-empty; ``a && b``: b when a is non-empty (as GitHub's)."""
    for alternative in expr.split("||"):
        value = ""
        for conjunct in alternative.split("&&"):
            value = _compare(conjunct, ctx)
            if not value:
                break
        if value:
            return value
    return ""


def evaluate(text: str, ctx: dict[str, Any]) -> str:
    return EXPR.sub(lambda m: expression(m.group(1), ctx), str(text))


def condition(step: dict[str, Any], ctx: dict[str, Any]) -> bool:
    if "if" not in step:
        return True
    test = str(step["if"])
    inner = EXPR.fullmatch(test.strip())
    return bool(expression(inner.group(1) if inner else test, ctx))


@dataclass
class StepRun:
    name: str
    returncode: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    skipped: bool = False


def read_outputs(path: Path) -> dict[str, str]:
    outputs, lines = {}, path.read_text().splitlines() if path.exists() else []
    while lines:
        line = lines.pop(0)
        if "<<" in line and "=" not in line.split("<<")[0]:
            name, delimiter = line.split("<<", 1)
            value = []
            while (item := lines.pop(0)) != delimiter:
                value.append(item)
            outputs[name] = "\n".join(value)
        elif "=" in line:
            name, value_text = line.split("=", 1)
            outputs[name] = value_text
    return outputs


def pull_request_event(pr: int = PR, sha: str = SHA) -> dict[str, Any]:
    return {"pull_request": {"number": pr, "head": {"sha": sha}}}


def workflow_run_event(sha: str = SHA, prs: tuple[int, ...] = ()) -> dict[str, Any]:
    """The trusted job's event; a fork PR's ``pull_requests`` is empty."""
    return {
        "workflow_run": {
            "id": 9001,
            "event": "pull_request",
            "conclusion": "success",
            "head_sha": sha,
            "head_branch": "fork-feature",
            "pull_requests": [{"number": n} for n in prs],
        }
    }


def _path_without_other_pythons() -> str:
    """PATH without this interpreter's venv: only the fresh one's roofguard may be found."""
    mine = str(Path(sys.prefix) / "bin")
    return os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != mine)


@dataclass
class Runner:
    """Runs the action's steps like a GitHub runner would, against the fake GitHub."""

    tmp: Path
    server: FakeGitHub | None
    venv: Path
    event: dict[str, Any] = field(default_factory=pull_request_event)
    runner_kind: str = "github-hosted"
    repo: str = REPO

    def __post_init__(self) -> None:
        self.temp = self.tmp / "runner-temp"
        self.temp.mkdir(exist_ok=True)
        self.summary = self.tmp / "step-summary.md"
        self.tool_cache = self.tmp / "tool-cache"
        self.event_path = self.tmp / "event.json"
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "ROOFGUARD_", "VIRTUAL_ENV", "PIP_"))
        }
        base.update(
            GITHUB_ACTIONS="true",
            GITHUB_API_URL=self.server.url if self.server else "http://127.0.0.1:9",
            GITHUB_REPOSITORY=self.repo,
            GITHUB_STEP_SUMMARY=str(self.summary),
            GITHUB_EVENT_PATH=str(self.event_path),
            RUNNER_TEMP=str(self.temp),
            PATH=f"{self.venv / 'bin'}{os.pathsep}{_path_without_other_pythons()}",
            PYTHONPATH=DEPENDENCIES,
            PIP_NO_INDEX="1",
            PIP_NO_BUILD_ISOLATION="0",  # pip's inverted spelling of --no-build-isolation
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        self.env = base

    def context(self, inputs: dict[str, str]) -> dict[str, Any]:
        github = {
            "repository": self.repo,
            "token": "ghs_action_token",
            "sha": "f" * 40,
            "action_path": str(ACTION_DIR),
            "event": self.event,
        }
        if "pull_request" in self.event:
            github.update(ref_name="feature", head_ref="feature", base_ref="main")
        else:
            github.update(ref_name="main", head_ref="", base_ref="")
        runner = {
            "temp": str(self.temp),
            "environment": self.runner_kind,
            "tool_cache": str(self.tool_cache),
        }
        ctx: dict[str, Any] = {"github": github, "runner": runner, "steps": {}}
        defaults = {k: evaluate(v.get("default", ""), ctx) for k, v in ACTION["inputs"].items()}
        ctx["inputs"] = {**defaults, "install": "false", "python-version": "", **inputs}
        return ctx

    def _script(self, index: int, step: dict[str, Any], ctx: dict[str, Any]) -> StepRun:
        env = dict(self.env)
        env.update({k: evaluate(v, ctx) for k, v in step.get("env", {}).items()})
        env["GITHUB_OUTPUT"] = str(self.tmp / f"output-{index}")
        Path(env["GITHUB_OUTPUT"]).unlink(missing_ok=True)
        script = self.tmp / f"step-{index}.sh"
        script.write_text(step["run"])
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            env=env,
            cwd=self.tmp,
            capture_output=True,
            text=True,
            timeout=300,
        )
        outputs = read_outputs(Path(env["GITHUB_OUTPUT"]))
        return StepRun(step["name"], proc.returncode, proc.stdout, proc.stderr, outputs)

    def run(self, **inputs: str) -> dict[str, StepRun]:
        self.event_path.write_text(json.dumps(self.event))
        ctx, results = self.context(inputs), {}
        for index, step in enumerate(ACTION["runs"]["steps"]):
            if "uses" in step or not condition(step, ctx):
                # a `uses:` step is actions/setup-python: the test's python is set up already
                result = StepRun(step["name"], 0, "", "", {}, skipped=True)
            else:
                result = self._script(index, step, ctx)
            if "id" in step:
                ctx["steps"][step["id"]] = {"outputs": result.outputs}
            results[step["name"]] = result
            if result.returncode != 0:
                break
        outputs = {k: evaluate(v["value"], ctx) for k, v in ACTION["outputs"].items()}
        results["outputs"] = StepRun("outputs", 0, "", "", outputs)
        return results


_VENVS: list[Path] = []


@pytest.fixture(scope="session", name="fresh_venv")
def fresh_venv_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with roofguard installed by the Action's install step.

    Made once per session, even though several test modules import this fixture.
    """
    if _VENVS:
        return _VENVS[0]
    tmp = tmp_path_factory.mktemp("action-venv")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    steps = Runner(tmp, None, venv).run(
        install="true", isolate="false", **{"database-url": "postgresql+psycopg://ci@db/x"}
    )
    install = steps["Install roofguard"]
    assert install.returncode == 0, install.stdout + install.stderr
    assert install.outputs["bin"] == str(venv / "bin" / "roofguard")
    assert f"installing {ACTION_DIR}/../../..[postgres]" in install.stdout
    _VENVS.append(venv)
    return venv


def write_verdict(tmp: Path, verdict: Verdict, name: str = "verdict.json") -> str:
    path = tmp / name
    path.write_text(verdict.model_dump_json())
    return str(path)


def pack_artifact(tmp: Path, venv: Path, server: FakeGitHub, **inputs: str) -> Path:
    """The untrusted job (``inputs`` beside the demo report): the 'downloaded' artifact folder."""
    (tmp / "untrusted").mkdir()
    steps = Runner(tmp / "untrusted", server, venv).run(
        mode="artifact", **{"reports": str(REPORT), "device": "H100-SXM5", **inputs}
    )
    packed = steps["Pack the reports"]
    assert packed.returncode == 0, packed.stdout + packed.stderr
    assert all(steps[name].skipped for name in ("Check the reports", "Post the verdict"))
    assert not server.requests, "the untrusted job talks to nobody"
    downloaded = tmp / "trusted" / "roofguard-artifact"
    shutil.copytree(steps["outputs"].outputs["artifact-path"], downloaded)
    return downloaded
