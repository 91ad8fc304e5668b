"""``roofguard check`` under a gate that needs more runs than it has: not judged, not passed.

``[rules.options.roof-drop] min_runs = 10`` over 8 nightly runs left every kernel "new: too
few runs to judge" and the verdict passed a kernel twice as slow: ``PASS · 0 regressions``,
its baseline needing 3 runs (the least of the rules'), a green check.
"""

from __future__ import annotations

from test_check_cli import check, history, nightly  # noqa: F401  (the fixture)

from service.cli import run


def _config(tmp_path, text: str) -> str:
    path = tmp_path / "roofguard.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_gate_short_of_its_rules_min_runs_judges_nothing(history, capsys):  # noqa: F811
    tmp_path, db = history
    config = _config(tmp_path, "[rules.options.roof-drop]\nmin_runs = 10\n")
    slow = nightly(tmp_path / "pr.json", 9, scale=2.0)
    code, verdict = check(tmp_path, db, slow, "--config", config)
    assert code == 0 and verdict["findings"] == []
    assert {k["status"] for k in verdict["kernels"]} == {"new"}
    assert (verdict["baseline"]["runs"], verdict["baseline"]["min_runs"]) == (8, 10)
    assert "verdict (not judged) written to" in capsys.readouterr().err


def test_its_comment_says_not_judged_not_no_regressions(history):  # noqa: F811
    tmp_path, db = history
    config = _config(tmp_path, "[rules.options.roof-drop]\nmin_runs = 10\n")
    slow, out = nightly(tmp_path / "pr.json", 9, scale=2.0), tmp_path / "comment.md"
    argv = ["check", str(slow), "--repo", "acme/kernels", "--commit", "f00d", "--pr", "7"]
    argv += ["--db", db, "--config", config, "--format", "markdown", "--output", str(out)]
    assert run(argv) == 0
    markdown = out.read_text(encoding="utf-8")
    assert "baseline too short: 8 of the 10 runs the gate needs" in markdown
    assert "**NOT JUDGED**" in markdown and "no regressions" not in markdown


def test_a_gate_window_of_min_runs_judges(history):  # noqa: F811
    """The least window accepted (``gate_window = min_runs``) holds the runs the gate needs."""
    tmp_path, db = history
    config = _config(tmp_path, "[baseline]\ngate_window = 3\n")
    again = nightly(tmp_path / "again.json", 9, scale=1.99)
    slow = nightly(tmp_path / "pr.json", 9, scale=2.0)
    code, verdict = check(tmp_path, db, slow, "--config", config, "--rerun", str(again))
    assert code == 1 and verdict["conclusion"] == "fail"
