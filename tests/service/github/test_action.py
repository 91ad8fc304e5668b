"""The composite Action: its YAML, the example workflows, and its steps in a simulated runner.

The runner and the fresh virtual environment roofguard runs from are in ``action_runner.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from action_runner import (
    ACTION,
    ACTION_DIR,
    EXAMPLES,
    PR,
    REPO,
    REPORT,
    Runner,
    fresh_venv_fixture,  # noqa: F401
    write_verdict,
)
from github_server import FakeGitHub, github_server_fixture  # noqa: F401
from remeasure_data import gemv_report, judged_gemv, profiling_command, stable_history
from verdict_factory import make_verdict, regression_verdict

from rules.verdict import Verdict
from service.cli import run
from service.github.publish import PublishResult, result_outputs
from service.render.markdown import verdict_marker
from service.store.db import make_engine, session_scope
from service.store.queries import list_runs

WRITE_SCOPES = {"pull-requests", "issues", "checks", "statuses"}
NO_STORED_MERGE_BASE = (
    "merge base c0ffee7 has no stored main run: judged against the newest main runs, "
    "which may hold changes merged after this branch left it"
)


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


def test_every_output_of_roofguard_comment_is_an_action_output() -> None:
    """``check`` (what carried the conclusion) was written by the post step, never exposed."""
    result = PublishResult(True, "created", 1, "https://x/c#1", "check-run", "success")
    internal = {"should-fail"}  # read by the failure-policy step alone
    read = {
        name: found.group(1)
        for name, spec in ACTION["outputs"].items()
        if (found := re.fullmatch(r"\$\{\{ steps\.post\.outputs\.([\w-]+) \}\}", spec["value"]))
    }
    assert read == {name: name for name in set(result_outputs(result)) - internal}


def test_no_expression_inside_run_scripts() -> None:
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], f"{step['name']}: pass values through env, not run"
            assert step["shell"] == "bash"
    assert "${{" not in (ACTION_DIR / "install.sh").read_text()


def test_every_step_after_install_runs_the_installed_roofguard() -> None:
    for step in ACTION["runs"]["steps"]:
        run = step.get("run", "")
        if "roofguard " in run and step.get("id") != "install":
            assert "steps.install.outputs.bin" in step["env"]["ROOFGUARD"], step["name"]
            assert not re.search(r"^\s*roofguard ", run, re.M), f"{step['name']}: use $ROOFGUARD"


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


def test_third_party_actions_are_pinned_to_a_commit() -> None:
    steps = [s for wf in EXAMPLES.values() for job in wf["jobs"].values() for s in job["steps"]]
    for step in [*steps, *ACTION["runs"]["steps"]]:
        uses = step.get("uses", "")
        if uses and not uses.startswith("roofguard/roofguard/"):  # ours: pin your release tag
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", uses), uses


def test_fork_safe_pair_fits_together() -> None:
    untrusted, trusted = EXAMPLES["pr-untrusted.yml"], EXAMPLES["pr-comment-trusted.yml"]
    (job,) = untrusted["jobs"].values()
    assert job["permissions"] == {"contents": "read"}
    assert "secrets." not in yaml.safe_dump(job), "the untrusted job gets no secrets"
    upload = next(
        s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")
    )
    packer = next(s for s in job["steps"] if s.get("id") == "roofguard")
    assert packer["with"]["mode"] == "artifact"
    assert "steps.roofguard.outputs.artifact-path" in upload["with"]["path"]
    assert _on(trusted)["workflow_run"]["workflows"] == [untrusted["name"]]
    (post,) = trusted["jobs"].values()
    for step in post["steps"]:
        if step.get("uses", "").startswith("actions/checkout"):  # config only, never PR code
            assert step["with"]["ref"] == "${{ github.event.repository.default_branch }}"
            assert step["with"]["persist-credentials"] is False
    assert "head_sha" not in yaml.safe_dump([s.get("with", {}) for s in post["steps"][:-1]])
    download = next(
        s for s in post["steps"] if s.get("uses", "").startswith("actions/download-artifact")
    )
    assert download["with"]["name"] == upload["with"]["name"]
    assert "workflow_run.id" in download["with"]["run-id"]
    judge = post["steps"][-1]["with"]
    assert judge["mode"] == "judge-artifact" and judge["artifact"] == download["with"]["path"]
    assert "secrets." in judge["database-url"]
    assert "workflow_run.head_repository" in trusted["concurrency"]["group"]


# -- running the steps ---------------------------------------------------------------------------
def test_action_posts_then_updates_and_applies_the_policy(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    runner = Runner(tmp_path, github_server, fresh_venv)
    first = runner.run(verdict=write_verdict(tmp_path, regression_verdict()), device="H100-SXM5")
    assert first["Post the verdict"].returncode == 0, first["Post the verdict"].stderr
    assert first["Apply the failure policy"].returncode == 1
    assert "::error title=roofguard::conclusion failure" in first["Apply the failure policy"].stdout
    out = first["outputs"].outputs
    assert out["conclusion"] == "failure" and out["posted"] == "true"
    assert out["verdict-path"] == str(runner.temp / "roofguard" / "verdict.json")
    assert out["comment-url"].endswith(f"#issuecomment-{github_server.pr_comments(PR)[0]['id']}")
    assert out["check"] == "check-run"
    # the same kernels judged again, nothing found: a pass (a pass with a regression is refused)
    passing = make_verdict(list(regression_verdict().kernels))
    second = runner.run(verdict=write_verdict(tmp_path, passing, "v2.json"), device="H100-SXM5")
    assert second["Apply the failure policy"].returncode == 0
    (comment,) = github_server.pr_comments(PR)
    assert comment["body"].startswith(verdict_marker(REPO, PR, "H100-SXM5") + "\n## ✅")
    assert [c["conclusion"] for c in github_server.check_runs] == ["failure", "success"]
    assert {r.headers["authorization"] for r in github_server.requests} == {
        "token ghs_action_token"
    }


def test_action_with_a_fork_token_keeps_the_verdict(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    github_server.read_only = True
    runner = Runner(tmp_path, github_server, fresh_venv)
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


def test_action_without_posting_renders_only(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    runner = Runner(tmp_path, github_server, fresh_venv)
    steps = runner.run(
        verdict=write_verdict(tmp_path, regression_verdict()),
        post="false",
        **{"failure-policy": "never"},
    )
    assert steps["Apply the failure policy"].returncode == 0 and not github_server.requests
    assert steps["outputs"].outputs["conclusion"] == "neutral"
    assert "| ❌ | `decode_gemv<half>`" in (runner.temp / "roofguard" / "verdict.md").read_text()


def test_action_needs_reports_or_a_verdict(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    steps = Runner(tmp_path, github_server, fresh_venv).run(reports="missing/*.csv")
    check = steps["Check the reports"]
    assert check.returncode == 2 and "no report matches 'missing/*.csv'" in check.stdout


def _expand(folder: Path, patterns: str) -> subprocess.CompletedProcess[str]:
    script = 'source "$1"; expand_patterns "$2" || exit $?; printf "%s\\n" "${matched[@]}"'
    command = ["bash", "-c", script, "bash", str(ACTION_DIR / "patterns.sh"), patterns]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=30)


def test_report_patterns_give_each_file_once_and_no_folder(tmp_path: Path) -> None:
    """Two patterns matching one file made one run hold its kernels twice; `**` gave folders."""
    (tmp_path / "reports" / "sub").mkdir(parents=True)
    for name in ("a.csv", "b.csv", "sub/c.csv"):
        (tmp_path / "reports" / name).write_text("kernel\n")
    found = _expand(tmp_path, "reports/*.csv\nreports/a.csv reports/**")
    assert found.returncode == 0, found.stdout + found.stderr
    assert found.stdout.split() == ["reports/a.csv", "reports/b.csv", "reports/sub/c.csv"]
    folders = _expand(tmp_path, "reports/sub")
    assert folders.returncode == 2
    assert "'reports/sub' matches only folders, no report" in folders.stdout


def test_action_database_mode_checks_stores_and_posts(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    db = tmp_path / "history.db"
    runner = Runner(tmp_path, github_server, fresh_venv)
    steps = runner.run(
        reports=str(REPORT), device="H100-SXM5", **{"database-url": f"sqlite:///{db}"}
    )
    check = steps["Check the reports"]
    assert check.returncode == 0, check.stdout + check.stderr
    verdict = Verdict.model_validate_json(Path(check.outputs["verdict-path"]).read_text())
    assert verdict.kernels and steps["Post the verdict"].returncode == 0
    assert len(github_server.pr_comments(PR)) == 1
    assert stored_runs(f"sqlite:///{db}", REPO) == [("pr", PR)]


def test_a_fork_token_leaves_one_verdict_in_the_job_summary(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    """The check step writes the verdict; the post step that cannot post adds its note only."""
    github_server.read_only = True
    runner = Runner(tmp_path, github_server, fresh_venv)
    db = f"sqlite:///{tmp_path / 'history.db'}"
    steps = runner.run(reports=str(REPORT), device="H100-SXM5", **{"database-url": db})
    assert steps["Post the verdict"].returncode == 0, steps["Post the verdict"].stderr
    summary = runner.summary.read_text()
    assert summary.count(verdict_marker(REPO, PR, "H100-SXM5")) == 1
    assert summary.count("could not post") == 1


@pytest.mark.parametrize("merge_base", ["nightly1", "c0ffee7"])
def test_action_cuts_the_baseline_at_the_base_sha_it_is_given(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path, merge_base: str
) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    night = ["check", str(REPORT), "--repo", REPO, "--kind", "nightly", "--branch", "main"]
    assert run([*night, "--commit", "nightly1", "--device", "H100-SXM5", "--db", url]) == 0
    runner = Runner(tmp_path, github_server, fresh_venv)
    steps = runner.run(
        reports=str(REPORT),
        device="H100-SXM5",
        **{"database-url": url, "base-branch": "main", "base-sha": merge_base, "post": "false"},
    )
    check = steps["Check the reports"]
    assert check.returncode == 0, check.stdout + check.stderr
    verdict = Verdict.model_validate_json(Path(check.outputs["verdict-path"]).read_text())
    noted = [n for n in verdict.notes if n.startswith("merge base")]
    assert noted == ([] if merge_base == "nightly1" else [NO_STORED_MERGE_BASE])


def test_action_cuts_at_the_merge_base_s_commit_time_when_the_checkout_has_it(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    night = ["check", str(REPORT), "--repo", REPO, "--kind", "nightly", "--branch", "main"]
    for commit, day in (("n1", 1), ("n2", 2), ("n5", 5)):
        when = f"2026-11-0{day}T02:00:00Z"
        args = ["--commit", commit, "--timestamp", when, "--device", "H100-SXM5", "--db", url]
        assert run([*night, *args]) == 0
    merge_base = _commit_at(tmp_path, "2026-11-03T12:00:00+00:00")  # the runner's checkout
    steps = Runner(tmp_path, github_server, fresh_venv).run(
        reports=str(REPORT),
        device="H100-SXM5",
        **{"database-url": url, "base-branch": "main", "base-sha": merge_base, "post": "false"},
    )
    check = steps["Check the reports"]
    assert check.returncode == 0, check.stdout + check.stderr
    verdict = Verdict.model_validate_json(Path(check.outputs["verdict-path"]).read_text())
    assert verdict.baseline is not None and verdict.baseline.commits == ("n1", "n2")
    assert verdict.notes[-1] == (
        f"merge base {merge_base[:12]} has no stored main run: judged against the main runs "
        "measured up to its commit time, 2026-11-03 12:00 UTC"
    )


def _commit_at(folder: Path, when: str) -> str:
    """A git repository in ``folder`` with one commit made at ``when``; its SHA."""
    env = {**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
    ident = ["-c", "user.name=ci", "-c", "user.email=ci@example.com"]
    git = partial(subprocess.run, cwd=folder, env=env, check=True, capture_output=True, text=True)
    git(["git", "init", "-q"])
    git(["git", *ident, "commit", "-q", "--allow-empty", "-m", "merge base"])
    return git(["git", "rev-parse", "HEAD"]).stdout.strip()


@pytest.mark.postgres
def test_action_database_mode_on_postgresql(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path, postgres_url: str
) -> None:
    repo = f"acme/pg-{uuid.uuid4().hex[:8]}"  # the session's database is shared
    runner = Runner(tmp_path, github_server, fresh_venv, repo=repo)
    steps = runner.run(reports=str(REPORT), device="H100-SXM5", **{"database-url": postgres_url})
    check = steps["Check the reports"]
    assert check.returncode == 0, check.stdout + check.stderr
    assert steps["Post the verdict"].returncode == 0
    assert stored_runs(postgres_url, repo) == [("pr", PR)]


def stored_runs(url: str, repo: str) -> list[tuple[str, int | None]]:
    engine = make_engine(url)
    try:
        with session_scope(engine, readonly=True) as session:
            return [(r.kind, r.pull_request) for r in list_runs(session=session, repo=repo)]
    finally:
        engine.dispose()


def test_action_a_missing_driver_fails_the_step_with_one_clear_error(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    steps = Runner(tmp_path, github_server, fresh_venv).run(
        reports=str(REPORT), **{"database-url": "mysql+mysqldb://ci@db.invalid/perf"}
    )
    check = steps["Check the reports"]
    assert check.returncode == 2 and "Traceback" not in check.stderr
    assert "the database driver 'MySQLdb' is not installed" in check.stderr
    assert not github_server.requests


@pytest.mark.parametrize("example", ["pr-check.yml", "pr-comment-trusted.yml"])
def test_example_inputs_work_on_day_one_without_a_config_file(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path, example: str
) -> None:
    """A team with no roofguard.toml copies an example: `config: roofguard.toml` was exit 2.

    The check finds roofguard.toml in the workspace by itself, so the examples need not name
    it; a config that is there is still read (its typo fails the step).
    """
    (job,) = EXAMPLES[example]["jobs"].values()
    step = next(s for s in job["steps"] if s.get("uses", "").startswith("roofguard/"))
    inputs = {k: str(v) for k, v in step["with"].items() if "${{" not in str(v)}
    inputs.pop("mode", None)  # the artifact hand-over is tested in test_action_fork.py
    inputs.pop("artifact", None)
    inputs.update(reports=str(REPORT), **{"database-url": f"sqlite:///{tmp_path}/h.db"})
    runner = Runner(tmp_path, github_server, fresh_venv)
    check = runner.run(**inputs)["Check the reports"]
    assert check.returncode == 0, check.stdout + check.stderr
    (tmp_path / "roofguard.toml").write_text('[rules]\nfail_onn = "never"\n')
    check = runner.run(**inputs)["Check the reports"]
    assert check.returncode == 2 and "fail_onn" in check.stdout + check.stderr


# -- the PR gate's re-measure step (issue 16) ------------------------------------------------
@pytest.mark.parametrize(("again", "conclusion"), [(1.24, "failure"), (1.0, "success")])
def test_action_re_measures_the_suspects_with_the_profile_command(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path, again: float, conclusion: str
) -> None:
    db = stable_history(tmp_path)
    pr = gemv_report(tmp_path / "pr.json", 1.25)  # gemv 20% below its level: a suspect
    gemv_report(tmp_path / "again.json", again)
    seen = tmp_path / "seen.txt"
    # The user's profiling command: what it was asked to re-measure, and one new report.
    shown = ("$ROOFGUARD_SUSPECTS", "$ROOFGUARD_SUSPECTS_REGEX")
    command = profiling_command(seen, tmp_path / "again.json", *shown)
    runner = Runner(tmp_path, github_server, fresh_venv)
    steps = runner.run(reports=str(pr), **{"database-url": db, "profile-command": command})
    remeasure = steps["Re-measure the suspects"]
    assert remeasure.returncode == 0, remeasure.stdout + remeasure.stderr
    assert remeasure.outputs["suspects"] == "1" and seen.read_text() == "gemv|gemv"
    gemv = judged_gemv(steps)
    assert len(gemv.measurements) == 2  # the run's and the re-measurement
    assert gemv.status == ("regressed" if conclusion == "failure" else "unchanged")
    assert steps["outputs"].outputs["conclusion"] == conclusion
    assert [c["conclusion"] for c in github_server.check_runs] == [conclusion]


def test_action_without_a_profile_command_leaves_suspects_as_warnings(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    db = stable_history(tmp_path)
    pr = gemv_report(tmp_path / "pr.json", 1.25)
    steps = Runner(tmp_path, github_server, fresh_venv).run(reports=str(pr), **{"database-url": db})
    assert steps["Re-measure the suspects"].outputs == {}
    assert steps["outputs"].outputs["conclusion"] == "neutral"
