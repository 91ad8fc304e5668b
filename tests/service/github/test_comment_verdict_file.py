"""``roofguard comment``: the verdict file it posts, what a dry run shows, where a failure says.

A file holding only ``{"conclusion": "fail"}`` validated and posted a red X on "unknown
device" with 0 regressions behind it (the Action's ``verdict`` input is such a file). A dry
run showed the verdict's own repository and PR in the marker, not ``--repo`` and ``--pr``
as posted. Outside Actions a failed post printed a ``::warning`` workflow command and sent
the reader to a job summary that does not exist there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from github_server import FakeGitHub, github_server_fixture
from test_github_cli import PR, REPO, SHA, actions_env, write_verdict
from verdict_factory import make_kernel, make_verdict, regression_verdict

from rules.verdict import Conclusion, Verdict
from service.cli import run
from service.render.markdown import verdict_marker

#: The fake GitHub's fixture (``github_server``), imported for these tests.
FIXTURES = (github_server_fixture,)

_KERNEL = make_kernel("decode_gemv<half>", share=1.0, pct=80.0, center=80.0)
SELF_CONTRADICTING = {
    "only a conclusion": ({"conclusion": "fail"}, "field device: missing"),
    "no commit": (regression_verdict(commit=""), "field commit: missing"),
    "no kernels": (make_verdict(conclusion=Conclusion.PASS), "field kernels: empty"),
    "fail, no findings": (
        make_verdict([_KERNEL], conclusion=Conclusion.FAIL),
        "field conclusion: fail, but its findings hold 0 regression(s) and 0 warning(s)",
    ),
    "pass, a regression": (
        regression_verdict(conclusion=Conclusion.PASS),
        "field conclusion: pass, but its findings hold 1 regression(s) and 1 warning(s)",
    ),
}


def _in_actions(
    server: FakeGitHub, tmp: Path, monkeypatch: pytest.MonkeyPatch, **extra: str
) -> None:
    for name, value in actions_env(server, tmp, **extra).items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize(("verdict", "said"), SELF_CONTRADICTING.values(), ids=SELF_CONTRADICTING)
def test_a_verdict_check_never_writes_is_refused_naming_file_and_field(
    github_server: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    verdict: Verdict | dict[str, str],
    said: str,
) -> None:
    _in_actions(github_server, tmp_path, monkeypatch)
    path = tmp_path / "verdict.json"
    if isinstance(verdict, Verdict):
        path = write_verdict(tmp_path, verdict)
    else:
        path.write_text(json.dumps(verdict))
    assert run(["comment", "--repo", REPO, "--verdict", str(path), "--pr", "42", "--sha", SHA]) == 2
    assert f"roofguard: error: {path}: {said}" in capsys.readouterr().err
    assert not github_server.requests and not (tmp_path / "output").exists()


@pytest.mark.parametrize(
    "verdict",
    [
        regression_verdict(),
        make_verdict([_KERNEL]),  # pass, nothing found
        regression_verdict(conclusion=Conclusion.WARN),  # fail_on: never
        make_verdict([_KERNEL], regression_verdict().findings[1:2], conclusion=Conclusion.FAIL),
    ],
    ids=["fail", "pass", "warn-never-fails", "fail-on-warn"],
)
def test_every_conclusion_a_failure_policy_gives_is_posted(
    github_server: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verdict: Verdict
) -> None:
    _in_actions(github_server, tmp_path, monkeypatch)
    path = write_verdict(tmp_path, verdict)
    assert run(["comment", "--repo", REPO, "--verdict", str(path), "--sha", SHA]) == 0
    assert len(github_server.pr_comments(PR)) == 1 and len(github_server.check_runs) == 1


def test_a_dry_run_shows_the_marker_a_post_sends(
    github_server: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _in_actions(github_server, tmp_path, monkeypatch)
    path = write_verdict(tmp_path, regression_verdict(repo="example/llm-serving", pr=1234))
    args = ["comment", "--repo", REPO, "--verdict", str(path), "--pr", str(PR)]
    assert run([*args, "--dry-run"]) == 0
    preview = capsys.readouterr().out
    assert run(args) == 0
    (posted,) = github_server.pr_comments(PR)
    assert preview.startswith(verdict_marker(REPO, PR, "H100-SXM5"))
    assert preview.split("\n", 1)[0] == posted["body"].split("\n", 1)[0]


def test_outside_actions_a_failed_post_says_plainly_where_the_verdict_went(
    github_server: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in [n for n in os.environ if n.startswith(("GITHUB_", "ROOFGUARD_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("GITHUB_API_URL", github_server.url)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_revoked")
    monkeypatch.chdir(tmp_path)
    github_server.fail_next("GET", ".*", 401, body={"message": "Bad credentials"})
    path = write_verdict(tmp_path, regression_verdict())
    assert run(["comment", "--repo", REPO, "--verdict", str(path), "--sha", SHA]) == 2
    said = capsys.readouterr()
    assert "::warning" not in said.out + said.err and "job summary" not in said.out + said.err
    assert (
        "roofguard: warning: GitHub: 401 Bad credentials (posting to PR #42 of acme/kernels). "
        "The verdict is in roofguard-verdict/ (verdict.json, verdict.md)."
    ) in said.err
    assert (tmp_path / "roofguard-verdict" / "verdict.json").is_file()
