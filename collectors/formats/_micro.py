"""Helpers shared by the microbenchmark collectors: strict JSON and number reading.

Every failure becomes one ``MalformedReport`` naming the file, the entry and the field.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from collectors.errors import MalformedReport
from collectors.identity import KeyOptions, make_key
from collectors.schema import KernelRecord

#: Time units the benchmark tools print, and how many of each make a second.
TIME_UNITS = {"ns": 1e9, "us": 1e6, "µs": 1e6, "ms": 1e3, "s": 1.0}


def read_text(path: Path) -> str:
    """The file's text; an empty file is a ``MalformedReport``."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MalformedReport(str(path), None, None, f"not UTF-8 text: {exc.reason}") from None
    if not text.strip():
        raise MalformedReport(str(path), None, None, "the file is empty")
    return text


def read_json(path: Path) -> Any:
    """Parse a JSON file; truncated or invalid JSON names the line where parsing stopped."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedReport(
            str(path), f"line {exc.lineno}", None, f"not valid JSON (truncated?): {exc.msg}"
        ) from None


def require(obj: Any, key: str, kind: type | tuple[type, ...], path: Path, row: str | None) -> Any:
    """``obj[key]``, which must exist and be of ``kind``."""
    if not isinstance(obj, Mapping):
        raise MalformedReport(str(path), row, None, f"expected a JSON object, got {_type(obj)}")
    if key not in obj:
        raise MalformedReport(str(path), row, key, "missing")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise MalformedReport(str(path), row, key, f"expected {_kind(kind)}, got {_type(value)}")
    return value


def _type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _kind(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    words: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return " or ".join(words.get(k, k.__name__) for k in kinds)


def number(
    value: Any, path: Path, row: str | int | None, field: str, *, signed: bool = False
) -> float:
    """A finite number (non-negative unless ``signed``) from a JSON number or numeric string."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise MalformedReport(str(path), row, field, f"not a number: {value!r}")
    try:
        result = float(value)
    except ValueError:
        raise MalformedReport(str(path), row, field, f"not a number: {value!r}") from None
    if not math.isfinite(result):
        raise MalformedReport(str(path), row, field, f"not a finite number: {value!r}")
    if result < 0 and not signed:
        raise MalformedReport(str(path), row, field, f"must not be negative (got {value!r})")
    return result


def per_second(unit: Any, path: Path, row: str | None, field: str = "time_unit") -> float:
    """How many ``unit`` make a second (1e6 for ``us``).

    Dividing by this rather than multiplying by 1e-6 keeps decimal values exact
    (``2.5 / 1e6 == 2.5e-06`` while ``2.5 * 1e-6`` is not).
    """
    if not isinstance(unit, str) or unit.strip() not in TIME_UNITS:
        known = ", ".join(TIME_UNITS)
        raise MalformedReport(str(path), row, field, f"unknown time unit {unit!r} (known: {known})")
    return TIME_UNITS[unit.strip()]


def median(values: Iterable[float]) -> float:
    """The median: robust against the odd slow repetition, so it is what a record carries."""
    return float(statistics.median(values))


def check_unique(kernels: Iterable[KernelRecord], path: Path) -> tuple[KernelRecord, ...]:
    """The kernels, refusing two with the same identity key (the error names both entries)."""
    seen: dict[str, KernelRecord] = {}
    for kernel in kernels:
        if kernel.key in seen:
            first = seen[kernel.key].source
            row = kernel.source.row if kernel.source else None
            also = f" (also at {first.row})" if first and first.row else ""
            raise MalformedReport(
                str(path), row, "name", f"duplicate benchmark {kernel.key!r}{also}"
            )
        seen[kernel.key] = kernel
    return tuple(seen.values())


def numeric_or_text(value: Any) -> str | float:
    """An axis or parameter value: a number where it reads as one, else its text."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    try:
        number_value = float(text)
    except ValueError:
        return text
    return number_value if math.isfinite(number_value) else text


def bench_key(name: str, params: Mapping[str, str | float], options: KeyOptions) -> str:
    """Identity key of a benchmark (name plus parameters).

    A benchmark name is not a C++ signature, so a trailing ``(...)`` ("Image to Grayscale
    (Different Input sizes)") and a leading word are kept, whatever the key options say.
    """
    kept = options.model_copy(update={"strip_arguments": False, "strip_return_type": False})
    return make_key(name, params, kept)
