"""``roofguard comment`` as a real process against the fake GitHub, and the Actions helpers."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from github_server import FakeGitHub, github_server_fixture  # noqa: F401
from verdict_factory import make_finding, make_kernel, make_verdict, regression_verdict

from rules.verdict import Verdict
from service.github.actions import (
    SUMMARY_LIMIT_BYTES,
    annotation_lines,
    append_step_summary,
    emit_annotations,
    set_outputs,
)
from service.github.artifact import pack
from service.render.markdown import verdict_marker

ROOT = Path(__file__).resolve().parents[3]
REPO, PR = "acme/kernels", 42
SHA = "0123456789abcdef0123456789abcdef01234567"


def actions_env(server: FakeGitHub, tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "ROOFGUARD_"))}
    env.update(
        GITHUB_ACTIONS="true",
        GITHUB_TOKEN="ghs_test",
        GITHUB_API_URL=server.url,
        GITHUB_STEP_SUMMARY=str(tmp / "summary.md"),
        GITHUB_OUTPUT=str(tmp / "output"),
        ROOFGUARD_ARTIFACT_DIR=str(tmp / "artifact"),
        PYTHONPATH=str(ROOT),
        **extra,
    )
    return env


def comment(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "service", "comment", *args]
    return subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)


def outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def write_verdict(tmp: Path, verdict: Verdict) -> Path:
    path = tmp / "verdict.json"
    path.write_text(verdict.model_dump_json())
    return path


def test_comment_posts_then_updates(github_server: FakeGitHub, tmp_path: Path) -> None:
    env = actions_env(github_server, tmp_path)
    path = write_verdict(tmp_path, regression_verdict())
    args = ["--repo", REPO, "--verdict", str(path), "--sha", SHA]
    first, second = comment(env, *args), comment(env, *args)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    # the same verdict again: no edit sent, and it says so (it said "comment updated")
    assert "comment created" in first.stderr and "comment unchanged" in second.stderr
    assert not github_server.calls("PATCH")
    assert len(github_server.pr_comments(PR)) == 1 and len(github_server.check_runs) == 2
    out = outputs(tmp_path / "output")
    assert (
        out["conclusion"] == "failure" and out["should-fail"] == "true" and out["posted"] == "true"
    )
    assert not (
        tmp_path / "summary.md"
    ).exists()  # check writes the summary; comment only on fallback


def test_fork_token_writes_summary_and_artifact_and_exits_0(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    github_server.read_only = True
    env = actions_env(github_server, tmp_path)
    path = write_verdict(tmp_path, regression_verdict())
    proc = comment(env, "--repo", REPO, "--verdict", str(path), "--sha", SHA)
    assert proc.returncode == 0, proc.stderr
    assert "::warning title=roofguard::" in proc.stdout and "read-only GITHUB_TOKEN" in proc.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert "could not post" in summary and verdict_marker(REPO, PR, "H100-SXM5") in summary
    artifact = Verdict.model_validate_json((tmp_path / "artifact" / "verdict.json").read_text())
    assert artifact == regression_verdict()
    assert outputs(tmp_path / "output")["posted"] == "false" and not github_server.pr_comments(PR)


def test_an_empty_token_in_actions_keeps_the_verdict_and_exits_0(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    """``github-token: ${{ secrets.X }}`` on a fork's PR: the secret is not given, it is empty."""
    env = {**actions_env(github_server, tmp_path), "GITHUB_TOKEN": ""}
    path = write_verdict(tmp_path, regression_verdict())
    proc = comment(env, "--repo", REPO, "--verdict", str(path), "--sha", SHA)
    assert proc.returncode == 0, proc.stderr
    assert "::warning title=roofguard::no token to post with" in proc.stdout
    assert "could not post" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "artifact" / "verdict.json").exists() and not github_server.requests
    assert outputs(tmp_path / "output")["posted"] == "false"
    outside = {k: v for k, v in env.items() if k != "GITHUB_ACTIONS"}
    proc = comment(outside, "--repo", REPO, "--verdict", str(path), "--sha", SHA)
    assert proc.returncode == 2 and "GITHUB_TOKEN: not set" in proc.stderr  # a mistake there


def test_summary_never_adds_only_the_note(github_server: FakeGitHub, tmp_path: Path) -> None:
    github_server.read_only = True
    env = actions_env(github_server, tmp_path)
    path = write_verdict(tmp_path, regression_verdict())
    proc = comment(env, "--repo", REPO, "--verdict", str(path), "--sha", SHA, "--summary", "never")
    assert proc.returncode == 0, proc.stderr
    summary = (tmp_path / "summary.md").read_text()
    assert "could not post" in summary and verdict_marker(REPO, PR, "H100-SXM5") not in summary


def test_verify_head_refuses_another_commit(github_server: FakeGitHub, tmp_path: Path) -> None:
    github_server.pull_heads[PR] = "f" * 40
    env = actions_env(github_server, tmp_path)
    path = write_verdict(tmp_path, regression_verdict())
    proc = comment(env, "--repo", REPO, "--verdict", str(path), "--sha", SHA, "--verify-head")
    assert proc.returncode == 2 and "refusing to post" in proc.stderr
    assert not github_server.calls("POST")
    github_server.pull_heads[PR] = SHA
    proc = comment(env, "--repo", REPO, "--verdict", str(path), "--sha", SHA, "--verify-head")
    assert proc.returncode == 0 and len(github_server.pr_comments(PR)) == 1


def test_check_post_without_a_pr_names_what_it_posted(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    """A nightly's ``check --post`` posts the check run alone: it printed "posted: None"."""
    env = actions_env(github_server, tmp_path)
    report = ROOT / "service" / "demo" / "data" / "pr-1234.csv"
    args = [str(report), "--device", "H100-SXM5", "--repo", REPO, "--commit", SHA, "--post"]
    args += ["--db", f"sqlite:///{tmp_path / 'history.db'}", "--output", str(tmp_path / "v.md")]
    cmd = [sys.executable, "-m", "service", "check", *args]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"posted: check-run on commit {SHA[:12]}" in proc.stderr
    assert [c["head_sha"] for c in github_server.check_runs] == [SHA]
    assert not github_server.comments


def test_bad_verdict_names_the_file_and_field(tmp_path: Path) -> None:
    from service.cli import run

    bad = tmp_path / "verdict.json"
    bad.write_text('{"conclusion": "pass", "kernels": [{"key": "k", "name": "k"}]}')
    assert run(["comment", "--repo", REPO, "--verdict", str(bad), "--dry-run"]) == 2
    bad.write_text('{"conclusion": "maybe"}')
    with pytest.raises(Exception, match=r"verdict.json: field conclusion"):
        from service.cli.comment_cmd import load_verdict

        load_verdict(bad)


def test_dry_run_prints_and_posts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import run

    path = write_verdict(tmp_path, regression_verdict())
    assert run(["comment", "--repo", REPO, "--verdict", str(path), "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith(verdict_marker(REPO, PR, "H100-SXM5"))


def test_the_verdict_of_20000_kernels_check_wrote_is_posted(tmp_path: Path) -> None:
    """The post step refused what the check step of the Action wrote for 20,000 kernels
    with CUTLASS-length names (51-62 MB of JSON; the limit was 50 MiB)."""
    from rules.verdict import KernelStatus
    from service.cli import run
    from service.cli.verdict_output import verdict_text

    head = ", ".join(f"cutlass::arch::Sm90_{i}" for i in range(14))
    kernels = [
        make_kernel(
            f"void k{i}<{head}>(Params const&)",
            status=KernelStatus.REGRESSED if i % 3 == 0 else KernelStatus.UNCHANGED,
            history=tuple(80.0 + j / 10 for j in range(30)),
        )
        for i in range(20_000)
    ]
    findings = [make_finding(k) for k in kernels if k.status == KernelStatus.REGRESSED]
    verdict = make_verdict(kernels, findings)
    path = tmp_path / "verdict.json"
    path.write_text(verdict_text(verdict, "", "json"))
    assert path.stat().st_size > 50 * 1024 * 1024
    assert run(["comment", "--repo", REPO, "--verdict", str(path), "--dry-run"]) == 0


def test_missing_token_is_one_clear_error(tmp_path: Path) -> None:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "ROOFGUARD_", "GH_"))
    }
    env["PYTHONPATH"] = str(ROOT)
    path = write_verdict(tmp_path, regression_verdict())
    proc = comment(env, "--repo", REPO, "--verdict", str(path))
    assert proc.returncode == 2 and "GITHUB_TOKEN: not set" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_annotations_are_escaped_and_capped() -> None:
    kernels = [make_kernel(f"gemm<float, {i}>::run\n%x") for i in range(12)]
    verdict = make_verdict(kernels, [make_finding(k, message="drop: 10%\nsee") for k in kernels])
    lines = annotation_lines(verdict, file="reports/h100,run.csv")
    assert len(lines) == 11 and lines[-1].startswith("::notice") and "2 more failing" in lines[-1]
    assert lines[0] == (
        "::error file=reports/h100%2Crun.csv,title=roofguard roof-drop%3A "
        "gemm<float%2C 0>%3A%3Arun %25x::drop: 10%25%0Asee"
    )
    out = io.StringIO()
    assert emit_annotations(verdict, out, {}) == 0 and out.getvalue() == ""
    assert emit_annotations(verdict, out, {"GITHUB_ACTIONS": "true"}) == 11


def test_step_summary_respects_1_mib(tmp_path: Path) -> None:
    env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")}
    (tmp_path / "s.md").write_text("x" * (SUMMARY_LIMIT_BYTES - 1000))
    assert append_step_summary("line é\n" * 10_000, env)
    text = (tmp_path / "s.md").read_bytes()
    assert len(text) <= SUMMARY_LIMIT_BYTES and text.decode().endswith(
        "verdict artifact has everything.\n"
    )
    assert not append_step_summary("x", {})


def test_multiline_outputs_use_a_delimiter(tmp_path: Path) -> None:
    env = {"GITHUB_OUTPUT": str(tmp_path / "out")}
    set_outputs({"one": "a", "two": "b\nc"}, env)
    lines = (tmp_path / "out").read_text().splitlines()
    assert lines[0] == "one=a" and lines[1].startswith("two<<ghadelimiter_")
    assert lines[2:4] == ["b", "c"] and lines[4] == lines[1].split("<<")[1]


def test_post_verdict_from_env_in_process(github_server: FakeGitHub, tmp_path: Path) -> None:
    from github_server import FakeClock

    from service.github.publish import PostOptions, PostTarget, post_verdict_from_env

    env = actions_env(github_server, tmp_path)
    (tmp_path / "summary.md").write_text("check wrote this\n")
    github_server.read_only = True
    out = io.StringIO()
    result = post_verdict_from_env(
        regression_verdict(),
        PostTarget(REPO, PR, SHA),
        PostOptions(summary="never", clock=FakeClock()),
        env=env,
        out=out,
    )
    summary = (tmp_path / "summary.md").read_text()
    assert not result.posted and summary.startswith(
        "check wrote this\n> ⚠️ roofguard could not post"
    )
    assert "<!-- roofguard:verdict" not in summary and out.getvalue().startswith("::warning")
    github_server.read_only = False
    result = post_verdict_from_env(
        regression_verdict(),
        PostTarget(REPO, PR, SHA),
        PostOptions(summary="always", clock=FakeClock()),
        env=env,
        out=out,
    )
    assert result.posted and "<!-- roofguard:verdict" in (tmp_path / "summary.md").read_text()


def test_posting_context_wins_over_the_verdict(github_server: FakeGitHub, tmp_path: Path) -> None:
    from github_server import FakeClock

    from service.github.publish import PostOptions, PostTarget, post_verdict_from_env

    env = actions_env(
        github_server,
        tmp_path,
        GITHUB_SERVER_URL="https://github.com",
        GITHUB_REPOSITORY=REPO,
        GITHUB_RUN_ID="77",
    )
    anonymous = regression_verdict().model_copy(update={"repo": None, "pull_request": None})
    post_verdict_from_env(
        anonymous, PostTarget(REPO, PR, None), PostOptions(clock=FakeClock()), env=env
    )
    (comment,) = github_server.pr_comments(PR)
    assert comment["body"].count("<!-- roofguard:verdict") == 1
    assert comment["body"].startswith(verdict_marker(REPO, PR, "H100-SXM5"))
    assert "[workflow run](https://github.com/acme/kernels/actions/runs/77)" in comment["body"]


def test_a_github_failure_keeps_the_verdict_in_the_summary_and_artifact_and_exits_2(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    """Bad credentials (or GitHub down past the retries) lost the verdict: no job summary, no
    artifact, no step outputs; only a read-only token's 403 kept it."""
    body = {"message": "Bad credentials"}
    github_server.fail_next("GET", r"/issues/42/comments", 401, body=body)
    env = actions_env(github_server, tmp_path)
    path = write_verdict(tmp_path, regression_verdict())
    proc = comment(env, "--repo", REPO, "--verdict", str(path), "--sha", SHA)
    assert proc.returncode == 2 and "Bad credentials" in proc.stderr  # an error, as documented
    assert "::warning title=roofguard::" in proc.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert "could not post" in summary and verdict_marker(REPO, PR, "H100-SXM5") in summary
    assert (tmp_path / "artifact" / "verdict.json").exists()
    assert outputs(tmp_path / "output")["posted"] == "false"


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (404, {"message": "Not Found"}, f"404 Not Found (posting to PR #{PR} of {REPO})"),
        (
            422,
            {
                "message": "Validation Failed",
                "errors": [{"resource": "IssueComment", "message": "body is too long"}],
            },
            f"422 Validation Failed: body is too long (posting to PR #{PR} of {REPO})",
        ),
    ],
    ids=["not-found", "validation-failed"],
)
def test_a_github_refusal_says_what_was_refused_and_why(
    github_server: FakeGitHub, tmp_path: Path, status: int, body: dict, said: str
) -> None:
    """A bare "GitHub: 404 Not Found" named neither the PR nor the repository; a 422 lost why."""
    github_server.fail_next("GET", r"/issues/42/comments", status, body=body)
    env = actions_env(github_server, tmp_path)
    path = write_verdict(tmp_path, regression_verdict())
    proc = comment(env, "--repo", REPO, "--verdict", str(path), "--sha", SHA)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr


def test_a_comment_posted_without_its_check_warns_which_permission_is_missing(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    """Branch protection waiting on "roofguard (H100-SXM5)" waited with no word of why."""
    refused = {"message": "Resource not accessible by integration"}
    github_server.fail_next("POST", r"/check-runs$", 403, body=refused)
    github_server.fail_next("POST", r"/statuses/", 403, body=refused)
    env = actions_env(github_server, tmp_path)
    path = write_verdict(tmp_path, regression_verdict())
    proc = comment(env, "--repo", REPO, "--verdict", str(path), "--sha", SHA)
    assert proc.returncode == 0, proc.stderr
    assert "::warning title=roofguard::comment posted, but" in proc.stdout
    assert outputs(tmp_path / "output")["posted"] == "true"


def test_unpack_of_an_artifact_for_another_commit_leaves_nothing_and_names_the_field(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    """The reports stayed in --output after the refusal, and the error named --sha, a flag
    ``artifact unpack`` does not have."""
    reports = tmp_path / "src"
    reports.mkdir()
    (reports / "run1.csv").write_text("kernel,duration\ngemm,1\n")
    pack([reports / "run1.csv"], tmp_path / "artifact", pr=PR, sha=SHA, device="H100-SXM5")
    github_server.pull_heads[PR] = "5" * 40  # the PR moved on: the artifact is not its head's
    payload = {"workflow_run": {"event": "pull_request", "head_sha": SHA, "pull_requests": []}}
    (tmp_path / "event.json").write_text(json.dumps(payload))
    env = actions_env(github_server, tmp_path, GITHUB_EVENT_PATH=str(tmp_path / "event.json"))
    cmd = [sys.executable, "-m", "service", "artifact", "unpack", str(tmp_path / "artifact")]
    cmd += ["--output", str(tmp_path / "out"), "--repo", REPO]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "roofguard: error: roofguard-artifact.json: field pr: PR #42 of acme/kernels is at "
        "555555555555, not at the artifact's commit 0123456789ab: its reports were made for "
        "another commit"
    )
    assert not list((tmp_path / "out").iterdir())
