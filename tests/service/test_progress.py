"""Long steps: a spinner or a bar on a terminal, nothing in CI logs and pipes (issue 29.5)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import service.progress as progress
from service.cli.demo_cmd import DEMO_REPO

DEMO_DATA = Path(__file__).parents[2] / "service" / "demo" / "data"


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


def test_inspect_draws_its_bar_unless_ci_says_it_is_a_runner() -> None:
    """``CI=false`` (a shell profile's) hid every bar; ``inspect`` read reports with none."""
    nights = [str(DEMO_DATA / f"nightly-{n:02d}.csv") for n in (1, 2, 3)]
    drawn = {
        ci: _on_a_terminal(["inspect", *nights], {**os.environ, "CI": ci})
        for ci in ("false", "0", "true")
    }
    assert b"reading reports" in drawn["false"] and b"reading reports" in drawn["0"]
    assert b"reading reports" not in drawn["true"]


def test_only_a_true_ish_ci_is_a_runner(monkeypatch) -> None:
    for value, runner in (("true", True), ("1", True), ("TRUE", True), ("false", False)):
        monkeypatch.setenv("CI", value)
        assert progress.in_ci() is runner, value
    monkeypatch.delenv("CI")
    assert progress.in_ci() is False
