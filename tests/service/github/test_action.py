"""The composite Action: its YAML, the example workflows, and its steps run in a simulated runner.

The simulation evaluates each step's ``env:`` expressions (the action keeps every ``${{ }}``
out of ``run:`` text, which this test also enforces), runs the script with bash as the runner
does (``bash --noprofile --norc -eo pipefail``), and carries ``$GITHUB_OUTPUT`` between steps.
``roofguard`` is this checkout (a shim on PATH), GitHub is the local fake server.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from github_server import FakeGitHub, github_server_fixture  # noqa: F401
from verdict_factory import regression_verdict

from rules.verdict import Conclusion, Verdict
from service.cli import COMMANDS
from service.render.markdown import verdict_marker

ROOT = Path(__file__).resolve().parents[3]
ACTION_DIR = ROOT / ".github" / "actions" / "roofguard"
ACTION = yaml.safe_load((ACTION_DIR / "action.yml").read_text())
EXAMPLES = {p.name: yaml.safe_load(p.read_text()) for p in (ACTION_DIR / "examples").glob("*.yml")}
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
REPO, PR = "acme/kernels", 42
SHA = "0123456789abcdef0123456789abcdef01234567"
WRITE_SCOPES = {"pull-requests", "issues", "checks", "statuses"}


# -- a tiny expression evaluator: paths, '' literals and || (all the action uses) -------------
def evaluate(text: str, ctx: dict[str, Any]) -> str:
    def one(expr: str) -> str:
        for part in (p.strip() for p in expr.split("||")):
            value: Any = part[1:-1] if part.startswith("'") else ctx
            if not part.startswith("'"):
                for key in part.split("."):
                    value = value.get(key, "") if isinstance(value, dict) else ""
            if value not in ("", None):
                return str(value)
        return ""

    return EXPR.sub(lambda m: one(m.group(1)), str(text))


@dataclass
class StepRun:
    name: str
    returncode: int
    stdout: str
    stderr: str
    outputs: dict[str, str]


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


class Runner:
    """Runs the action's steps like a GitHub runner would, against the fake GitHub."""

    def __init__(self, tmp: Path, server: FakeGitHub) -> None:
        self.tmp, self.server = tmp, server
        self.temp = tmp / "runner-temp"
        self.temp.mkdir()
        shim = tmp / "bin" / "roofguard"
        shim.parent.mkdir()
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m service "$@"\n')
        shim.chmod(0o755)
        self.summary = tmp / "step-summary.md"
        base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "ROOFGUARD_"))}
        base.update(
            GITHUB_ACTIONS="true",
            GITHUB_API_URL=server.url,
            GITHUB_REPOSITORY=REPO,
            GITHUB_STEP_SUMMARY=str(self.summary),
            RUNNER_TEMP=str(self.temp),
            PATH=f"{shim.parent}{os.pathsep}{os.environ['PATH']}",
            PYTHONPATH=str(ROOT),
        )
        self.env = base

    def context(self, inputs: dict[str, str]) -> dict[str, Any]:
        github = {
            "repository": REPO,
            "token": "ghs_action_token",
            "sha": "f" * 40,
            "action_path": str(ACTION_DIR),
            "ref_name": "feature",
            "head_ref": "feature",
            "base_ref": "main",
            "event": {"pull_request": {"number": PR, "head": {"sha": SHA}}},
        }
        ctx: dict[str, Any] = {"github": github, "runner": {"temp": str(self.temp)}, "steps": {}}
        defaults = {k: evaluate(v.get("default", ""), ctx) for k, v in ACTION["inputs"].items()}
        ctx["inputs"] = {**defaults, "install": "false", "python-version": "", **inputs}
        return ctx

    def run(self, **inputs: str) -> dict[str, StepRun]:
        ctx, results = self.context(inputs), {}
        for index, step in enumerate(ACTION["runs"]["steps"]):
            if "uses" in step:
                continue  # actions/setup-python: the test's python is already set up
            env = dict(self.env)
            env.update({k: evaluate(v, ctx) for k, v in step.get("env", {}).items()})
            env["GITHUB_OUTPUT"] = str(self.tmp / f"output-{index}")
            script = self.tmp / f"step-{index}.sh"
            script.write_text(step["run"])
            proc = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                env=env,
                cwd=self.tmp,
                capture_output=True,
                text=True,
                timeout=120,
            )
            outputs = read_outputs(Path(env["GITHUB_OUTPUT"]))
            if "id" in step:
                ctx["steps"][step["id"]] = {"outputs": outputs}
            results[step["name"]] = StepRun(
                step["name"], proc.returncode, proc.stdout, proc.stderr, outputs
            )
            if proc.returncode != 0:
                break
        results["outputs"] = StepRun(
            "outputs",
            0,
            "",
            "",
            {k: evaluate(v["value"], ctx) for k, v in ACTION["outputs"].items()},
        )
        return results


def write_verdict(tmp: Path, verdict: Verdict, name: str = "verdict.json") -> str:
    path = tmp / name
    path.write_text(verdict.model_dump_json())
    return str(path)


# -- static checks -----------------------------------------------------------------------------
def test_action_metadata_is_complete() -> None:
    assert ACTION["runs"]["using"] == "composite" and ACTION["name"] and ACTION["description"]
    for name, spec in ACTION["inputs"].items():
        assert spec.get("description"), f"input {name} has no description"
    used = " ".join(
        str(s.get("env", "")) + str(s.get("with", "")) + str(s.get("if", ""))
        for s in ACTION["runs"]["steps"]
    )
    for name in ACTION["inputs"]:
        assert f"inputs.{name}" in used, f"input {name} is never used"
    ids = {s.get("id") for s in ACTION["runs"]["steps"]}
    for name, spec in ACTION["outputs"].items():
        step_id = re.search(r"steps\.([\w-]+)\.outputs", spec["value"])
        assert step_id and step_id.group(1) in ids, f"output {name} reads no step"
    assert {"conclusion", "verdict-path"} <= set(ACTION["outputs"])


def test_no_expression_inside_run_scripts() -> None:
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], f"{step['name']}: pass values through env, not run"
            assert step["shell"] == "bash"


def _on(workflow: dict[str, Any]) -> dict[str, Any]:
    return workflow.get("on", workflow.get(True))  # PyYAML reads a bare `on:` as True


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_are_least_privilege_and_serialised(name: str) -> None:
    workflow = EXAMPLES[name]
    assert workflow["permissions"] in ({}, {"contents": "read"}), "top level must be read-only"
    assert workflow["concurrency"]["group"]
    assert "pull_request_target" not in _on(workflow)
    for job_name, job in workflow["jobs"].items():
        perms = job["permissions"]
        assert all(v in ("read", "write") for v in perms.values())
        needed = {k for k, v in perms.items() if v == "write"}
        text = yaml.safe_dump(job)
        if needed:
            assert needed <= WRITE_SCOPES, f"{job_name}: unexpected write scopes {needed}"
        for step in job["steps"]:
            if step.get("uses", "").startswith("roofguard/roofguard/.github/actions/roofguard@"):
                assert set(step.get("with", {})) <= set(ACTION["inputs"]), step["with"]
        if "pull_request" in _on(workflow):
            assert "pull_request.number" in workflow["concurrency"]["group"]
        assert "secrets.GITHUB_TOKEN" not in text


def test_fork_safe_pair_fits_together() -> None:
    untrusted, trusted = EXAMPLES["pr-untrusted.yml"], EXAMPLES["pr-comment-trusted.yml"]
    (job,) = untrusted["jobs"].values()
    assert job["permissions"] == {"contents": "read"}
    upload = next(
        s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")
    )
    roofguard = next(s for s in job["steps"] if s.get("id") == "roofguard")
    assert roofguard["with"]["post"] == "false"
    assert _on(trusted)["workflow_run"]["workflows"] == [untrusted["name"]]
    (post,) = trusted["jobs"].values()
    uses = [s.get("uses", "") for s in post["steps"]]
    assert not any(u.startswith("actions/checkout") for u in uses), "never check out PR code"
    download = next(
        s for s in post["steps"] if s.get("uses", "").startswith("actions/download-artifact")
    )
    assert download["with"]["name"] == upload["with"]["name"]
    assert "workflow_run.id" in download["with"]["run-id"]
    poster = post["steps"][-1]["with"]
    assert poster["verify-head"] == "true" and "workflow_run.head_sha" in poster["sha"]
    assert poster["verdict"].startswith(download["with"]["path"])
    assert "workflow_run.head_repository" in trusted["concurrency"]["group"]


# -- running the steps ---------------------------------------------------------------------------
def test_action_posts_then_updates_and_applies_the_policy(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    runner = Runner(tmp_path, github_server)
    first = runner.run(verdict=write_verdict(tmp_path, regression_verdict()), device="H100-SXM5")
    assert first["Post the verdict"].returncode == 0, first["Post the verdict"].stderr
    assert first["Apply the failure policy"].returncode == 1
    assert "::error title=roofguard::conclusion failure" in first["Apply the failure policy"].stdout
    out = first["outputs"].outputs
    assert out["conclusion"] == "failure" and out["posted"] == "true"
    assert out["verdict-path"] == str(runner.temp / "roofguard" / "verdict.json")
    assert out["comment-url"].endswith(f"#issuecomment-{github_server.pr_comments(PR)[0]['id']}")
    passing = regression_verdict(conclusion=Conclusion.PASS)
    second = runner.run(verdict=write_verdict(tmp_path, passing, "v2.json"), device="H100-SXM5")
    assert second["Apply the failure policy"].returncode == 0
    (comment,) = github_server.pr_comments(PR)
    assert comment["body"].startswith(verdict_marker(REPO, PR, "H100-SXM5") + "\n## ✅")
    assert [c["conclusion"] for c in github_server.check_runs] == ["failure", "success"]
    assert {r.headers["authorization"] for r in github_server.requests} == {
        "token ghs_action_token"
    }


def test_action_with_a_fork_token_keeps_the_verdict(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    github_server.read_only = True
    runner = Runner(tmp_path, github_server)
    steps = runner.run(
        verdict=write_verdict(tmp_path, regression_verdict()), **{"failure-policy": "never"}
    )
    assert (
        steps["Post the verdict"].returncode == 0
        and steps["Apply the failure policy"].returncode == 0
    )
    assert steps["outputs"].outputs["posted"] == "false"
    assert "could not post" in runner.summary.read_text()
    assert (
        (runner.temp / "roofguard" / "verdict.md").read_text().startswith("<!-- roofguard:verdict")
    )


def test_action_without_posting_renders_only(github_server: FakeGitHub, tmp_path: Path) -> None:
    runner = Runner(tmp_path, github_server)
    steps = runner.run(
        verdict=write_verdict(tmp_path, regression_verdict()),
        post="false",
        **{"failure-policy": "never"},
    )
    assert steps["Apply the failure policy"].returncode == 0 and not github_server.requests
    assert steps["outputs"].outputs["conclusion"] == "neutral"
    assert "| ❌ | `decode_gemv<half>`" in (runner.temp / "roofguard" / "verdict.md").read_text()


def test_action_needs_reports_or_a_verdict(github_server: FakeGitHub, tmp_path: Path) -> None:
    steps = Runner(tmp_path, github_server).run(reports="missing/*.csv")
    check = steps["Check the reports"]
    assert check.returncode == 2 and "no report matches 'missing/*.csv'" in check.stdout


@pytest.mark.skipif(
    "service.cli.check_cmd" not in COMMANDS,
    reason="`roofguard check` is not merged into this branch yet",
)
def test_action_check_step_runs_check(github_server: FakeGitHub, tmp_path: Path) -> None:
    report = ROOT / "service" / "demo" / "data" / "pr-1234.csv"
    runner = Runner(tmp_path, github_server)
    steps = runner.run(
        reports=str(report),
        device="H100-SXM5",
        **{"database-url": f"sqlite:///{tmp_path / 'history.db'}"},
    )
    check = steps["Check the reports"]
    assert check.returncode == 0, check.stdout + check.stderr
    verdict = Verdict.model_validate_json(Path(check.outputs["verdict-path"]).read_text())
    assert verdict.kernels and steps["Post the verdict"].returncode == 0
    assert len(github_server.pr_comments(PR)) == 1


# -- the PR gate's re-measure step (issue 16) ------------------------------------------------
def _report(path: Path, scale: float, commit: str = "c0009") -> Path:
    from tests.factories import make_kernel, make_run

    gemv = make_kernel("gemv", flops={"tensor_bf16": 2e10}, dram_bytes=4e9, time_s=1.5e-3 * scale)
    norm = make_kernel("norm", flops={"fp32": 1e7}, dram_bytes=4e8, time_s=2e-4)
    path.write_text(make_run(kernels=[gemv, norm], commit=commit).model_dump_json())
    return path


def _history(tmp: Path) -> str:
    from datetime import UTC, datetime, timedelta

    from service.cli import run as cli
    from tests.factories import make_kernel, make_run

    db = f"sqlite:///{tmp / 'history.db'}"
    for night in range(8):
        gemv = make_kernel(
            "gemv",
            flops={"tensor_bf16": 2e10},
            dram_bytes=4e9,
            time_s=1.5e-3 * (1 + 0.01 * (night % 3)),
        )
        norm = make_kernel("norm", flops={"fp32": 1e7}, dram_bytes=4e8, time_s=2e-4)
        ts = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(days=night)
        record = make_run(kernels=[gemv, norm], commit=f"n{night}", timestamp=ts)
        path = tmp / f"night-{night}.json"
        path.write_text(record.model_dump_json())
        args = ["ingest", str(path), "--repo", REPO, "--commit", f"n{night}", "--branch", "main"]
        assert cli([*args, "--kind", "nightly", "--db", db]) == 0
    return db


@pytest.mark.parametrize(("again", "conclusion"), [(1.24, "failure"), (1.0, "success")])
def test_action_re_measures_the_suspects_with_the_profile_command(
    github_server: FakeGitHub, tmp_path: Path, again: float, conclusion: str
) -> None:
    db = _history(tmp_path)
    pr = _report(tmp_path / "pr.json", 1.25)  # gemv 20% below its level: a suspect
    _report(tmp_path / "again.json", again)
    seen = tmp_path / "seen.txt"
    # The user's profiling command: what it was asked to re-measure, and one new report.
    command = (
        f'printf "%s|%s" "$ROOFGUARD_SUSPECTS" "$ROOFGUARD_SUSPECTS_REGEX" > "{seen}"; '
        f'cp "{tmp_path / "again.json"}" "$ROOFGUARD_RERUN_DIR/"'
    )
    runner = Runner(tmp_path, github_server)
    steps = runner.run(reports=str(pr), **{"database-url": db, "profile-command": command})
    remeasure = steps["Re-measure the suspects"]
    assert remeasure.returncode == 0, remeasure.stdout + remeasure.stderr
    assert remeasure.outputs["suspects"] == "1" and seen.read_text() == "gemv|gemv"
    verdict = Verdict.model_validate_json(
        Path(steps["Check the reports"].outputs["verdict-path"]).read_text()
    )
    gemv = next(k for k in verdict.kernels if k.key == "gemv")
    assert len(gemv.measurements) == 2  # the run's and the re-measurement
    assert gemv.status == ("regressed" if conclusion == "failure" else "unchanged")
    assert steps["outputs"].outputs["conclusion"] == conclusion
    assert [c["conclusion"] for c in github_server.check_runs] == [conclusion]


def test_action_without_a_profile_command_leaves_suspects_as_warnings(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    db = _history(tmp_path)
    pr = _report(tmp_path / "pr.json", 1.25)
    steps = Runner(tmp_path, github_server).run(reports=str(pr), **{"database-url": db})
    assert steps["Re-measure the suspects"].outputs == {}
    assert steps["outputs"].outputs["conclusion"] == "neutral"
