"""``roofguard rules [ID]``: the catalogue and one rule's reference."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from service.cli import run


def test_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["rules"]) == 0
    out = capsys.readouterr().out
    for rule_id in ("roof-drop", "regime-flip", "env-mismatch", "intensity-shift"):
        assert rule_id in out
    assert "preview" in out and "stable" in out


def test_one_rule_renders_docstring_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["rules", "roof-drop"]) == 0
    out = capsys.readouterr().out
    assert out.index("**Anti-pattern**") < out.index("**Best practice**")
    assert out.index("**Best practice**") < out.index("**Configuration**")
    assert "[rules.options.roof-drop]" in out and "z_threshold = 4.5" in out  # the gate's floor


def test_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["rules", "regime-flip", "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert entry["id"] == "regime-flip" and entry["severity"] == "fail"
    assert {"name": "min_runs", "type": "int", "default": "3"} in entry["options"]


def test_unknown_rule_is_exit_2_as_a_real_process() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "service", "rules", "roof-dorp"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "unknown rule 'roof-dorp'" in done.stderr and "roof-drop" in done.stderr
