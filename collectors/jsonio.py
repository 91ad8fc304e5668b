r"""Strict JSON reading shared by every JSON format (and the isolated reader's answers).

``json.loads`` accepts three things no record can hold: numbers too large for a float
(``1e400`` reads as infinity, caught where numbers are read), arrays nested deeper than
Python's recursion limit (a ``RecursionError``), and escaped lone surrogates (``"\ud800"``),
which read as a ``str`` that cannot be encoded to UTF-8 again, so serialising the record
fails later. The last two are handled here: nesting is a ``MalformedReport``, lone
surrogates become U+FFFD (the replacement character), as a UTF-8 decoder would make them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from collectors.errors import MalformedReport
from collectors.textio import replace_surrogates

#: An escaped surrogate; the text is only walked when one occurs (rarely).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def loads(text: str, path: str) -> Any:
    """Parse ``text`` read from ``path``.

    Raises:
        MalformedReport: Invalid or truncated JSON (names the line), or nesting too deep.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedReport(
            path, f"line {exc.lineno}", None, f"not valid JSON (truncated?): {exc.msg}"
        ) from None
    except RecursionError:
        raise MalformedReport(
            path, None, None, "JSON nested too deeply to read (no report nests like this)"
        ) from None
    return scrub(value) if has_surrogate_escape(text) else value


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
