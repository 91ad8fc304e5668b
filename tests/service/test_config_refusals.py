"""``roofguard check`` refuses a config that would judge in silence otherwise: one line, exit 2.

Each of these ran on before, with a rule or a setting quietly off: a misspelt ``[tool.*]``
table, a value of the wrong type in a group or a device, an option that finds nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from factories import make_kernel, make_run

from service.cli import run


def refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str) -> str:
    """The one line ``roofguard check --config NAME`` gives for a config file holding ``text``."""
    config = tmp_path / name
    config.write_text(text, encoding="utf-8")
    report = tmp_path / "run.json"
    report.write_text(make_run(kernels=[make_kernel("gemv", time_s=1e-3)]).model_dump_json())
    db = f"sqlite:///{tmp_path / 'h.db'}"
    argv = ["check", str(report), "--repo", "acme/kernels", "--commit", "c1", "--db", db]
    assert run([*argv, "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{config}: " in err, err
    return err


@pytest.mark.parametrize("runs", [0, -3])
def test_missing_kernel_looks_back_one_run_at_least(tmp_path, capsys, runs: int) -> None:
    """``recent_runs = 0`` was accepted: no kernel of the baseline could ever be missing."""
    text = f"[rules.options.missing-kernel]\nrecent_runs = {runs}\n"
    err = refusal(tmp_path, capsys, "roofguard.toml", text)
    assert "rules.options.missing-kernel.recent_runs: " in err and "equal to 1" in err


def test_a_pyproject_named_as_the_config_without_the_tool_table_is_an_error(
    tmp_path, capsys
) -> None:
    """A misspelt ``[tool.rofguard]`` ran on defaults: the file's groups and policy unread."""
    text = '[project]\nname = "x"\n[tool.rofguard]\nfail_on = "warn"\n'
    err = refusal(tmp_path, capsys, "pyproject.toml", text)
    assert "tool.roofguard: no such table in the file; [tool.rofguard] is: a misspelling" in err


def test_a_pyproject_named_as_the_config_with_no_tool_table_at_all_is_an_error(
    tmp_path, capsys
) -> None:
    err = refusal(tmp_path, capsys, "pyproject.toml", '[project]\nname = "x"\n')
    assert err.rstrip().endswith("tool.roofguard: no such table in the file")


@pytest.mark.parametrize(
    ("name", "text", "written"),
    [
        ("roofguard.toml", 'fail_on = "warning"\n', "fail_on: "),
        ("roofguard.toml", "borderline_band = false\n", "borderline_band: must be a number"),
        ("roofguard.toml", '[[groups]]\nname = "d"\nregime = "io"\n', "groups[0].regime: "),
        ("roofguard.toml", "[options.roof-dorp]\nz_threshold = 3\n", "options.roof-dorp: unknown"),
        (
            "roofguard.toml",
            '[options.roof-drop]\nz_threshold = "3"\n',
            "options.roof-drop.z_threshold: must be a number",
        ),
        (
            "pyproject.toml",
            '[tool.roofguard]\ngroups = [{ name = "d", regime = "io" }]\n',
            "tool.roofguard.groups[0].regime: ",
        ),
    ],
)
def test_a_rules_field_written_at_the_top_level_is_named_as_written(
    tmp_path, capsys, name: str, text: str, written: str
) -> None:
    """They were named inside ``rules``, where the file has no such key (``rules.fail_on``)."""
    err = refusal(tmp_path, capsys, name, text)
    assert f"{tmp_path / name}: {written}" in err, err
    assert "rules." not in err, err


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (  # was a target of 1.0%
            '[[rules.groups]]\nname = "g"\ntarget_percent = true\n',
            "rules.groups[0].target_percent: must be a number, not true",
        ),
        (  # was read as 80
            '[[rules.groups]]\nname = "g"\n[[rules.groups]]\nname = "h"\ntarget_percent = "80"\n',
            'rules.groups[1].target_percent: must be a number, not "80"',
        ),
        (
            '[[groups]]\nname = "g"\ntarget_percent = "80"\n',
            'groups[0].target_percent: must be a number, not "80"',
        ),
        (  # was 1 SM
            "[devices.H100-SXM5]\nsm_count = true\n",
            "devices.H100-SXM5.sm_count: must be a whole number, not true",
        ),
        (
            '[devices.H100-SXM5]\nbandwidth_byte_per_s = { dram = "3e12" }\n',
            'devices.H100-SXM5.bandwidth_byte_per_s.dram: must be a number, not "3e12"',
        ),
        (
            '[devices.my-gpu]\npeak_flop_per_s = { fp32 = false }\nmemory_gb = "80"\n',
            "devices.my-gpu.peak_flop_per_s.fp32: must be a number, not false",
        ),
        ('[devices.my-gpu]\nmemory_gb = "80"\n', "devices.my-gpu.memory_gb: must be a number"),
    ],
)
def test_a_number_of_a_group_or_a_device_written_as_another_type_is_an_error(
    tmp_path, capsys, text: str, written: str
) -> None:
    """``[[rules.groups]]`` and ``[devices.*]`` were left out of the check of the other keys."""
    err = refusal(tmp_path, capsys, "roofguard.toml", text)
    assert f"{tmp_path / 'roofguard.toml'}: {written}" in err, err


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (  # every kernel was "new: too few runs to judge"; the verdict passed a 1.5x slowdown
            "[baseline]\ngate_window = 2\n",
            "baseline.gate_window: 2 is below baseline.min_runs = 3: roof-drop would never",
        ),
        ("[baseline]\nwindow = 2\n", "baseline.window: 2 is below baseline.min_runs = 3"),
        ("[baseline]\nmin_runs = 61\n", "baseline.min_runs: 61 is above baseline.gate_window = 60"),
        (
            "[baseline]\ngate_window = 8\n[rules.options.time-regression]\nmin_runs = 9\n",
            "rules.options.time-regression.min_runs: 9 is above baseline.gate_window = 8",
        ),
        (
            "[options.regime-flip]\nmin_runs = 15\n",
            "options.regime-flip.min_runs: 15 is above baseline.window = 14",
        ),
    ],
)
def test_a_window_shorter_than_the_runs_a_rule_needs_is_an_error(
    tmp_path, capsys, text: str, written: str
) -> None:
    err = refusal(tmp_path, capsys, "roofguard.toml", text)
    assert f"{tmp_path / 'roofguard.toml'}: {written}" in err, err
