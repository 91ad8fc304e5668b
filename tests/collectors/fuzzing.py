"""A seeded mutator over real reports, and the one outcome every mutation must have.

Mutations are what careless CI and attackers produce: a hostile value put in place of any
JSON node (wrong types, 1e400, NaN, lone surrogates, 200,000-deep arrays, empty names ...),
a number cell replaced, a line dropped, doubled or cut, a stray byte, a truncation, an
encoding change. The outcome must be a record that serialises to JSON, or a
``CollectorError`` naming the file; never a traceback or a ``CollectorBug``.
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


Mutator = Callable[[bytes, random.Random], bytes]
TEXT_MUTATORS: list[Mutator] = [number_cell, number_cell, lines, byte, truncate, encoding]
JSON_MUTATORS: list[Mutator] = [json_value, json_value, json_value, *TEXT_MUTATORS]
BINARY_MUTATORS: list[Mutator] = [byte, byte, truncate]


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
