"""``roofguard check`` of a stored run again, after ``roofguard.toml`` changed: judged again.

A CI job re-run on the same reports kept the first verdict whatever the config said: with a
rule selected again, a PR twice as slow still passed (report-only probe of the check flow).
"""

from __future__ import annotations

from test_check_cli import check, history, nightly  # noqa: F401  (the fixture)

from service.pipeline.check import CONFIG_CHANGED


def _config(tmp_path, text: str):
    path = tmp_path / "roofguard.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_run_checked_again_under_another_config_is_judged_again(history):  # noqa: F811
    tmp_path, db = history
    slow = nightly(tmp_path / "pr.json", 9, scale=2.0)
    regime_only = _config(tmp_path, '[rules]\nselect = ["regime"]\n')
    code, first = check(tmp_path, db, slow, "--config", str(regime_only))
    assert code == 0 and first["conclusion"] == "pass"
    code, again = check(tmp_path, db, slow)  # every rule again: the slow gemv fails
    assert code == 1 and again["conclusion"] == "fail"
    assert again["run_id"] == first["run_id"] and CONFIG_CHANGED in again["notes"]
    code, third = check(tmp_path, db, slow)  # the same config: the stored verdict, no note
    assert code == 1 and third["findings"] == again["findings"]
    assert CONFIG_CHANGED not in third["notes"]


def test_the_same_config_keeps_the_stored_verdict(history):  # noqa: F811
    tmp_path, db = history
    slow = nightly(tmp_path / "pr.json", 9, scale=2.0)
    code, first = check(tmp_path, db, slow)
    code_again, again = check(tmp_path, db, slow)
    assert (code, code_again) == (1, 1) and again["findings"] == first["findings"]
    assert CONFIG_CHANGED not in again["notes"]
