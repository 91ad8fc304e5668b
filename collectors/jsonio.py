r"""Strict JSON reading shared by every JSON format (and the isolated reader's answers).

``json.loads`` accepts or fails on four things no record can hold: numbers too large for a
float (``1e400`` reads as infinity, an integer of 400 digits fails to become a float; both
caught where numbers are read), integers longer than Python converts from text
(``sys.get_int_max_str_digits()``, 4,300 digits: a bare ``ValueError``), arrays nested deeper
than Python's recursion limit (a ``RecursionError``), and escaped lone surrogates
(``"\ud800"``), which read as a ``str`` that cannot be encoded to UTF-8 again, so serialising
the record fails later. The last three are handled here: an over-long integer is a
``MalformedReport`` naming its JSON path, so is nesting, and lone surrogates become U+FFFD
(the replacement character), as a UTF-8 decoder would make them.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from collectors.errors import MalformedReport
from collectors.textio import replace_surrogates

#: An escaped surrogate; the text is only walked when one occurs (rarely).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def loads(text: str, path: str) -> Any:
    """Parse ``text`` read from ``path``.

    Raises:
        MalformedReport: Invalid or truncated JSON (names the line), an integer too long to
            read (names its JSON path), or nesting too deep.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _invalid(path, exc) from None
    except RecursionError:
        raise _too_deep(path) from None
    except ValueError as exc:  # the one other failure: int()'s digit limit
        raise _too_long(text, path, exc) from None
    return scrub(value) if has_surrogate_escape(text) else value


def _invalid(path: str, exc: json.JSONDecodeError) -> MalformedReport:
    """Where the JSON goes wrong; "truncated?" only where it stops short (at its end)."""
    cut_short = exc.pos >= len(exc.doc.rstrip())
    reason = f"not valid JSON{' (truncated?)' if cut_short else ''}: {exc.msg}"
    return MalformedReport(path, f"line {exc.lineno}, column {exc.colno}", None, reason)


def _too_deep(path: str) -> MalformedReport:
    return MalformedReport(
        path, None, None, "JSON nested too deeply to read (no report nests like this)"
    )


class _Digits(str):
    """An integer's text that ``int()`` refuses to convert (over the digit limit)."""

    __slots__ = ()


def _int_or_digits(text: str) -> int | _Digits:
    try:
        return int(text)
    except ValueError:
        return _Digits(text)


def _too_long(text: str, path: str, exc: ValueError) -> MalformedReport:
    """The error naming the first integer over the digit limit, found by reading again.

    The second reading keeps such integers as text (this path is taken on bad input only,
    so the usual reading keeps ``json``'s fast C conversion).
    """
    try:
        root = json.loads(text, parse_int=_int_or_digits)
    except json.JSONDecodeError as invalid:  # the text goes wrong after the long integer
        return _invalid(path, invalid)
    except RecursionError:
        return _too_deep(path)
    for steps, value in _walk(root):
        if isinstance(value, _Digits):
            digits, limit = len(value.lstrip("-")), sys.get_int_max_str_digits()
            reason = f"an integer of {digits:,} digits; roofguard reads integers of at most "
            keys = [i for i, step in enumerate(steps) if isinstance(step, str)]
            last = keys[-1] if keys else len(steps)  # the field: the last key, with its indices
            row, field = _json_path(steps[:last]), _json_path(steps[last:])
            return MalformedReport(path, row or None, field or None, reason + f"{limit:,} digits")
    return MalformedReport(path, None, None, f"not valid JSON: {exc}")


def _json_path(steps: list[str | int]) -> str:
    """``["benchmarks", 0, "real_time"]`` -> ``benchmarks[0].real_time``."""
    return "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps).lstrip(".")


def _walk(root: Any) -> Iterator[tuple[list[str | int], Any]]:
    """Every value with the keys and indices that lead to it, in document order."""
    stack: list[tuple[list[str | int], Any]] = [([], root)]
    while stack:  # iterative: nesting is bounded by json.loads, not by Python's stack here
        steps, value = stack.pop()
        yield steps, value
        children: list[tuple[list[str | int], Any]] = []
        if isinstance(value, dict):
            children = [([*steps, k], v) for k, v in value.items()]
        elif isinstance(value, list):
            children = [([*steps, i], v) for i, v in enumerate(value)]
        stack.extend(reversed(children))


def has_surrogate_escape(text: str) -> bool:
    """Whether JSON ``text`` escapes a surrogate (a lone one, or half of a proper pair)."""
    return _SURROGATE_ESCAPE.search(text) is not None


def scrub(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (and keys) replaced by U+FFFD."""
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:  # iterative: nesting depth is bounded by json.loads, not by us
        parent, slot = stack.pop()
        item = parent[slot]
        if isinstance(item, str):
            parent[slot] = _fixed(item)
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
        elif isinstance(item, dict):
            fixed = {_fixed(k): v for k, v in item.items()}
            if len(fixed) != len(item) or any(a != b for a, b in zip(fixed, item, strict=True)):
                item.clear()
                item.update(fixed)
            stack.extend((item, k) for k in item)
    return root[0]


def _fixed(text: str) -> str:
    # A pair written as two escapes is already one character after json.loads.
    return replace_surrogates(text)
