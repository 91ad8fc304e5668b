"""Google Benchmark JSON as columns (``collectors.batch``): the reader of huge runs.

The entries are parsed one at a time (``collectors.jsonstream``) and each becomes the leaf
values of its kernel, computed as ``GoogleBenchmarkJson._fields`` computes a record's fields,
with the checks of ``_micro.require``/``number`` done inline on the plain case. A file with
repetitions, aggregates, errors or skips, a value of an odd type or anything the record would
refuse is read by the record path instead (``NotBatchable``), which names what is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from collectors.batch import ChunkBuilder, NotBatchable, RunColumns
from collectors.formats._micro import BYTE_COUNTER, FLOP_COUNTER, TIME_UNITS, read_text
from collectors.formats.gbench_json import _FIELDS, GoogleBenchmarkJson
from collectors.jsonio import has_surrogate_escape
from collectors.jsonstream import stream_array

_NUMBERS = (int, float)
_LARGEST = 1.7976931348623157e308


def read_columns(reader: GoogleBenchmarkJson, path: Path) -> RunColumns:
    """The run of ``path`` as columns; ``NotBatchable`` when the record path must read it."""
    text = read_text(path)
    if has_surrogate_escape(text):
        raise NotBatchable("escaped surrogates")
    builder = ChunkBuilder(str(path))
    top = stream_array(text, "benchmarks", lambda i, e: _add(reader, builder, i, e, path))
    del text
    builder.flush()
    context = top.get("context")
    if not isinstance(context, dict) or "benchmarks" not in top:
        raise NotBatchable("no context or no benchmarks")
    return RunColumns(reader._run(context, [], [], path), builder.chunks)


def _add(
    reader: GoogleBenchmarkJson, builder: ChunkBuilder, index: int, entry: Any, path: Path
) -> None:
    """Add one entry: a benchmark run once, timed in a known unit, plain numbers."""
    if type(entry) is not dict:
        raise NotBatchable("an entry is no object")
    name, run = entry.get("name"), entry.get("run_name")
    if type(name) is not str or not name.strip() or (run is not None and type(run) is not str):
        raise NotBatchable("a name is missing or no text")
    if entry.get("error_occurred") or entry.get("skipped"):
        raise NotBatchable("an error or a skip")
    if entry.get("run_type") not in (None, "iteration"):
        raise NotBatchable("an aggregate")
    rep = entry.get("repetition_index")
    if rep is not None and type(rep) is not int:
        raise NotBatchable("a repetition index is no integer")
    real_s, cpu_s = _times(entry)
    counters: dict[str, float] = {}
    for key, value in entry.items():
        if key in _FIELDS:
            continue
        kind = type(value)
        if kind is float or kind is int:
            counters[key] = float(value)
        elif kind is bool or key.endswith("_per_second") or _counted(key):
            raise NotBatchable(f"counter {key!r} is no plain number")
    fields = reader._fields(run or name, [real_s], [cpu_s], [counters])
    fields["source_row"] = f"benchmarks[{index}]"
    record = lambda: reader._made(_record_fields(fields), index, path)  # noqa: E731
    builder.add(_signature(fields), fields, record)


def _times(entry: dict[str, Any]) -> tuple[float, float]:
    """Real and CPU seconds, as ``gbench_json._times`` makes them from plain numbers."""
    unit, real, cpu = entry.get("time_unit"), entry["real_time"], entry.get("cpu_time")
    scale = TIME_UNITS.get(unit.strip()) if type(unit) is str else None
    if (
        scale is None
        or type(real) not in _NUMBERS
        or (cpu is not None and type(cpu) not in _NUMBERS)
    ):
        raise NotBatchable("a time or its unit is not plain")
    real_f = float(real)
    cpu_s = float(cpu) / scale if cpu is not None else real_f / scale
    if not (0.0 <= real_f <= _LARGEST and 0.0 <= cpu_s <= _LARGEST):  # NaN fails too
        raise NotBatchable("a time is negative or not finite")
    return real_f / scale, cpu_s


def _counted(key: str) -> bool:
    return bool(FLOP_COUNTER.match(key) or BYTE_COUNTER.match(key))


def _signature(fields: dict[str, Any]) -> tuple[Any, ...]:
    """What makes a benchmark's record skeleton (``collectors.batch.Shape``) its own."""
    params: dict[str, Any] = fields["params"]
    return (
        tuple(params),
        tuple(isinstance(v, str) for v in params.values()),
        tuple(fields["counters"]),
        tuple(fields["flops"]),
        tuple(fields["bytes"]),
        tuple(fields["provenance"].items()),
        fields["missing"],
        len(fields["samples_s"]),
    )


def _record_fields(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if k != "source_row"}
