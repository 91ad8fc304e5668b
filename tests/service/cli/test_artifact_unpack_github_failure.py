"""``roofguard artifact unpack`` when GitHub cannot say whether the PR's head is the commit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from github_server import FakeGitHub, github_server_fixture  # noqa: F401

from service.github.artifact import pack

ROOT = Path(__file__).resolve().parents[3]
REPO, PR = "acme/kernels", 5
SHA = "c" * 40


def unpack_with(api_url: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    """Pack one report for PR #5 at SHA, then unpack it as the workflow_run job would."""
    reports = tmp / "src"
    reports.mkdir()
    (reports / "rep1.csv").write_text("kernel,duration\ngemm,1\n")
    pack([reports / "rep1.csv"], tmp / "pk", pr=PR, sha=SHA, device="H100-SXM5")
    event = {"workflow_run": {"event": "pull_request", "head_sha": SHA, "pull_requests": []}}
    (tmp / "event.json").write_text(json.dumps(event))
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
        "GITHUB_ACTIONS": "true",
        "GITHUB_TOKEN": "ghs_expired",
        "GITHUB_API_URL": api_url,
        "GITHUB_OUTPUT": str(tmp / "output"),
    }
    cmd = [sys.executable, "-m", "service", "artifact", "unpack", str(tmp / "pk")]
    cmd += ["--output", str(tmp / "out"), "--repo", REPO, "--event", str(tmp / "event.json")]
    return subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)


def assert_nothing_left(proc: subprocess.CompletedProcess[str], tmp: Path) -> str:
    """Exit 2, no report in --output, no step outputs; the error line, returned."""
    assert proc.returncode == 2, proc.stderr
    assert not list((tmp / "out").iterdir())  # a later step must not judge unverified reports
    assert not (tmp / "output").exists()
    error = proc.stderr.strip().splitlines()[-1]
    assert error.startswith("roofguard: error: GitHub: ") and "unexpected" not in error, error
    assert f"PR #{PR} of {REPO}" in error, error
    return error


def test_bad_credentials_leave_no_report_and_name_the_request(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    """rep1.csv stayed in --output and the error read "unexpected AuthenticationFailed: 401
    Bad credentials", naming no request."""
    github_server.fail_next("GET", rf"/pulls/{PR}$", 401, body={"message": "Bad credentials"})
    proc = unpack_with(github_server.url, tmp_path)
    error = assert_nothing_left(proc, tmp_path)
    assert "401 Bad credentials" in error and f"commit {SHA[:12]}" in error, error


@pytest.mark.slow
def test_github_unreachable_leaves_no_report_and_names_the_request(tmp_path: Path) -> None:
    """Connection refused on every attempt the retries make (about 30 s of backoff)."""
    proc = unpack_with("http://127.0.0.1:1", tmp_path)
    error = assert_nothing_left(proc, tmp_path)
    assert "failed after 5 attempt(s)" in error, error
