"""service.config: roofguard.toml / [tool.roofguard] loading, with errors naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from rules.verdict import Severity
from service.config import RoofguardConfig, load_config
from service.errors import ConfigError
from service.settings import Settings

FULL = """
device = "H100-SXM5"
roof = "measured"
base_branch = "trunk"

[baseline]
window = 30
min_runs = 5

[devices.H100-SXM5]
bandwidth_byte_per_s = { dram = 3.0e12 }

[devices.my-gpu]
peak_flop_per_s = { fp32 = 1.0e13 }
bandwidth_byte_per_s = { dram = 1.0e12 }

[keys]
strip_template_args = true

[[work_models]]
pattern = "BM_gemm*"
flops = { tensor_bf16 = "2*M*N*K" }

[rules]
select = ["roofline", "regime-flip"]
aliases = { "gemv_v1" = "gemv_v2" }
ignore_kernels = ["*warmup*"]
fail_on = "warn"

[[rules.ignore]]
rule = "intensity-shift"
kernels = "*gemv*"

[rules.options.roof-drop]
z_threshold = 5.0

[rules.options.regime-flip]
to_compute_severity = "info"

[[rules.groups]]
name = "decode"
nvtx = "decode*"
regime = "memory-bound"
target_percent = 80
owners = ["@inference"]
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(tmp_path: Path, name: str, text: str) -> ConfigError:
    write(tmp_path, name, text)
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path)
    return caught.value


def test_no_file_gives_defaults(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path)
    assert config.roof == "datasheet" and config.base_branch == "main"
    assert config.baseline.window == 14 and config.baseline.min_runs == 3
    assert config.rules.fail_on == "fail"
    assert config.rules.options["roof-drop"] == {"min_runs": 3}


def test_full_roofguard_toml(tmp_path: Path) -> None:
    write(tmp_path, "roofguard.toml", FULL)
    config = load_config(cwd=tmp_path)
    assert isinstance(config, RoofguardConfig)
    assert config.device == "H100-SXM5" and config.roof == "measured"
    assert config.base_branch == "trunk" and config.baseline.window == 30
    assert config.devices["my-gpu"]["peak_flop_per_s"] == {"fp32": 1e13}
    assert config.keys.strip_template_args is True
    assert config.work_models[0].pattern == "BM_gemm*"
    rules = config.rules
    assert rules.select == ("roofline", "regime-flip") and rules.fail_on == "warn"
    assert rules.aliases == {"gemv_v1": "gemv_v2"}
    assert rules.ignore[0].kernels == "*gemv*"
    assert rules.options["roof-drop"] == {"z_threshold": 5.0, "min_runs": 5}
    assert rules.options["regime-flip"]["to_compute_severity"] == Severity.INFO.value
    (group,) = rules.groups
    assert (group.name, group.nvtx, group.regime, group.target_percent) == (
        "decode",
        "decode*",
        "memory-bound",
        80.0,
    )


def test_pyproject_tool_table_with_top_level_rules_fields(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        """
[project]
name = "x"

[tool.roofguard]
device = "A100-SXM4-80GB"
fail_on = "never"

[[tool.roofguard.groups]]
name = "prefill"
pattern = "*gemm*"
regime = "compute-bound"
""",
    )
    config = load_config(cwd=tmp_path)
    assert config.device == "A100-SXM4-80GB"
    assert config.rules.fail_on == "never"
    assert config.rules.groups[0].name == "prefill"


def test_pyproject_without_tool_table_is_ignored(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n')
    assert load_config(cwd=tmp_path).device is None


def test_explicit_path_wins(tmp_path: Path) -> None:
    write(tmp_path, "roofguard.toml", 'device = "T4"\n')
    other = write(tmp_path, "ci.toml", 'device = "A10"\n')
    assert load_config(other, cwd=tmp_path).device == "A10"
    assert load_config(Path("ci.toml"), cwd=tmp_path).device == "A10"


@pytest.mark.parametrize(
    ("text", "key", "reason"),
    [
        ('devise = "H100"\n', "devise", "unknown key"),
        ('roof = "sparse"\n', "roof", "'datasheet', 'report' or 'measured'"),
        ('[baseline]\nwindow = "many"\n', "baseline.window", 'whole number, not "many"'),
        # pydantic's lax mode took these for 14, 1 and true: the gate changed in silence
        ('[baseline]\nwindow = "14"\n', "baseline.window", 'must be a whole number, not "14"'),
        ("[baseline]\nwindow = 14.0\n", "baseline.window", "whole number, not 14.0"),
        ("[rules.gate]\nconfirm_runs = true\n", "rules.gate.confirm_runs", "not true"),
        ("[baseline]\ncross_device = 1\n", "baseline.cross_device", "true or false, not 1"),
        ("[keys]\nstrip_template_args = 1\n", "keys.strip_template_args", "true or false"),
        (
            '[rules.options.roof-drop]\ncheck_groups = "yes"\n',
            "rules.options.roof-drop.check_groups",
            'must be true or false, not "yes"',
        ),
        ("[baseline]\nwindow = 0\n", "baseline.window", "greater than or equal to 1"),
        ('[rules]\nfail_on = "sometimes"\n', "rules.fail_on", "'fail', 'warn' or 'never'"),
        ('[[rules.groups]]\npattern = "*"\n', "rules.groups[0].name", "required key"),
        (
            '[[rules.groups]]\nname = "d"\nregime = "io-bound"\n',
            "rules.groups[0].regime",
            "memory-bound",
        ),
        (  # a typo was accepted: the group's MFU then read against the run's own precision
            '[[rules.groups]]\nname = "d"\nprecision = "bf16"\n',
            "rules.groups[0].precision",
            "unknown precision 'bf16' (known: fp64, fp32",
        ),
        (
            '[rules.options.roof-drop]\nz_threshold = "high"\n',
            "rules.options.roof-drop.z_threshold",
            'must be a number, not "high"',
        ),
        (  # taken for 3.5 by pydantic's lax mode
            '[rules.options.roof-drop]\nz_threshold = "3.5"\n',
            "rules.options.roof-drop.z_threshold",
            'must be a number, not "3.5"',
        ),
        ("[rules]\nborderline_band = false\n", "rules.borderline_band", "a number, not false"),
        ('[rules.gate]\nnightly_floor = "0.1"\n', "rules.gate.nightly_floor", 'not "0.1"'),
        (
            "[rules.options.roof-drop]\nalpha = 0.01\n",
            "rules.options.roof-drop.alpha",
            "unknown key",
        ),
        ("[rules.options.roof-dorp]\nz_threshold = 3\n", "rules.options.roof-dorp", "unknown rule"),
        ('[rules]\nselect = ["rooflin"]\n', "rules.select[0]", "unknown rule or group"),
        ('[[rules.ignore]]\nrule = "nope"\n', "rules.ignore[0].rule", "unknown rule"),
        (
            "[devices.H100-SXM5]\nbandwidth_byte_per_s = { hbm = 3e12 }\n",
            "devices.H100-SXM5.bandwidth_byte_per_s.hbm",
            "unknown tier",
        ),
        (
            '[[work_models]]\npattern = "x"\nflops = { fp32 = "__import__(\'os\')" }\n',
            "work_models[0].flops",
            "",
        ),
        ('fail_on = "warn"\n[rules]\nfail_on = "fail"\n', "fail_on", "both at top level"),
        ("[keys]\nstrip_templates = true\n", "keys.strip_templates", "unknown key"),
        (  # accepted: the histories of the kernels in the loop were merged
            '[rules]\naliases = { a = "b", b = "a" }\n',
            "rules",
            "renames lead back to a kernel they rename ('a' -> 'b' -> 'a')",
        ),
        ('[rules]\naliases = { a = "a" }\n', "rules", "('a' -> 'a')"),
    ],
)
def test_wrong_key_or_type_names_file_and_key(
    tmp_path: Path, text: str, key: str, reason: str
) -> None:
    error = error_of(tmp_path, "roofguard.toml", text)
    assert error.path == str(tmp_path / "roofguard.toml")
    assert error.key.startswith(key), error
    assert reason in error.reason, error
    assert str(tmp_path / "roofguard.toml") in str(error) and key in str(error)


def test_pyproject_errors_name_the_tool_table(tmp_path: Path) -> None:
    error = error_of(tmp_path, "pyproject.toml", "[tool.roofguard.baseline]\nwindow = -3\n")
    assert error.key == "tool.roofguard.baseline.window"
    assert error.path == str(tmp_path / "pyproject.toml")


def test_unreadable_and_missing_files(tmp_path: Path) -> None:
    bad = error_of(tmp_path, "roofguard.toml", "device = \n")
    assert "not valid TOML" in bad.reason
    with pytest.raises(ConfigError) as missing:
        load_config(tmp_path / "nope.toml", cwd=tmp_path)
    assert str(missing.value) == f"{tmp_path / 'nope.toml'}: config file: does not exist"


def test_settings_read_prefixed_env_and_github_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROOFGUARD_DATABASE_URL", "sqlite:///x.db")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret")
    monkeypatch.delenv("ROOFGUARD_GITHUB_TOKEN", raising=False)
    settings = Settings()
    assert settings.database_url == "sqlite:///x.db"
    assert settings.github_token is not None
    assert settings.github_token.get_secret_value() == "ghs_secret"
    assert "ghs_secret" not in repr(settings)
    monkeypatch.setenv("ROOFGUARD_GITHUB_TOKEN", "ghp_own")
    assert Settings().github_token.get_secret_value() == "ghp_own"  # type: ignore[union-attr]


def test_a_config_saved_as_utf8_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """Some editors write one; tomllib read it as a bad statement at line 1, column 1."""
    (tmp_path / "roofguard.toml").write_bytes(b'\xef\xbb\xbfdevice = "A10"\n')
    assert load_config(cwd=tmp_path).device == "A10"


def test_a_config_in_another_encoding_names_the_file(tmp_path: Path) -> None:
    """UTF-16 was an unexpected UnicodeDecodeError, without the file."""
    path = tmp_path / "roofguard.toml"
    path.write_text('device = "A10"\n', encoding="utf-16")
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path)
    assert str(path) in str(caught.value) and "not UTF-8 text" in str(caught.value)
