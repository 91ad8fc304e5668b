"""``roofguard check`` of a stored run again: against the baseline its first check chose.

A CI job re-run (or a check from a laptop) without ``--base-branch`` or ``--base-sha`` judged
the run against the configured branch's newest nights, beside the findings stored from the
first check's baseline, or judged it again and replaced them.
"""

from __future__ import annotations

from test_check_cli import check, history, nightly  # noqa: F401  (the fixture)

from service.pipeline.check import CONFIG_CHANGED


def test_a_pr_checked_against_another_branch_keeps_it_when_checked_again(history):  # noqa: F811
    tmp_path, db = history
    slow = nightly(tmp_path / "pr.json", 9, scale=15.0)
    code, first = check(tmp_path, db, slow, "--base-branch", "release/2.0")
    assert code == 0 and first["baseline"]["runs"] == 0
    code, again = check(tmp_path, db, slow)
    assert code == 0 and again == first
    assert CONFIG_CHANGED not in again["notes"]
    code, on_main = check(tmp_path, db, slow, "--base-branch", "main")  # asked: its own answer
    assert code == 1 and on_main["baseline"]["runs"] == 8
    assert any("as asked, and not stored" in note for note in on_main["notes"])
    assert check(tmp_path, db, slow) == (0, first)  # stored: still the first check's


def test_a_pr_cut_at_its_merge_base_keeps_it_when_checked_again(history):  # noqa: F811
    tmp_path, db = history
    pr = nightly(tmp_path / "pr.json", 9)
    code, first = check(tmp_path, db, pr, "--base-sha", "c0003")
    assert code == 0 and first["baseline"]["commits"] == ["c0000", "c0003"]
    code, again = check(tmp_path, db, pr)
    assert again["baseline"]["commits"] == ["c0000", "c0003"] and again == first
