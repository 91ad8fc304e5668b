"""The Action in server mode: its check step uploads to a live roofguard service.

roofguard runs from the fresh virtual environment of ``action_runner.py`` (installed by the
Action's install step); the run's kind travels with the upload (pr with a PR, else nightly).
"""

from pathlib import Path

import pytest
from action_runner import (
    PR,
    REPORT,
    SHA,
    Runner,
    fresh_venv_fixture,  # noqa: F401
    pack_artifact,
    workflow_run_event,
)
from github_server import FakeGitHub
from remeasure_data import gemv_report, judged_gemv, profiling_command, stable_history
from svc_helpers import Service, start_live

from rules.verdict import Severity, Verdict
from service.store.db import session_scope
from service.store.queries import list_findings, list_runs


def run_server_mode(
    service: Service, github_server: FakeGitHub, tmp_path: Path, venv: Path, **inputs: str
):
    repo = inputs.pop("repo")  # one of this test alone: the PostgreSQL database is shared
    live = start_live(service.app)
    try:
        token = service.token(repo)
        steps = Runner(tmp_path, github_server, venv, repo=repo).run(
            reports=str(REPORT),
            device="H100-SXM5",
            **{"server-url": live.url, "server-token": token},
            **inputs,
        )
    finally:
        live.stop()
    check = steps["Check the reports"]
    assert check.returncode == 0, check.stdout + check.stderr
    assert token not in check.stdout + check.stderr
    return steps


def stored(service: Service, repo: str):
    with session_scope(service.engine, readonly=True) as session:
        return list_runs(session=session, repo=repo)


def test_action_in_server_mode_uploads_and_posts(
    service: Service, github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path, repo: str
) -> None:
    steps = run_server_mode(service, github_server, tmp_path, fresh_venv, repo=repo)
    verdict_path = Path(steps["Check the reports"].outputs["verdict-path"])
    verdict = Verdict.model_validate_json(verdict_path.read_text())
    runs = stored(service, repo)
    assert [r.id for r in runs] == [verdict.run_id]
    assert (runs[0].pull_request, runs[0].kind) == (PR, "pr")
    assert steps["Post the verdict"].returncode == 0
    assert len(github_server.pr_comments(PR)) == 1


@pytest.mark.parametrize(("kind", "expected"), [("", "nightly"), ("local", "local")])
def test_action_in_server_mode_without_a_pr_passes_the_kind(
    service: Service,
    github_server: FakeGitHub,
    tmp_path: Path,
    fresh_venv: Path,
    kind: str,
    expected: str,
    repo: str,
) -> None:
    run_server_mode(
        service, github_server, tmp_path, fresh_venv, repo=repo, pr="", kind=kind, post="false"
    )
    (run,) = stored(service, repo)
    assert (run.kind, run.pull_request) == (expected, None)


def test_the_fork_pair_judges_on_the_server(
    service: Service, github_server: FakeGitHub, tmp_path: Path, fresh_venv: Path, repo: str
) -> None:
    """The trusted job in server mode: the verified reports go to the service with its token."""
    artifact = pack_artifact(tmp_path, fresh_venv, github_server)
    github_server.pull_heads[PR] = SHA
    live = start_live(service.app)
    try:
        token = service.token(repo)
        runner = Runner(
            tmp_path / "trusted", github_server, fresh_venv, workflow_run_event(), repo=repo
        )
        steps = runner.run(
            mode="judge-artifact",
            artifact=str(artifact),
            **{"server-url": live.url, "server-token": token},
        )
    finally:
        live.stop()
    assert steps["Verify the artifact"].returncode == 0, steps["Verify the artifact"].stderr
    assert steps["Check the reports"].returncode == 0, steps["Check the reports"].stderr
    assert steps["Post the verdict"].returncode == 0, steps["Post the verdict"].stderr
    (run,) = stored(service, repo)
    assert (run.kind, run.pull_request, run.commit, run.branch) == ("pr", PR, SHA, "fork-feature")
    assert len(github_server.pr_comments(PR)) == 1


@pytest.mark.parametrize(("again", "conclusion"), [(1.24, "failure"), (1.0, "success")])
def test_action_in_server_mode_re_measures_the_suspects(
    service: Service,
    github_server: FakeGitHub,
    tmp_path: Path,
    fresh_venv: Path,
    repo: str,
    again: float,
    conclusion: str,
) -> None:
    """The PR gate's loop against the service: the suspects come back from it, the
    re-measurement goes to it, and the profiling command never sees the service's token."""
    stable_history(tmp_path, service.settings.database_url, repo)
    pr = gemv_report(tmp_path / "pr.json", 1.25)  # gemv 20% below its level: a suspect
    gemv_report(tmp_path / "again.json", again)
    seen = tmp_path / "seen.txt"
    shown = ("$ROOFGUARD_SUSPECTS", "${ROOFGUARD_SERVER_TOKEN:-no token}")
    command = profiling_command(seen, tmp_path / "again.json", *shown)
    live = start_live(service.app)
    try:
        token = service.token(repo)
        steps = Runner(tmp_path, github_server, fresh_venv, repo=repo).run(
            reports=str(pr),
            **{"server-url": live.url, "server-token": token, "profile-command": command},
        )
    finally:
        live.stop()
    remeasure = steps["Re-measure the suspects"]
    assert remeasure.returncode == 0, remeasure.stdout + remeasure.stderr
    assert seen.read_text() == "gemv|no token"
    gemv = judged_gemv(steps)
    assert len(gemv.measurements) == 2  # the run's and the re-measurement
    assert gemv.status == ("regressed" if conclusion == "failure" else "unchanged")
    assert steps["outputs"].outputs["conclusion"] == conclusion
    (run,) = [r for r in stored(service, repo) if r.kind == "pr"]  # stored once by both uploads
    with session_scope(service.engine, readonly=True) as session:
        failing = [
            f for f in list_findings(session=session, run_id=run.id) if f.severity == Severity.FAIL
        ]
    assert bool(failing) == (conclusion == "failure")  # the store holds the final judgement
