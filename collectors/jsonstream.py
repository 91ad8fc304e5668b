"""A JSON object read with one of its arrays streamed: each element handed over as it is parsed.

``json.load`` of a million-benchmark Google Benchmark file holds every entry as dictionaries
at once (1.2 KB a benchmark). Here each element of the streamed array is parsed by the C
decoder alone, handed to a callback, and let go, so only the file's text and what the
callback keeps stay. What this reader is unsure of (a repeated key at the top, trailing
text, invalid JSON) raises ``NotBatchable``: the strict reader (``collectors.jsonio``) then
reads the file and names what is wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from collectors.batch import NotBatchable

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def stream_array(text: str, key: str, each: Callable[[int, Any], None]) -> dict[str, Any]:
    """The top-level object of ``text``; its array ``key`` goes to ``each(index, element)``.

    The returned object holds ``key`` as None (its elements were handed over).

    Raises:
        NotBatchable: Not an object, ``key`` not an array, or anything not plain JSON.
    """
    try:
        return _object(text, key, each)
    except (ValueError, IndexError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise NotBatchable(f"not plain JSON: {exc}") from None


def _skip(text: str, pos: int) -> int:
    found = _SPACE.match(text, pos)
    assert found is not None  # matches the empty string anywhere
    return found.end()


def _expect(text: str, pos: int, allowed: str) -> tuple[str, int]:
    """The punctuation at ``pos`` (one of ``allowed``) and the position after its spaces."""
    char = text[pos]
    if char not in allowed:
        raise ValueError(f"expected one of {allowed!r} at {pos}")
    return char, _skip(text, pos + 1)


def _object(text: str, key: str, each: Callable[[int, Any], None]) -> dict[str, Any]:
    pos = _skip(text, 0)
    _, pos = _expect(text, pos, "{")
    top: dict[str, Any] = {}
    end = "}" if text[pos] == "}" else ","
    if end == "}":
        pos = _skip(text, pos + 1)
    while end == ",":
        name, pos = _DECODER.raw_decode(text, pos)
        if not isinstance(name, str) or name in top:
            raise ValueError(f"a repeated or odd key {name!r}")
        _, pos = _expect(text, _skip(text, pos), ":")
        if name == key:
            pos, top[name] = _array(text, pos, each), None
        else:
            top[name], pos = _DECODER.raw_decode(text, pos)
        end, pos = _expect(text, _skip(text, pos), ",}")
    if pos != len(text):
        raise ValueError("text after the object")
    return top


def _array(text: str, pos: int, each: Callable[[int, Any], None]) -> int:
    """Hand over every element of the array at ``pos``; the position after it."""
    _, pos = _expect(text, pos, "[")
    if text[pos] == "]":
        return pos + 1
    index = 0
    while True:
        element, pos = _DECODER.raw_decode(text, pos)
        each(index, element)
        index += 1
        sep, pos = _expect(text, _skip(text, pos), ",]")
        if sep == "]":
            return pos
