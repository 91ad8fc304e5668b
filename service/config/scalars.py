"""A config's whole numbers and switches as the file writes them, not as pydantic would coerce.

pydantic's lax mode took ``window = "14"`` for 14, ``confirm_runs = true`` for 1 (which
changes the gate), ``check_groups = "yes"`` for true and ``z_threshold = "3.5"`` for 3.5.
TOML has its own integers, floats and booleans: a value of another type for such a field is
a mistake to name, key by key (a whole number is a number: ``z_threshold = 4``), in a list
of tables (``rules.groups[0].target_percent``) and a table of numbers too
(``devices.H100-SXM5.bandwidth_byte_per_s.dram``). The models stay lax for the values the
code builds (numpy counts, lists for tuples).
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

#: (key path, reason) of a value of the wrong type.
WrongType = tuple[str, str]


def wrong_scalar(data: Mapping[str, Any], model: type[BaseModel], path: str) -> WrongType | None:
    """The first int, float or bool field of ``model`` (nested too) that ``data`` mistypes."""
    for name, value in data.items():
        field = model.model_fields.get(name)
        if field is None:
            continue  # an unknown key: the model's own validation names it
        where = f"{path}.{name}" if path else name
        found = _wrong_value(field.annotation, value, where)
        if found is not None:
            return found
    return None


def _wrong_value(annotation: Any, value: Any, where: str) -> WrongType | None:
    kind = _without_none(annotation)
    if kind is bool and not isinstance(value, bool):
        return where, f"must be true or false, not {_as_toml(value)}"
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        return where, f"must be a whole number, not {_as_toml(value)}"
    if kind is float and (isinstance(value, bool) or not isinstance(value, int | float)):
        return where, f"must be a number, not {_as_toml(value)}"
    if _is_model(kind) and isinstance(value, Mapping):
        return wrong_scalar(value, kind, where)
    return _wrong_item(kind, value, where)


def _wrong_item(kind: Any, value: Any, where: str) -> WrongType | None:
    """The first mistyped item of a list (``[[rules.groups]]``) or table of numbers (``dram``)."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (list, tuple) and isinstance(value, list) and args[1:] in ((), (...,)):
        items = [(args[0], item, f"{where}[{i}]") for i, item in enumerate(value)]
    elif origin is dict and isinstance(value, Mapping):
        items = [(args[1], item, f"{where}.{name}") for name, item in value.items()]
    else:
        return None
    return next((w for item in items if (w := _wrong_value(*item)) is not None), None)


def _as_toml(value: Any) -> str:
    """``true``, ``"14"``, ``14.5``: the value as the file wrote it."""
    return json.dumps(value, default=str)


def _without_none(annotation: Any) -> Any:
    """``int`` of ``int | None``, ``float`` of ``Annotated[float, ...]``; anything else as it is."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        kept = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _without_none(kept[0]) if len(kept) == 1 else annotation
    if typing.get_origin(annotation) is typing.Annotated:
        return _without_none(typing.get_args(annotation)[0])
    return annotation


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)
