"""The team's configuration: ``roofguard.toml``, or ``[tool.roofguard]`` in ``pyproject.toml``.

Read once at the edge (the CLI, ``create_app``) and passed down; validated by pydantic, with
every error naming the file and the key (``pyproject.toml: tool.roofguard.rules.options.
roof-drop.z_threshold: ...``). A ``roofguard.toml``::

    device = "H100-SXM5"          # for reports that name no device (a report's own wins)
    roof = "datasheet"            # datasheet | report | measured
    base_branch = "main"
    fail_on = "fail"              # fail | warn | never (rules fields may sit at top level)

    [baseline]
    window = 14                   # base-branch runs a kernel is compared with
    gate_window = 60              # base-branch runs the regression gate's level reads
    min_runs = 3                  # fewer: no regression verdict

    [devices.H100-SXM5]           # override or add devices (dense, SI; see config.devices)
    bandwidth_byte_per_s = { dram = 3.0e12 }

    [keys]                        # how kernel names become identity keys
    strip_template_args = true

    [[work_models]]               # declared work of plain microbenchmarks
    pattern = "BM_gemm*"
    flops = { tensor_bf16 = "2*M*N*K" }

    [rules]
    select = ["all"]
    aliases = { "old_kernel" = "new_kernel" }
    ignore_kernels = ["*warmup*"]
    [[rules.ignore]]
    rule = "intensity-shift"
    kernels = "*gemv*"
    [rules.options.roof-drop]
    z_threshold = 4.0
    [[rules.groups]]
    name = "decode"
    nvtx = "decode*"
    regime = "memory-bound"
    target_percent = 80
    owners = ["@inference-team"]
"""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from collectors import KeyOptions, WorkModel
from rules import Catalog, DeviceSpec, RuleError, RulesConfig, all_rules, builtin_catalog
from service.config.devices import misnamed, odd_figure
from service.config.scalars import wrong_scalar
from service.config.windows import WINDOW_READ, refuse_short_windows
from service.errors import ConfigError

CONFIG_FILE = "roofguard.toml"
PYPROJECT = "pyproject.toml"
#: Rules that compare with the baseline and take ``min_runs`` from ``[baseline]``.
BASELINE_RULES = tuple(WINDOW_READ)


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BaselineOptions(_Strict):
    """Which history a run is judged against.

    Attributes:
        window: Most recent base-branch runs (nightly and merged commits) in the baseline.
        gate_window: Most recent base-branch runs the gate (roof-drop, time-regression) reads.
            Its level is the current segment's, so an older change does not pull it; the
            longer history only estimates the noise better. From 14 runs the 2,000-kernel
            fleet benchmark failed 9.5% of stable PRs (one history 24%), from 30 runs 5.0%.
        min_runs: Fewest baseline runs for a regression verdict (passed to the rules).
        cross_device: Judge kernels with fewer than 6 runs on the run's card (the gate's
            settled level) against the card that ran before it, in percent of roof
            (``rules.scaling``, the device-scaling rule); False: they are new.
    """

    window: int = Field(default=14, ge=1)
    gate_window: int = Field(default=60, ge=1)
    min_runs: int = Field(default=3, ge=1)
    cross_device: bool = True


class RoofguardConfig(_Strict):
    """Everything a team decides about its checks (secrets and URLs are ``Settings``).

    Attributes:
        device: Device of reports that name none (catalog id or a printed name); a report
            naming its own card is judged on that one (``service.pipeline.roofs``).
        roof: Which peaks: datasheet (catalog), report (profiler-derived) or measured.
        base_branch: The branch whose runs form baselines.
        baseline: Window and minimum size of the baseline.
        devices: Catalog overrides and additions, ``{device: {field: value}}``.
        keys: How kernel names become identity keys.
        work_models: Declared work (FLOPs, bytes) of benchmarks without counters.
        rules: Rule selection, thresholds, kernel groups, aliases, ignores, failure policy
            (its fields may also be written at the top level of the file).
    """

    device: str | None = None
    roof: Literal["datasheet", "report", "measured"] = "datasheet"
    base_branch: str = Field(default="main", min_length=1)
    baseline: BaselineOptions = Field(default_factory=BaselineOptions)
    devices: dict[str, dict[str, Any]] = Field(default_factory=dict)
    keys: KeyOptions = Field(default_factory=KeyOptions)
    work_models: list[WorkModel] = Field(default_factory=list)
    rules: RulesConfig = Field(default_factory=RulesConfig)
    # Where it was read, for errors found later (a work model's expression on a kernel); not
    # a setting, so neither a key of the file nor part of the configuration's digest.
    _origin: str = PrivateAttr(default="roofguard config")

    @property
    def origin(self) -> str:
        """The file it was read from (``pyproject.toml [tool.roofguard]``), as errors name it."""
        return self._origin

    def catalog(self) -> Catalog:
        """The built-in device catalog with its ``[devices.*]`` overrides and additions."""
        return builtin_catalog().with_overrides(self.devices)


def hoist_rules_fields(data: dict[str, Any], prefix: str, path: Path | None) -> dict[str, Any]:
    """Move rules fields written at the top level (``fail_on``, ``[[groups]]`` ...) into rules."""
    top = {k: data[k] for k in RulesConfig.model_fields if k in data}
    if not top:
        return data
    rules = data.get("rules") or {}
    if not isinstance(rules, dict):
        return data  # pydantic reports the wrong type of [rules]
    twice = sorted(set(top) & set(rules))
    if twice:
        raise ConfigError(
            f"{prefix}{twice[0]}",
            "given both at top level and in [rules]",
            str(path) if path else None,
        )
    rest = {k: v for k, v in data.items() if k not in top}
    return {**rest, "rules": {**rules, **top}}


def _key(loc: tuple[int | str, ...], prefix: str) -> str:
    parts = [prefix] if prefix else []
    for part in loc:
        if isinstance(part, int):
            parts[-1:] = [f"{parts[-1]}[{part}]"] if parts else [f"[{part}]"]
        elif part not in ("[key]",) and not str(part).startswith("function-"):
            parts.append(str(part))
    return ".".join(parts)


def _reason(error: dict[str, Any]) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown key"
    if error["type"] == "missing":
        return "required key is missing"
    return str(error["msg"]).removeprefix("Value error, ")


def _config_error(exc: ValidationError, prefix: str, path: Path | None) -> ConfigError:
    error: dict[str, Any] = dict(exc.errors()[0])
    loc: tuple[int | str, ...] = tuple(error["loc"])
    key = _key(loc, prefix) or prefix or "config"
    reason = _reason(error)
    slot, sep, rest = reason.partition(": ")
    if sep and key.rsplit(".", 1)[-1] in {"flops", "bytes"} and " " not in slot:
        key, reason = f"{key}.{slot}", rest  # a work model's expression names its own key
    return ConfigError(key, reason, str(path) if path else None)


def _check_rule_options(config: RoofguardConfig, prefix: str, path: Path | None) -> None:
    rules, where = all_rules(), f"{prefix}rules" if prefix else "rules"
    known = {"all", "*", *rules, *(r.group for r in rules.values())}
    for index, name in enumerate(config.rules.select):
        if name not in known:
            raise ConfigError(
                f"{where}.select[{index}]",
                f"unknown rule or group {name!r}",
                str(path) if path else None,
            )
    for index, entry in enumerate(config.rules.ignore):
        if entry.rule not in known:
            raise ConfigError(
                f"{where}.ignore[{index}].rule",
                f"unknown rule or group {entry.rule!r}",
                str(path) if path else None,
            )
    for rule_id, raw in config.rules.options.items():
        if rule_id not in rules:
            raise ConfigError(
                f"{where}.options.{rule_id}",
                f"unknown rule {rule_id!r}",
                str(path) if path else None,
            )
        _refuse_wrong_scalars(raw, rules[rule_id].Options, f"{where}.options.{rule_id}.", path)
        try:
            rules[rule_id].Options.model_validate(raw)
        except ValidationError as exc:
            raise _config_error(exc, f"{where}.options.{rule_id}", path) from None


def _refuse_wrong_scalars(
    data: dict[str, Any], model: type[BaseModel], prefix: str, path: Path | None
) -> None:
    """A whole number or switch written as another type is an error (``scalars``)."""
    found = wrong_scalar(data, model, prefix.rstrip("."))
    if found is not None:
        raise ConfigError(found[0], found[1], str(path) if path else None)


def _check_devices(config: RoofguardConfig, prefix: str, path: Path | None) -> None:
    """Types, then figures no GPU has, the model, then typos, missing DRAM, shared names."""
    where = str(path) if path else None
    for name, override in config.devices.items():
        _refuse_wrong_scalars(override, DeviceSpec, f"{prefix}devices.{name}", path)
        odd = odd_figure(name, override)
        if odd is not None:
            raise ConfigError(f"{prefix}devices.{odd[0]}", odd[1], where)
        try:
            builtin_catalog().with_overrides({name: override})
        except ValidationError as exc:
            raise _config_error(exc, f"{prefix}devices.{name}", path) from None
        except RuleError as exc:
            raise ConfigError(f"{prefix}devices.{name}", str(exc), where) from None
    wrong = misnamed(config.devices)
    if wrong is not None:
        raise ConfigError(f"{prefix}devices.{wrong[0]}", wrong[1], where)


def _with_min_runs(config: RoofguardConfig) -> RoofguardConfig:
    """Pass ``baseline.min_runs`` to the baseline rules unless their options set it."""
    options = {k: dict(v) for k, v in config.rules.options.items()}
    for rule_id in BASELINE_RULES:
        options.setdefault(rule_id, {}).setdefault("min_runs", config.baseline.min_runs)
    rules = config.rules.model_copy(update={"options": options})
    return config.model_copy(update={"rules": rules})


def parse_config(
    data: dict[str, Any], *, path: Path | None = None, prefix: str = ""
) -> RoofguardConfig:
    """Validate a parsed config table; errors name ``path`` and ``prefix`` + the key.

    Raises:
        ConfigError: A wrong key, type or value; an unknown rule, group or device field.
            A ``[rules]`` field written at the top level is named so (``fail_on``, not
            ``rules.fail_on``).
    """
    moved = {name for name in RulesConfig.model_fields if name in data}
    try:
        return _parsed(data, path, prefix)
    except ConfigError as exc:
        raise _as_written(exc, prefix, moved) from None


def _as_written(error: ConfigError, prefix: str, moved: set[str]) -> ConfigError:
    """``error`` naming a top-level ``[rules]`` field where the file wrote it, not in rules."""
    inside = f"{prefix}rules."
    if not error.key.startswith(inside):
        return error
    written = error.key.removeprefix(inside)
    if re.split(r"[.\[]", written, maxsplit=1)[0] not in moved:
        return error
    return ConfigError(f"{prefix}{written}", error.reason, error.path)


def _parsed(data: dict[str, Any], path: Path | None, prefix: str) -> RoofguardConfig:
    hoisted = hoist_rules_fields(data, prefix, path)
    _refuse_wrong_scalars(hoisted, RoofguardConfig, prefix, path)
    try:
        config = RoofguardConfig.model_validate(hoisted)
    except ValidationError as exc:
        raise _config_error(exc, prefix.rstrip("."), path) from None
    _check_rule_options(config, prefix, path)
    refuse_short_windows(config.baseline, config.rules.options, prefix, path)
    _check_devices(config, prefix, path)
    config = _with_min_runs(config)
    if path is not None:
        config._origin = f"{path} [{prefix.rstrip('.')}]" if prefix else str(path)
    return config


def _read_toml(path: Path) -> dict[str, Any]:
    try:  # a byte-order mark (an editor's UTF-8 "with BOM") is no part of the TOML
        return tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ConfigError("config file", "does not exist", str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError("config", "not UTF-8 text (save it as UTF-8)", str(path)) from None
    except OSError as exc:
        raise ConfigError("config", f"cannot read: {exc.strerror or exc}", str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("config", f"not valid TOML: {exc}", str(path)) from None


def _from_file(path: Path) -> RoofguardConfig:
    data = _read_toml(path)
    if path.name != PYPROJECT:
        return parse_config(data, path=path)
    return parse_config(_tool_table(data, path), path=path, prefix="tool.roofguard.")


def _tools(data: dict[str, Any]) -> dict[str, Any]:
    tools = data.get("tool", {})
    return tools if isinstance(tools, dict) else {}


def _tool_table(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """``[tool.roofguard]`` of a ``pyproject.toml`` read as the config; without it, an error.

    Discovery reads a ``pyproject.toml`` only when the table is there, so a file without it
    was named (``--config``): defaults in its place would hide a misspelt ``[tool.rofguard]``.
    """
    tools = _tools(data)
    if "roofguard" not in tools:
        close = difflib.get_close_matches("roofguard", [str(t) for t in tools], n=1)
        meant = f"; [tool.{close[0]}] is: a misspelling of it?" if close else ""
        raise ConfigError("tool.roofguard", f"no such table in the file{meant}", str(path))
    table = tools["roofguard"]
    if not isinstance(table, dict):
        raise ConfigError("tool.roofguard", "must be a table", str(path))
    return table


def find_config(cwd: Path) -> Path | None:
    """``roofguard.toml`` in ``cwd``, else a ``pyproject.toml`` with ``[tool.roofguard]``."""
    own = cwd / CONFIG_FILE
    if own.is_file():
        return own
    pyproject = cwd / PYPROJECT
    if pyproject.is_file() and "roofguard" in _tools(_read_toml(pyproject)):
        return pyproject
    return None


def load_config(path: Path | None = None, *, cwd: Path) -> RoofguardConfig:
    """The configuration: ``path`` when given, else the one found in ``cwd``, else defaults.

    Raises:
        ConfigError: The file is missing (when given), unreadable, not TOML, or invalid;
            the error names the file and the key.
    """
    found = path if path is not None else find_config(cwd)
    if found is None:
        return _with_min_runs(RoofguardConfig())
    return _from_file(found if found.is_absolute() else cwd / found)
