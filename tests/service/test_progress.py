"""Long steps: a spinner or a bar on a terminal, nothing in CI logs and pipes (issue 29.5)."""

from __future__ import annotations

import service.progress as progress


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
