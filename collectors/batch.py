"""Huge runs as columns: kernels of one shape held as arrays, not one record per kernel.

A million kernels as ``KernelRecord``s took 3.9-4.8 KB and 54-68 µs of CPU each to read
(a validated pydantic object graph per kernel). The readers of the big formats can instead
hand ``RunColumns``: the run's own fields (a ``RunRecord`` without kernels) and chunks of
kernels that share one *shape* (the same fields present, the same provenance and missing
notes, the same precisions, tiers and counters), each a ``Shape`` and one column per value
that varies: a list of strings or a float64 array.

A shape is made from one real ``KernelRecord`` of its kernels, so its fields are validated
by the record itself; the columns are checked as arrays, for what the record and the
physics checks would refuse (``collectors.safety``). Whatever a column path cannot vouch for
(repetitions, a bad number, a duplicate key) raises ``NotBatchable``: the record path then
reads the file and names the entry and field, so an error reads the same either way. The
kernel JSON a shape writes (``Shape.format_for``) is the text
``KernelRecord.model_dump(mode="json")`` gives through ``json.dumps(sort_keys=True)``, value
for value, which keeps the store's content hash (``service.store.ids``) that of the records.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from json import dumps
from json.encoder import encode_basestring_ascii
from typing import Any, cast

import numpy as np

from collectors.physics import (
    MAX_BYTE_PER_S,
    MAX_COUNTER,
    MAX_DURATION_S,
    MAX_FLOP_PER_S,
    SAMPLES_APART,
)
from collectors.schema import MIN_DURATION_S as _MIN_DURATION_S
from collectors.schema import KernelRecord, RunRecord

#: Kernels per chunk: bounded lists while a chunk is gathered, few chunks for a huge run.
CHUNK = 10_000

#: A column of numbers.
Floats = np.ndarray[Any, np.dtype[np.float64]]
#: A leaf: the path of one varying value in the kernel's JSON, e.g. ``("flops", "fp32")``.
Leaf = tuple[str, ...]


class NotBatchable(Exception):
    """The column path cannot vouch for this file; the record path must read it."""


def _sorted_json(data: Any) -> str:
    return dumps(data, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Shape:
    """What the kernels of a chunk share, and where their varying values go.

    Attributes:
        skeleton: ``model_dump(mode="json")`` of one kernel, its varying leaves replaced
            by ``marker-<i>`` strings.
        leaves: The varying values' paths, in the order of the columns.
        texts: The leaves that are strings (the others are floats).
        launches: Launches of each kernel (the same for all of the chunk).
        flops_order: The precisions in the record's own order (placement breaks ties by it).
        bytes_order: The tiers likewise.
        marker: The text of the markers.
    """

    skeleton: dict[str, Any]
    leaves: tuple[Leaf, ...]
    texts: frozenset[Leaf]
    launches: int
    flops_order: tuple[str, ...]
    bytes_order: tuple[str, ...]
    marker: str
    _formats: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict, compare=False)

    def format_for(self, source_path: str) -> tuple[str, tuple[int, ...]]:
        """A ``%``-format of one kernel's canonical JSON, its source path ``source_path``.

        Returns the format and the column of each ``%s`` (the JSON's keys are sorted, so
        the values come in another order than the columns).
        """
        made = self._formats.get(source_path)
        if made is None:
            skeleton = dict(self.skeleton)
            if skeleton.get("source") is not None:
                skeleton["source"] = {**skeleton["source"], "path": source_path}
            pieces = re.split(f'"{self.marker}-([0-9]+)"', _sorted_json(skeleton))
            text = "%s".join(p.replace("%", "%%") for p in pieces[0::2])
            made = self._formats[source_path] = (text, tuple(int(i) for i in pieces[1::2]))
        return made


@dataclass
class KernelChunk:
    """Kernels of one shape: one column per leaf (strings as lists, numbers as float64)."""

    shape: Shape
    columns: dict[Leaf, Any]
    size: int

    def strings(self, leaf: Leaf) -> list[str]:
        """The text column of ``leaf``."""
        column: list[str] = self.columns[leaf]
        return column

    def numbers(self, leaf: Leaf) -> Floats:
        """The float64 column of ``leaf``."""
        column: Floats = self.columns[leaf]
        return column

    @property
    def keys(self) -> list[str]:
        """The kernels' identity keys."""
        return self.strings(("key",))

    @property
    def names(self) -> list[str]:
        """The kernels' display names."""
        return self.strings(("name",))

    @property
    def duration_s(self) -> Floats:
        """The kernels' total times, seconds."""
        return self.numbers(("duration_s",))

    def work(self) -> tuple[dict[str, Floats], dict[str, Floats]]:
        """FLOPs by precision and bytes by tier, in the records' own order."""
        flops = {p: self.numbers(("flops", p)) for p in self.shape.flops_order}
        nbytes = {t: self.numbers(("bytes", t)) for t in self.shape.bytes_order}
        return flops, nbytes

    def texts(self, source_path: str) -> Iterator[str]:
        """Each kernel's canonical JSON (sorted keys, no spaces), source path as given."""
        text, order = self.shape.format_for(source_path)
        rendered = [self._rendered(self.shape.leaves[i]) for i in order]
        if not rendered:
            yield from (text for _ in range(self.size))
            return
        yield from (text % values for values in zip(*rendered, strict=True))

    def joined(self, *source_paths: str) -> list[str]:
        """The kernels' JSON texts joined by commas, once per source path.

        The values are rendered once for all of them (the path moves no key).
        """
        formats = [self.shape.format_for(path) for path in source_paths]
        rendered = [self._rendered(self.shape.leaves[i]) for i in formats[0][1]]
        rows = list(zip(*rendered, strict=True)) if rendered else [()] * self.size
        return [",".join([text % row for row in rows]) for text, _ in formats]

    def _rendered(self, leaf: Leaf) -> list[str]:
        if leaf in self.shape.texts:
            return list(map(encode_basestring_ascii, self.strings(leaf)))
        floats = cast("list[float]", self.numbers(leaf).tolist())
        return list(map(float.__repr__, floats))


@dataclass
class RunColumns:
    """A run read as columns: its own fields (no kernels) and its kernels in chunks."""

    head: RunRecord
    chunks: list[KernelChunk]

    @property
    def kernel_count(self) -> int:
        """Kernels of the run."""
        return sum(c.size for c in self.chunks)

    @property
    def unmeasured_count(self) -> int:
        """Kernels none of whose launches has a duration (each failed): stored, not timed."""
        return sum(c.size for c in self.chunks if not c.shape.launches)

    def keys(self) -> Iterator[str]:
        """Every kernel's identity key, in the run's order."""
        for chunk in self.chunks:
            yield from chunk.keys


#: Leaves that hold text; every other leaf is a float.
_TEXT_LEAVES = frozenset({("name",), ("key",), ("grid",), ("block",), ("source", "row")})
#: Dictionaries of numbers whose every entry is a leaf.
_NUMBER_MAPS = ("flops", "bytes", "counters", "profile")
#: Single numbers that vary from kernel to kernel (when the record has them).
_NUMBER_FIELDS = ("duration_s", "sm_clock_hz", "memory_clock_hz")


def leaves_of(kernel: KernelRecord) -> tuple[tuple[Leaf, ...], frozenset[Leaf]]:
    """The varying values of a kernel of this shape, and which of them are text."""
    leaves: list[Leaf] = [("name",), ("key",)]
    texts: set[Leaf] = {("name",), ("key",)}
    for name in ("grid", "block"):
        if getattr(kernel, name) is not None:
            leaves.append((name,))
            texts.add((name,))
    if kernel.source is not None and kernel.source.row is not None:
        leaves.append(("source", "row"))
        texts.add(("source", "row"))
    leaves += [(n,) for n in _NUMBER_FIELDS if getattr(kernel, n) is not None]
    leaves += [(m, k) for m in _NUMBER_MAPS for k in getattr(kernel, m)]
    leaves += [("samples_s", str(i)) for i in range(len(kernel.samples_s))]
    for name, value in kernel.params.items():
        leaves.append(("params", name))
        if isinstance(value, str):
            texts.add(("params", name))
    return tuple(leaves), frozenset(texts)


def shape_of(kernel: KernelRecord) -> Shape:
    """The shape of ``kernel``'s kind of kernel (made from that validated record)."""
    leaves, texts = leaves_of(kernel)
    marker = f"leaf{uuid.uuid4().hex}"
    skeleton = kernel.model_dump(mode="json")
    for index, leaf in enumerate(leaves):
        holder = skeleton
        for part in leaf[:-1]:  # copies: the record's own dump is left as it was
            inner = holder[part]
            copy: Any = dict(inner) if isinstance(inner, dict) else list(inner)
            holder[part] = copy
            holder = copy
        last: Any = int(leaf[-1]) if leaf[0] == "samples_s" else leaf[-1]
        holder[last] = f"{marker}-{index}"
    return Shape(
        skeleton,
        leaves,
        texts,
        kernel.launches,
        tuple(kernel.flops),
        tuple(kernel.bytes),
        marker,
    )


class ChunkBuilder:
    """Gathers kernels' leaf values, shape by shape, into checked ``KernelChunk``s.

    Args:
        where: The file.
        count: Called with the kernels gathered so far as each chunk closes (a reader's
            ``CollectOptions.count``): a run past the cap is refused a chunk after it, not
            once the whole file has been read.
    """

    def __init__(self, where: str, count: Callable[[int, str], None] | None = None) -> None:
        self.where = where
        self.count = count
        self.size = 0
        self.chunks: list[KernelChunk] = []
        self.keys: set[str] = set()
        self._shapes: dict[Any, Shape] = {}
        self._shape: Shape | None = None
        self._signature: Any = None
        self._rows: list[tuple[Any, ...]] = []

    def add(
        self, signature: Any, fields: Mapping[str, Any], record: Callable[[], KernelRecord]
    ) -> None:
        """Add one kernel: its shape's ``signature``, its fields (see ``leaf_values``).

        ``record`` makes the kernel's validated record; it is called once per new shape.
        """
        if signature != self._signature or len(self._rows) >= CHUNK:
            self.flush()
            if signature != self._signature:
                self._shape, self._signature = shape_of(record()), signature
        assert self._shape is not None
        self._rows.append(leaf_values(fields, self._shape.leaves))

    def add_values(
        self, signature: Any, values: tuple[Any, ...], record: Callable[[], KernelRecord]
    ) -> None:
        """Add one kernel by its leaf values, already in its shape's order (``leaves_of``)."""
        if signature != self._signature or len(self._rows) >= CHUNK:
            self.flush()
            if signature != self._signature:
                self._shape, self._signature = shape_of(record()), signature
        self._rows.append(values)

    def shape_for(self, signature: Any, record: Callable[[], KernelRecord]) -> Shape:
        """The shape of a reader's ``signature``, made from ``record()`` once a read."""
        shape = self._shapes.get(signature)
        if shape is None:
            shape = self._shapes[signature] = shape_of(record())
        return shape

    def add_columns(self, shape: Shape, columns: dict[Leaf, Any], size: int) -> None:
        """Add a chunk a reader made as columns already (one column per leaf of ``shape``)."""
        self.flush()
        self._signature = None
        try:
            chosen = {leaf: columns[leaf] for leaf in shape.leaves}
        except KeyError as missing:
            raise NotBatchable(f"no column for {missing}") from None
        self._close(KernelChunk(shape, chosen, size))

    def flush(self) -> None:
        """Close the chunk gathered so far (checked, as columns)."""
        if not self._rows or self._shape is None:
            return
        shape, rows = self._shape, self._rows
        self._rows = []
        columns: dict[Leaf, Any] = {}
        for leaf, column in zip(shape.leaves, zip(*rows, strict=True), strict=True):
            columns[leaf] = list(column) if leaf in shape.texts else _floats(column)
        self._close(KernelChunk(shape, columns, len(rows)))

    def _close(self, chunk: KernelChunk) -> None:
        check_chunk(chunk)
        for key in chunk.keys:  # a key seen before: the record path names both entries
            if key in self.keys:
                raise NotBatchable(f"duplicate kernel key {key!r}")
            self.keys.add(key)
        self.chunks.append(chunk)
        self.size += chunk.size
        if self.count is not None:
            self.count(self.size, self.where)


def _floats(column: Sequence[Any]) -> Floats:
    try:
        return np.array(column, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise NotBatchable(f"a value is no number: {exc}") from None


def check_chunk(chunk: KernelChunk) -> None:
    """What a record and the physics checks refuse, checked on the columns.

    Raises:
        NotBatchable: Some kernel would be refused (the record path names it).
    """
    for leaf, column in chunk.columns.items():
        if leaf in chunk.shape.texts:
            if leaf in (("name",), ("key",)) and not all(column):
                raise NotBatchable("an empty name or key")
            continue
        if not np.isfinite(column).all():
            raise NotBatchable(f"{'.'.join(leaf)}: not finite")
        signed = leaf[0] in ("counters", "params")
        if not signed and (column < 0).any():
            raise NotBatchable(f"{'.'.join(leaf)}: negative")
        if leaf[0] == "counters" and (np.abs(column) > MAX_COUNTER).any():
            raise NotBatchable(f"{'.'.join(leaf)}: past a count")
    _check_physics(chunk)


def _check_physics(chunk: KernelChunk) -> None:
    seconds = chunk.duration_s
    if chunk.shape.launches and (seconds < _MIN_DURATION_S).any():
        raise NotBatchable("a duration no timer measures")
    samples = [c for leaf, c in chunk.columns.items() if leaf[0] == "samples_s"]
    if any((c < _MIN_DURATION_S).any() for c in samples):
        raise NotBatchable("a sample no timer measures")
    if any((c > MAX_DURATION_S).any() for c in [seconds, *samples]):
        raise NotBatchable("a duration past a day")
    _check_samples(chunk, samples)
    bound = seconds if chunk.shape.launches else np.full(chunk.size, MAX_DURATION_S)
    flops, nbytes = chunk.work()
    for figures, rate in ((flops, MAX_FLOP_PER_S), (nbytes, MAX_BYTE_PER_S)):
        for values in figures.values():
            if (values > rate * bound).any():
                raise NotBatchable("a rate no device reaches")


def _check_samples(chunk: KernelChunk, samples: list[Floats]) -> None:
    """``collectors.physics.samples_fault`` at once: a shape's kernels share their launches."""
    if not samples or not chunk.shape.launches:
        return
    per_launch = chunk.duration_s / chunk.shape.launches
    low, high = np.minimum.reduce(samples), np.maximum.reduce(samples)
    if ((low > per_launch * SAMPLES_APART) | (per_launch > high * SAMPLES_APART)).any():
        raise NotBatchable("samples far from their duration per launch")


def leaf_values(fields: Mapping[str, Any], leaves: Sequence[Leaf]) -> tuple[Any, ...]:
    """The values at ``leaves`` of a kernel's fields, named as ``KernelRecord``'s.

    The source's row is ``fields["source_row"]`` (no ``SourceRef`` is made per kernel).
    """
    out: list[Any] = []
    for leaf in leaves:
        if len(leaf) == 1:
            out.append(fields[leaf[0]])
        elif leaf[0] == "source":
            out.append(fields["source_row"])
        elif leaf[0] == "samples_s":
            out.append(fields["samples_s"][int(leaf[1])])
        else:
            out.append(fields[leaf[0]][leaf[1]])
    return tuple(out)
