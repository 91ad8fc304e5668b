"""Helpers shared by the microbenchmark collectors: strict JSON and number reading.

Every failure becomes one ``MalformedReport`` naming the file, the entry and the field.
"""

from __future__ import annotations

import difflib
import math
import re
import statistics
from collections.abc import Iterable, Mapping
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from collectors import jsonio
from collectors.errors import MalformedReport, shown
from collectors.identity import KeyOptions, make_key
from collectors.schema import PRECISIONS, TIERS, UNREAD_WORK, KernelRecord
from collectors.textio import undecodable

#: Harness counters that carry the work of one call: ``flops_<precision>`` (``flop_fp32``,
#: ``FLOPs_tensor_bf16`` ...) and ``bytes_<tier>``. gbench user counters and
#: pytest-benchmark ``extra_info`` use the same names.
FLOP_COUNTER = re.compile(r"^(?:flops?|FLOPs?)_(\w+)$")
BYTE_COUNTER = re.compile(r"^bytes_(\w+)$")
#: Keys of a harness' context or machine block that name the device, in order of trust.
DEVICE_KEYS = ("gpu", "gpu_name", "device", "device_name")

#: Time units the benchmark tools print, and how many of each make a second.
TIME_UNITS = {"ns": 1e9, "us": 1e6, "µs": 1e6, "ms": 1e3, "s": 1.0}


def read_text(path: Path) -> str:
    """The file's text; an empty file is a ``MalformedReport``."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise undecodable(str(path), exc) from None
    if not text.strip():
        raise MalformedReport(str(path), None, None, "the file is empty")
    return text


def read_json(path: Path) -> Any:
    """Parse a JSON file strictly (see ``collectors.jsonio``)."""
    return jsonio.loads(read_text(path), str(path))


def require(obj: Any, key: str, kind: type | tuple[type, ...], path: Path, row: str | None) -> Any:
    """``obj[key]``, which must exist and be of ``kind`` (a string must not be blank)."""
    obj = mapping(obj, path, row)
    if key not in obj:
        raise MalformedReport(str(path), row, key, "missing")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise MalformedReport(str(path), row, key, f"expected {_kind(kind)}, got {_type(value)}")
    if isinstance(value, str) and not value.strip():
        raise MalformedReport(str(path), row, key, "must not be empty")
    return value


def optional(
    obj: Mapping[str, Any],
    key: str,
    kind: type | tuple[type, ...],
    path: Path,
    row: str | None,
    field: str | None = None,
) -> Any:
    """``obj[key]`` when present and not null (else None), which must be of ``kind``."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise MalformedReport(
            str(path), row, field or key, f"expected {_kind(kind)}, got {_type(value)}"
        )
    return value


def mapping(value: Any, path: Path, row: str | None, field: str | None = None) -> Mapping[str, Any]:
    """``value``, which must be a JSON object."""
    if not isinstance(value, Mapping):
        raise MalformedReport(str(path), row, field, f"expected a JSON object, got {_type(value)}")
    return value


def by_id(raw: list[Any], path: Path, field: str) -> dict[int, Mapping[str, Any]]:
    """The objects of the list ``field`` by their integer ``id`` (the position when absent)."""
    entries: dict[int, Mapping[str, Any]] = {}
    for index, item in enumerate(raw):
        row = f"{field}[{index}]"
        entry = mapping(item, path, row)
        entry_id = optional(entry, "id", int, path, row)
        entries[index if entry_id is None else entry_id] = entry
    return entries


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
        raise MalformedReport(str(path), row, field, f"not a number: {shown(value)}")
    try:
        result = float(value)
    except ValueError:
        raise MalformedReport(str(path), row, field, f"not a number: {shown(value)}") from None
    except OverflowError:  # an integer past a float's range (JSON keeps its every digit)
        digits = len(str(value).lstrip("-"))
        reason = f"an integer of {digits:,} digits, too large for a number "
        raise MalformedReport(str(path), row, field, reason + "(floats end near 1.8e308)") from None
    if not math.isfinite(result):
        raise MalformedReport(str(path), row, field, f"not a finite number: {shown(value)}")
    if result < 0 and not signed:
        raise MalformedReport(str(path), row, field, f"must not be negative (got {shown(value)})")
    return result


def per_second(unit: Any, path: Path, row: str | None, field: str = "time_unit") -> float:
    """How many ``unit`` make a second (1e6 for ``us``).

    Dividing by this rather than multiplying by 1e-6 keeps decimal values exact
    (``2.5 / 1e6 == 2.5e-06`` while ``2.5 * 1e-6`` is not).
    """
    if not isinstance(unit, str) or unit.strip() not in TIME_UNITS:
        known = ", ".join(TIME_UNITS)
        reason = f"unknown time unit {shown(unit)} (known: {known})"
        raise MalformedReport(str(path), row, field, reason)
    return TIME_UNITS[unit.strip()]


def median(values: Iterable[float]) -> float:
    """The median: robust against the odd slow repetition, so it is what a record carries."""
    values = list(values)
    if len(values) == 1:  # most benchmarks run once: statistics.median would sort one value
        return float(values[0])
    return float(statistics.median(values))


def kernel_record(path: Path, row: str | int | None, **fields: Any) -> KernelRecord:
    """A KernelRecord; a value the record refuses is an error naming this entry and the field."""
    try:
        return KernelRecord(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise MalformedReport(str(path), row, field, first["msg"]) from None


def check_unique(kernels: Iterable[KernelRecord], path: Path) -> tuple[KernelRecord, ...]:
    """The kernels, refusing two with the same identity key (the error names both entries)."""
    seen: dict[str, KernelRecord] = {}
    for kernel in kernels:
        if kernel.key in seen:
            first = seen[kernel.key].source
            row = kernel.source.row if kernel.source else None
            also = f" (also at {first.row})" if first and first.row else ""
            raise MalformedReport(
                str(path), row, "name", f"duplicate benchmark {shown(kernel.key)}{also}"
            )
        seen[kernel.key] = kernel
    return tuple(seen.values())


def numeric_or_text(value: Any) -> str | float:
    """An axis or parameter value: a number where it reads as one, else its text."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return value
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:  # past a float's range: kept as the text it is
            return str(value)
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
    return make_key(name, params, _kept(options))


@lru_cache(maxsize=64)
def _kept(options: KeyOptions) -> KeyOptions:
    """``options`` keeping arguments and return types (once per options, not per benchmark)."""
    return options.model_copy(update={"strip_arguments": False, "strip_return_type": False})


def _named_work(counter: str) -> tuple[str, str] | None:
    """``("flops", slot)`` or ``("bytes", slot)`` for a counter named like work, known or not."""
    flop = FLOP_COUNTER.match(counter)
    if flop:
        return "flops", flop.group(1)
    byte = BYTE_COUNTER.match(counter)
    return ("bytes", byte.group(1)) if byte else None


def _slots(kind: str) -> tuple[str, tuple[str, ...]]:
    """What ``kind``'s slots are called and the known ones: precisions, or tiers."""
    return ("precision", PRECISIONS) if kind == "flops" else ("tier", TIERS)


@lru_cache(maxsize=4096)  # a run's benchmarks share a handful of counter names
def work_slot(counter: str) -> tuple[str, str] | None:
    """``("flops", precision)`` or ``("bytes", tier)`` when ``counter`` names known work."""
    named = _named_work(counter)
    return named if named is not None and named[1] in _slots(named[0])[1] else None


#: Slots people write for a tier under another name: HBM and global memory are the dram tier.
_TIER_ALIASES = {"hbm": "dram", "gmem": "dram", "global": "dram", "smem": "l1", "shared": "l1"}


def likely_slot(slot: str, known: tuple[str, ...]) -> str | None:
    """The known precision or tier ``slot`` most likely means (``bf16``: ``tensor_bf16``)."""
    lowered = slot.lower()
    for guess in (lowered, f"tensor_{lowered}", _TIER_ALIASES.get(lowered)):
        if guess in known:
            return guess
    close = difflib.get_close_matches(lowered, known, n=1, cutoff=0.6)
    return close[0] if close else None


def work_hint(kind: str, slot: str) -> str:
    """``'bf16' is no precision; did you mean flops_tensor_bf16?`` (``kind``: flops or bytes)."""
    what, known = _slots(kind)
    guess = likely_slot(slot, known)
    hint = f"; did you mean {kind}_{guess}?" if guess else f" (known: {', '.join(known)})"
    return f"{slot!r} is no {what}{hint}"


@lru_cache(maxsize=4096)
def unread_work(counter: str, where: str = "") -> str | None:
    """Why a counter named like work (``flops_bf16``, ``bytes_hbm``) was not read; else None.

    A ``missing`` entry: the work it carried is not counted, so percent of roof is a lower
    bound, and the entry names the counter it likely meant. Rates (``bytes_per_second``) and
    known slots are not reported.
    """
    named = _named_work(counter)
    if named is None or work_slot(counter) is not None or named[1].startswith("per_"):
        return None
    kind, slot = named
    return f"{kind}: {where}{counter}{UNREAD_WORK}{work_hint(kind, slot)}"


def device_name(block: Mapping[str, Any]) -> str | None:
    """The device a harness' context or machine block names (``DEVICE_KEYS``), if any."""
    for key in DEVICE_KEYS:
        value = block.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def text(value: Any) -> str | None:
    """A free-text field as text; absent or empty is None."""
    return str(value) if value not in (None, "") else None


def timestamp(value: Any) -> datetime | None:
    """An ISO 8601 time, or None when absent or not one (the collection time is used)."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        return None
