"""The Action in server mode: its check step uploads to a live roofguard service."""

from pathlib import Path

from github_server import FakeGitHub
from svc_helpers import Service, start_live
from test_action import PR, REPO, ROOT, Runner

from rules.verdict import Verdict
from service.store.db import session_scope
from service.store.queries import list_runs


def test_action_in_server_mode_uploads_and_posts(
    service: Service, github_server: FakeGitHub, tmp_path: Path
) -> None:
    live = start_live(service.app)
    try:
        token = service.token(REPO)
        report = ROOT / "service" / "demo" / "data" / "pr-1234.csv"
        steps = Runner(tmp_path, github_server).run(
            reports=str(report),
            device="H100-SXM5",
            **{"server-url": live.url, "server-token": token},
        )
    finally:
        live.stop()
    check = steps["Check the reports"]
    assert check.returncode == 0, check.stdout + check.stderr
    assert token not in check.stdout + check.stderr
    verdict = Verdict.model_validate_json(Path(check.outputs["verdict-path"]).read_text())
    with session_scope(service.engine, readonly=True) as session:
        stored = list_runs(session=session, repo=REPO)
    assert [r.id for r in stored] == [verdict.run_id]
    assert stored[0].pull_request == PR
    assert steps["Post the verdict"].returncode == 0
    assert len(github_server.pr_comments(PR)) == 1
