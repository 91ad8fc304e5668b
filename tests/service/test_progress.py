"""Long steps: a spinner or a bar on a terminal, nothing in CI logs and pipes (issue 29.5)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys

import service.progress as progress
from service.cli.demo_cmd import DEMO_REPO


def test_a_stage_is_silent_off_a_terminal(capsys, monkeypatch):
    monkeypatch.setenv("CI", "true")
    with progress.stage("reading the reports"):
        pass
    assert capsys.readouterr() == ("", "")


def test_a_stage_draws_its_spinner_on_a_terminal(capsys, monkeypatch):
    monkeypatch.setattr(progress, "progress_enabled", lambda: True)
    ran = []
    with progress.stage("reading the reports"):
        ran.append(True)
    assert ran == [True]  # the step runs inside the spinner and the spinner closes after it


def _on_a_terminal(argv: list[str], env: dict[str, str]) -> bytes:
    """What ``python -m service ARGV`` draws on its stderr, a terminal (a pseudo-terminal)."""
    leader, follower = pty.openpty()
    proc = subprocess.run(
        [sys.executable, "-m", "service", *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env=env,
        timeout=300,
        check=False,
    )
    os.close(follower)
    drawn = b""
    while select.select([leader], [], [], 0.5)[0]:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    assert proc.returncode == 0, drawn.decode(errors="replace")
    return drawn


def test_the_digest_draws_no_bar_in_ci_even_on_a_terminal(tmp_path) -> None:
    """A CI runner that allocates a terminal (``docker run -t``) got 16 KB of bar frames."""
    db = f"sqlite:///{tmp_path / 'demo.db'}"
    env = {**os.environ, "CI": "true"}
    _on_a_terminal(["demo", "--db", db, "--format", "text"], env)
    digest = ["digest", "--repo", DEMO_REPO, "--db", db, "--output", str(tmp_path / "d.md")]
    assert b"\x1b[" not in _on_a_terminal(digest, env)
    env.pop("CI")
    assert b"digest" in _on_a_terminal(digest, env)  # the bar, where a person watches
