"""Kernel groups for the digest, read from ``roofguard.toml`` or ``[tool.roofguard]``.

Only what the digest needs: each group's pattern, name, declared regime and target percent of
roof. The whole configuration model belongs in ``service.config``; when it lands, its kernel
groups replace this reader (the ``KernelTarget`` shape is the same).

```toml
[[groups]]
pattern = "*gemv*"
name = "decode GEMV"
regime = "memory-bound"
target_percent = 80
```
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from service.digest_model import KernelTarget
from service.errors import ConfigError

_GROUP_KEYS = ("pattern", "name", "regime", "target_percent")


def _table(path: Path) -> dict[str, Any]:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError("--config", f"cannot read: {exc.strerror}", str(path)) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("(file)", f"not valid TOML: {exc}", str(path)) from exc
    if path.name == "pyproject.toml":
        return dict(raw.get("tool", {}).get("roofguard", {}))
    return raw


def _target(entry: Any, index: int, path: Path) -> KernelTarget:
    key = f"groups[{index}]"
    if not isinstance(entry, dict):
        raise ConfigError(key, "must be a table", str(path))
    fields = {k: v for k, v in entry.items() if k in _GROUP_KEYS}
    try:
        return KernelTarget.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise ConfigError(f"{key}.{where}", error["msg"], str(path)) from exc


def load_targets(path: Path | None) -> list[KernelTarget]:
    """The kernel groups of ``path`` (none without a path); ConfigError names the key."""
    if path is None:
        return []
    groups = _table(path).get("groups", [])
    if not isinstance(groups, list):
        raise ConfigError("groups", "must be an array of tables ([[groups]])", str(path))
    return [_target(entry, i, path) for i, entry in enumerate(groups)]
