"""A minimal loader for declared work models (``[[work_models]]`` tables).

The full configuration loader (``service.config``) takes these tables over; until then
``roofguard inspect --config`` reads them from ``roofguard.toml`` (top-level
``[[work_models]]``) or ``pyproject.toml`` (``[[tool.roofguard.work_models]]``)::

    [[work_models]]
    pattern = "BM_gemm*"
    flops = { tensor_bf16 = "2*M*N*K" }
    bytes = { dram = "2*(M*K + K*N + M*N)" }
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from collectors.workmodel import WorkModel
from service.errors import ConfigError


def _tables(path: Path, data: dict[str, Any]) -> tuple[str, Any]:
    """The work-model tables and the key they sit under."""
    if path.name == "pyproject.toml":
        return "tool.roofguard.work_models", data.get("tool", {}).get("roofguard", {}).get(
            "work_models", []
        )
    return "work_models", data.get("work_models", [])


def load_work_models(path: Path) -> list[WorkModel]:
    """Read the ``work_models`` tables of ``path`` (empty list when there are none).

    Raises:
        ConfigError: The file cannot be read or parsed, or a table is wrong; the error names
            the file and the key (``work_models[1].flops.tensor_bf16``).
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError("work_models", f"cannot read: {exc.strerror or exc}", str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("work_models", f"not valid TOML: {exc}", str(path)) from None
    key, tables = _tables(path, data)
    if not isinstance(tables, list):
        raise ConfigError(key, "must be an array of tables ([[work_models]])", str(path))
    return [_model(table, f"{key}[{index}]", path) for index, table in enumerate(tables)]


def _model(table: Any, key: str, path: Path) -> WorkModel:
    try:
        return WorkModel.model_validate(table)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"] if part != "[key]")
        reason = str(error["msg"]).removeprefix("Value error, ")
        slot, sep, rest = reason.partition(": ")
        if sep and where in {"flops", "bytes"} and " " not in slot:
            where, reason = f"{where}.{slot}", rest  # the expression's own key
        raise ConfigError(f"{key}.{where}" if where else key, reason, str(path)) from None
