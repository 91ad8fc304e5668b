"""A seeded mutator over real reports, and the one outcome every mutation must have.

Mutations are what careless CI and attackers produce: a hostile value put in place of any
JSON node (wrong types, 1e400, NaN, lone surrogates, 200,000-deep arrays, empty names ...),
a number cell replaced, a line dropped, doubled or cut, a stray byte, a truncation, an
encoding change; and the sizes past each reader's limits: an integer of 5,000 digits (Python
converts at most 4,300), one beyond a float's range, a field of 140,000 characters (the csv
module takes 131,072), a table cut in the middle of a row. The outcome must be a record that
serialises to JSON, or a ``CollectorError`` naming the file; never a traceback or a
``CollectorBug``.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import collectors
from collectors.errors import CollectorBug, CollectorError, ReaderCrashed
from collectors.safety import MIN_DURATION_S

#: JSON text that ``json.loads`` reads, or fails on, in ways a dump of Python values cannot say.
_RAW = {
    "<big>": "1e400",
    "<nan>": "NaN",
    "<-inf>": "-Infinity",
    "<surrogate>": '"\\ud800bad"',
    "<deep>": "[" * 200_000 + "]" * 200_000,
    "<digits>": "7" * 5_000,  # json.dumps cannot write it: int -> str stops at 4,300 digits
}
HOSTILE_VALUES: list[Any] = [
    [],
    {},
    "",
    None,
    True,
    0,
    -1,
    -0.0,
    1e-300,
    5e-324,
    2**70,
    10**400,
    "12",
    "abc",
    "x" * 5000,
    [1, 2],
    {"a": [{}]},
    "$\\frac{a}{b}$",
    *_RAW,
]
HOSTILE_CELLS = ["", "-1", "0", "1e-300", "1e400", "nan", "inf", "abc", "1,2", '"', "\x00", "∞"]
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nodes(item, (*path, index))


def _replace(root: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = root
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return root


def _dump(value: Any) -> bytes:
    text = json.dumps(value, indent=1)
    for marker, raw in _RAW.items():
        text = text.replace(json.dumps(marker), raw)
    return text.encode("utf-8", "surrogatepass")


def json_value(data: bytes, rng: random.Random) -> bytes:
    """A hostile value in place of one node (or one key removed)."""
    try:
        root = json.loads(data)
    except (ValueError, RecursionError):  # an earlier mutation broke the JSON already
        return byte(data, rng)
    nodes = list(_nodes(root))
    path = rng.choice(nodes[1:] or nodes)
    if path and rng.random() < 0.2 and isinstance(_parent(root, path), dict):
        del _parent(root, path)[path[-1]]
        return _dump(root)
    return _dump(_replace(root, path, rng.choice(HOSTILE_VALUES)))


def _parent(root: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        root = root[step]
    return root


def number_cell(data: bytes, rng: random.Random) -> bytes:
    """One number in the text replaced by a hostile cell."""
    matches = list(_NUMBER.finditer(data))
    if not matches:
        return data
    match = rng.choice(matches)
    cell = rng.choice(HOSTILE_CELLS).encode()
    return data[: match.start()] + cell + data[match.end() :]


def lines(data: bytes, rng: random.Random) -> bytes:
    """A line dropped, doubled or swapped with the next."""
    rows = data.splitlines(keepends=True)
    if len(rows) < 2:
        return data
    i = rng.randrange(len(rows) - 1)
    action = rng.randrange(3)
    if action == 0:
        del rows[i]
    elif action == 1:
        rows.insert(i, rows[i])
    else:
        rows[i], rows[i + 1] = rows[i + 1], rows[i]
    return b"".join(rows)


def byte(data: bytes, rng: random.Random) -> bytes:
    """One byte set to a random value, or a stray byte inserted."""
    pos = rng.randrange(len(data))
    new = bytes([rng.choice([0x00, 0x22, 0x0A, 0xFF, 0xC3, rng.randrange(256)])])
    if rng.random() < 0.5:
        return data[:pos] + new + data[pos + 1 :]
    return data[:pos] + new + data[pos:]


def truncate(data: bytes, rng: random.Random) -> bytes:
    """The file cut at a random point."""
    return data[: rng.randrange(1, len(data))]


def encoding(data: bytes, rng: random.Random) -> bytes:
    """The text re-encoded as a careless editor saves it."""
    text = data.decode("utf-8", "replace")
    return rng.choice([b"\xef\xbb\xbf" + data, text.encode("utf-16"), text.encode("utf-16-le")])


#: Past Python's 4,300-digit limit on converting text to an int.
LONG_DIGITS = 5_000
#: An integer no float holds (floats end near 1.8e308).
BEYOND_FLOAT = 10**400
#: Past the csv module's default field limit of 131,072 characters.
LONG_FIELD = 140_000
_FIELD = re.compile(rb'[^,|\n\r"\t]+')


def long_number(data: bytes, rng: random.Random) -> bytes:
    """One number made an integer of 5,000 digits."""
    digits = str(rng.randrange(1, 10)).encode() * LONG_DIGITS
    return _one_number(data, rng, digits)


def huge_int(data: bytes, rng: random.Random) -> bytes:
    """One number made an integer beyond a float's range, negative at times."""
    sign = b"-" if rng.random() < 0.2 else b""
    return _one_number(data, rng, sign + str(BEYOND_FLOAT * rng.randrange(1, 10)).encode())


def _one_number(data: bytes, rng: random.Random, new: bytes) -> bytes:
    matches = list(_NUMBER.finditer(data))
    if not matches:
        return data + new
    match = rng.choice(matches)
    return data[: match.start()] + new + data[match.end() :]


def long_field(data: bytes, rng: random.Random) -> bytes:
    """One field (text between separators) made 140,000 characters long, letters or digits."""
    matches = list(_FIELD.finditer(data))
    if not matches:
        return data
    match = rng.choice(matches)
    fill = rng.choice([b"x", b"9", match.group()[:1] or b"x"])
    return data[: match.start()] + fill * LONG_FIELD + data[match.end() :]


def cut_line(data: bytes, rng: random.Random) -> bytes:
    """One line cut short and the file ended there, or the lines after it kept."""
    rows = data.splitlines(keepends=True)
    i = rng.randrange(len(rows))
    rows[i] = rows[i][: rng.randrange(len(rows[i]) + 1)]
    return b"".join(rows[: i + 1] if rng.random() < 0.5 else rows)


def repeat_block(data: bytes, rng: random.Random) -> bytes:
    """A run of up to eight lines repeated, or dropped."""
    rows = data.splitlines(keepends=True)
    i = rng.randrange(len(rows))
    block = rows[i : i + rng.randrange(1, 9)]
    if rng.random() < 0.5:
        return b"".join(rows[:i] + rows[i + len(block) :]) or data
    return b"".join(rows[:i] + block + rows[i:])


def bit_flip(data: bytes, rng: random.Random) -> bytes:
    """One bit flipped."""
    pos = rng.randrange(len(data))
    return data[:pos] + bytes([data[pos] ^ (1 << rng.randrange(8))]) + data[pos + 1 :]


Mutator = Callable[[bytes, random.Random], bytes]
TEXT_MUTATORS: list[Mutator] = [number_cell, number_cell, lines, byte, truncate, encoding]
JSON_MUTATORS: list[Mutator] = [json_value, json_value, json_value, *TEXT_MUTATORS]
BINARY_MUTATORS: list[Mutator] = [byte, byte, truncate]
#: What the seeded mutator missed: sizes past each reader's limits, cut tables, bit flips.
LIMIT_MUTATORS: list[Mutator] = [long_number, huge_int, long_field, cut_line, repeat_block]


def mutations(data: bytes, seed: str, count: int, mutators: list[Mutator]) -> Iterator[bytes]:
    """``count`` seeded mutants of ``data`` (one to three mutations each)."""
    rng = random.Random(seed)
    for _ in range(count):
        mutant = data
        for _ in range(rng.choice((1, 1, 2, 3))):
            mutant = rng.choice(mutators)(mutant, rng) or mutant
        yield mutant


def check_outcome(path: Path, fmt: str) -> str:
    """Read ``path`` as ``fmt``: a record that serialises, or an error naming the file.

    Returns what happened ("record" or the error's class name) for the test's tally.
    """
    try:
        record = collectors.collect(path, fmt)
    except CollectorBug as exc:
        raise AssertionError(f"{fmt}: a mutant is not named precisely: {exc}") from exc
    except ReaderCrashed as exc:
        assert fmt == "ncu-rep", f"only the isolated reader may crash: {exc}"
        assert str(exc).startswith(str(path)), exc
        return type(exc).__name__
    except CollectorError as exc:
        assert str(path) in str(exc), f"the error does not name the file: {exc}"
        return type(exc).__name__
    json.loads(record.model_dump_json())  # serialises, and reads back
    for kernel in record.kernels:
        assert not kernel.launches or kernel.duration_s >= MIN_DURATION_S, kernel
    return "record"
