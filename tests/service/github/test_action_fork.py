"""The fork-safe pair end to end: the untrusted job packs, the trusted job verifies, judges, posts.

Both jobs run the Action's steps in the simulated runner (``action_runner.py``); the upload
and download of the artifact in between is a copy of the folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from action_runner import (
    PR,
    REPO,
    REPORT,
    SHA,
    Runner,
    StepRun,
    fresh_venv_fixture,  # noqa: F401
    pack_artifact,
    workflow_run_event,
    write_verdict,
)
from github_server import FakeGitHub, github_server_fixture  # noqa: F401
from remeasure_data import gemv_report, judged_gemv, stable_history
from verdict_factory import regression_verdict

from rules.verdict import Conclusion
from service.github.artifact import MANIFEST
from service.store.db import make_engine, session_scope
from service.store.queries import list_runs

OTHER_SHA = "f" * 40


def judge(tmp: Path, venv: Path, server: FakeGitHub, artifact: Path, **event) -> dict[str, StepRun]:
    runner = Runner(tmp / "trusted", server, venv, event=workflow_run_event(**event))
    return runner.run(
        mode="judge-artifact",
        artifact=str(artifact),
        **{"database-url": f"sqlite:///{tmp / 'history.db'}"},
    )


def test_the_pair_gives_a_verdict_on_a_fork_pr(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    artifact = pack_artifact(tmp_path, fresh_venv, github_server)
    manifest = json.loads((artifact / MANIFEST).read_text())
    assert (manifest["pr"], manifest["sha"], manifest["device"]) == (PR, SHA, "H100-SXM5")
    assert [f["name"] for f in manifest["files"]] == [REPORT.name]
    github_server.pull_heads[PR] = SHA
    steps = judge(tmp_path, fresh_venv, github_server, artifact)
    verified = steps["Verify the artifact"]
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert steps["Check the reports"].returncode == 0, steps["Check the reports"].stderr
    assert steps["Post the verdict"].returncode == 0, steps["Post the verdict"].stderr
    (comment,) = github_server.pr_comments(PR)
    assert comment["body"].startswith("<!-- roofguard:verdict")
    assert [c["head_sha"] for c in github_server.check_runs] == [SHA]
    engine = make_engine(f"sqlite:///{tmp_path / 'history.db'}")
    with session_scope(engine, readonly=True) as session:
        (run,) = list_runs(session=session, repo=REPO)
    engine.dispose()
    # the branch is the event's, the kind pr, the commit the one verified
    assert (run.kind, run.pull_request, run.commit, run.branch) == ("pr", PR, SHA, "fork-feature")


@pytest.mark.parametrize(("again", "status"), [(1.25, "regressed"), (1.0, "unchanged")])
def test_a_fork_pr_measured_twice_is_confirmed_or_cleared(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path, again: float, status: str
) -> None:
    """No job of the pair may both know the suspects and profile them, so the untrusted job
    profiles twice and packs the second run as re-measurements (``rerun-reports``)."""
    stable_history(tmp_path)  # the trusted job's store: tmp_path / history.db
    pr = gemv_report(tmp_path / "pr.json", 1.25, commit=SHA)  # gemv 20% slower: a suspect
    second = gemv_report(tmp_path / "pr-again.json", again, commit=SHA)
    artifact = pack_artifact(
        tmp_path, fresh_venv, github_server, reports=str(pr), **{"rerun-reports": str(second)}
    )
    github_server.pull_heads[PR] = SHA
    steps = judge(tmp_path, fresh_venv, github_server, artifact)
    assert steps["Check the reports"].returncode == 0, steps["Check the reports"].stderr
    gemv = judged_gemv(steps)
    assert (gemv.status, len(gemv.measurements)) == (status, 2)
    expected = "failure" if status == "regressed" else "success"
    assert steps["outputs"].outputs["conclusion"] == expected


@pytest.mark.parametrize(
    ("event", "head", "message"),
    [
        ({"sha": OTHER_SHA}, SHA, "is not the workflow run's head commit"),
        ({"prs": (7,)}, SHA, "is not the run's PR [7]"),
        ({}, OTHER_SHA, f"PR #{PR} of {REPO} is at ffffffffffff"),
    ],
    ids=["another-commit", "another-pr", "pr-head-moved"],
)
def test_the_trusted_job_refuses_an_artifact_that_lies(
    github_server: FakeGitHub,
    tmp_path: Path,
    fresh_venv: Path,
    event: dict,
    head: str,
    message: str,
) -> None:
    artifact = pack_artifact(tmp_path, fresh_venv, github_server)
    github_server.pull_heads[PR] = head
    steps = judge(tmp_path, fresh_venv, github_server, artifact, **event)
    verified = steps["Verify the artifact"]
    assert verified.returncode == 2 and message in verified.stderr, verified.stderr
    assert "Check the reports" not in steps and not github_server.calls("POST")
    assert not (tmp_path / "history.db").exists(), "nothing is judged or stored"


def test_the_trusted_job_refuses_a_smuggled_file(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    artifact = pack_artifact(tmp_path, fresh_venv, github_server)
    (artifact / "reports" / "evil.csv").write_text("kernel,x\n")
    github_server.pull_heads[PR] = SHA
    steps = judge(tmp_path, fresh_venv, github_server, artifact)
    verified = steps["Verify the artifact"]
    assert verified.returncode == 2
    assert "files not in the manifest: ['evil.csv']" in verified.stderr
    assert not github_server.calls("POST")


def test_the_pair_works_where_the_runner_s_temp_folder_has_a_space(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    """The verified files' paths went back through the patterns' split on spaces."""
    spaced = tmp_path / "actions runner"
    spaced.mkdir()
    stable_history(spaced)
    pr = gemv_report(tmp_path / "pr.json", 1.25, commit=SHA)  # the user's patterns: no space
    again = gemv_report(tmp_path / "pr-again.json", 1.25, commit=SHA)
    artifact = pack_artifact(
        spaced, fresh_venv, github_server, reports=str(pr), **{"rerun-reports": str(again)}
    )
    github_server.pull_heads[PR] = SHA
    steps = judge(spaced, fresh_venv, github_server, artifact)
    assert steps["Check the reports"].returncode == 0, steps["Check the reports"].stderr
    gemv = judged_gemv(steps)
    assert (gemv.status, len(gemv.measurements)) == ("regressed", 2)
    assert steps["Post the verdict"].returncode == 0, steps["Post the verdict"].stderr


def test_a_verdict_after_a_pull_request_s_run_is_refused(
    github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path
) -> None:
    """A fork's job can write any verdict: posted as it was, a forged pass passed the check."""
    forged = regression_verdict(conclusion=Conclusion.PASS)
    runner = Runner(tmp_path, github_server, fresh_venv, event=workflow_run_event())
    steps = runner.run(verdict=write_verdict(tmp_path, forged), pr=str(PR))
    check = steps["Check the reports"]
    assert check.returncode == 2
    assert "::error title=roofguard verdict refused::" in check.stdout
    assert "mode judge-artifact" in check.stdout
    assert "Post the verdict" not in steps and not github_server.calls("POST")
