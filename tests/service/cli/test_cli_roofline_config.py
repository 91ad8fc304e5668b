"""``roofguard roofline`` and ``roofguard devices`` read roofguard.toml as ``check`` does.

Both used the built-in catalog alone: a ``[devices.RTX-2060]`` the error message itself told
people to add was "unknown device", a ``[devices.H100-SXM5]`` DRAM figure was not the one
``check`` judged with, and ``devices`` did not list the config's cards. And ``--peak-flops`` /
``--bandwidth`` given with ``--device`` printed the card's name over the flags' figures, as if
they were its datasheet's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import run

CONFIG = """
[devices.RTX-2060]
peak_flop_per_s = { fp32 = 6.45e12 }
bandwidth_byte_per_s = { dram = 336e9 }

[devices.H100-SXM5]
bandwidth_byte_per_s = { dram = 3.0e12 }
"""
WORK = ["--flops", "1e9", "--bytes", "1e8"]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding a roofguard.toml, found as ``check`` finds it."""
    (tmp_path / "roofguard.toml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_device_the_config_adds_is_placed_on_its_config_figures(config_dir, capsys) -> None:
    code, out, err = _run(["roofline", "--device", "RTX-2060", *WORK, "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["device"] == "RTX-2060" and result["roof"] == "RTX-2060 (config)"
    assert result["peak_flop_per_s"] == 6.45e12 and result["bandwidth_byte_per_s"] == 336e9
    assert result["peak_source"] == result["bandwidth_source"] == "config"


def test_a_config_override_is_the_figure_check_uses_and_says_so(config_dir, capsys) -> None:
    code, out, err = _run(["roofline", "--device", "H100-SXM5", *WORK, "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["bandwidth_byte_per_s"] == 3.0e12 and result["bandwidth_source"] == "config"
    assert result["peak_source"] == "datasheet"
    assert result["roof"] == "H100-SXM5 (datasheet, dram from config)"
    code, out, _ = _run(["roofline", "--device", "H100-SXM5", *WORK], capsys)
    assert "H100-SXM5 (datasheet, dram from config)" in out
    assert "3000 GB/s (config)" in out and "66.9 TFLOP/s (datasheet)" in out


def test_config_option_names_the_file(tmp_path, capsys) -> None:
    toml = tmp_path / "team.toml"
    toml.write_text(CONFIG, encoding="utf-8")
    args = ["roofline", "--device", "RTX-2060", *WORK, "--json", "--config", str(toml)]
    code, out, err = _run(args, capsys)
    assert code == 0, err
    assert json.loads(out)["bandwidth_byte_per_s"] == 336e9
    code, _, err = _run(["devices", "--config", str(tmp_path / "none.toml")], capsys)
    assert code == 2 and "none.toml" in err and "does not exist" in err


def test_the_config_borderline_band_is_the_one_check_uses(tmp_path, capsys) -> None:
    toml = tmp_path / "roofguard.toml"
    toml.write_text("[rules]\nborderline_band = 0.5\n", encoding="utf-8")
    # H100 fp32 ridge 66.9e12 / 3.35e12 = 20: intensity 26 is borderline within 1.5x, not 1.15x
    args = ["roofline", "--device", "H100-SXM5", "--flops", "26e9", "--bytes", "1e9", "--json"]
    assert _run(args, capsys)[0] == 0
    code, out, _ = _run([*args, "--config", str(toml)], capsys)
    assert code == 0 and json.loads(out)["borderline"] is True


def test_devices_lists_the_config_devices_marked(config_dir, capsys) -> None:
    code, out, err = _run(["devices"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    added = next(line for line in lines if line.startswith("RTX-2060"))
    h100 = next(line for line in lines if line.startswith("H100-SXM5"))
    assert "0.336" in added and "6.45" in added and added.endswith("(config)")
    assert h100.split()[1] == "3" and h100.endswith("(datasheet, dram from config)")
    assert "roofguard.toml" in lines[-1]
    code, out, _ = _run(["devices", "--json"], capsys)
    devices = {d["id"]: d for d in json.loads(out)}
    assert devices["RTX-2060"]["from_config"] == ["fp32", "dram"]
    assert devices["H100-SXM5"]["from_config"] == ["dram"]
    assert devices["H100-SXM5"]["bandwidth_byte_per_s"]["dram"] == 3.0e12
    assert devices["T4"]["from_config"] == []


def test_command_line_figures_are_not_labelled_as_the_device(capsys) -> None:
    args = ["roofline", "--device", "H100-SXM5", "--peak-flops", "4e12", "--bandwidth", "25.6e9"]
    code, out, err = _run([*args, *WORK, "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["device"] == "H100-SXM5"  # the key keeps its meaning: the card named
    assert result["peak_source"] == result["bandwidth_source"] == "command line"
    label = "H100-SXM5 (fp32 peak and dram bandwidth from the command line)"
    assert result["roof"] == label
    code, out, _ = _run([*args, *WORK], capsys)
    assert label in out and "4 TFLOP/s (command line)" in out and "25.6 GB/s (command line)" in out


def test_one_flag_replaces_one_figure_and_says_which(capsys) -> None:
    args = ["roofline", "--device", "T4", "--bandwidth", "300e9", *WORK, "--json"]
    code, out, err = _run(args, capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["roof"] == "T4 (datasheet, dram bandwidth from the command line)"
    assert result["peak_source"] == "datasheet" and result["bandwidth_source"] == "command line"


def test_custom_hardware_says_its_figures_are_the_command_line(capsys) -> None:
    args = ["roofline", "--peak-flops", "4e12", "--bandwidth", "25.6e9", *WORK, "--json"]
    code, out, _ = _run(args, capsys)
    result = json.loads(out)
    assert code == 0 and result["device"] == "custom"
    assert result["roof"] == "custom (fp32 peak and dram bandwidth from the command line)"


def test_devices_help_and_header_say_what_they_print(capsys) -> None:
    code, out, _ = _run(["devices", "--help"], capsys)
    assert code == 0 and "one JSON object" not in out and "JSON list" in out
    code, out, _ = _run(["devices"], capsys)
    header = out.splitlines()[0]
    assert "HBM" not in header and "DRAM TB/s" in header
