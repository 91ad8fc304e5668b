"""Google Benchmark JSON as columns (``collectors.batch``): the reader of huge runs.

The entries are parsed one at a time (``collectors.jsonstream``) and each becomes the leaf
values of its kernel, computed as ``GoogleBenchmarkJson._fields`` computes a record's fields,
with the checks of ``_micro.require``/``number`` done inline on the plain case. A file with
repetitions, aggregates, errors or skips, a value of an odd type or anything the record would
refuse is read by the record path instead (``NotBatchable``), which names what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collectors.batch import ChunkBuilder, NotBatchable, RunColumns
from collectors.formats._micro import BYTE_COUNTER, FLOP_COUNTER, TIME_UNITS, bench_key, read_text
from collectors.formats.gbench_json import (
    _FIELDS,
    _RATES,
    GoogleBenchmarkJson,
    _reported,
    _whole,
    _work,
    is_work,
    split_name,
)
from collectors.identity import _fmt as key_value
from collectors.jsonio import has_surrogate_escape
from collectors.jsonstream import stream_array
from collectors.schema import KernelRecord

_NUMBERS = (int, float)
_LARGEST = 1.7976931348623157e308


def read_columns(reader: GoogleBenchmarkJson, path: Path) -> RunColumns:
    """The run of ``path`` as columns; ``NotBatchable`` when the record path must read it."""
    text = read_text(path)
    if has_surrogate_escape(text):
        raise NotBatchable("escaped surrogates")
    adding = _Adding(reader, ChunkBuilder(str(path), reader.options.count), path)
    top = stream_array(text, "benchmarks", adding.add)
    del text
    adding.builder.flush()
    context = top.get("context")
    if not isinstance(context, dict) or "benchmarks" not in top:
        raise NotBatchable("no context or no benchmarks")
    return RunColumns(reader._run(context, [], [], path), adding.builder.chunks)


@dataclass
class _Adding:
    """The entries' kernels going into ``builder``, with the key of each name made once."""

    reader: GoogleBenchmarkJson
    builder: ChunkBuilder
    path: Path
    prefixes: dict[str, str] = field(default_factory=dict)

    def add(self, index: int, entry: Any) -> None:
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
        self._add(index, run or name, real_s, cpu_s, _counters(entry))

    def _add(
        self, index: int, run: str, real_s: float, cpu_s: float, merged: dict[str, float]
    ) -> None:
        """``GoogleBenchmarkJson._fields`` of one repetition, as leaf values in shape order."""
        base, params = split_name(run)
        merged["cpu_time_s"] = cpu_s
        if "bytes_per_second" in merged or "items_per_second" in merged:
            per_rate_time = real_s if ("/real_time" in run or "/manual_time" in run) else cpu_s
            for rate, amount in _RATES.items():
                if rate in merged:
                    merged[amount] = _whole(merged[rate] * per_rate_time)
        flops, nbytes, provenance, missing = _work(merged)
        provenance["duration"] = _ONE_REPETITION
        key = self._key(base, params)
        row = f"benchmarks[{index}]"
        values = (run, key, row, real_s, *flops.values(), *nbytes.values(), *merged.values())
        signature = (
            tuple(params),
            tuple(isinstance(v, str) for v in params.values()),
            tuple(merged),
            tuple(flops),
            tuple(nbytes),
            tuple(provenance),
            tuple(map(id, provenance.values())),  # made once each (``_reported`` caches them)
            tuple(missing),
        )

        def record() -> KernelRecord:
            fields = self.reader._fields(run, [real_s], [cpu_s], [merged])
            return self.reader._made(fields, index, self.path)

        self.builder.add_values(signature, (*values, *params.values()), record)

    def _key(self, base: str, params: dict[str, str | float]) -> str:
        """``bench_key(base, params, ...)``, the name's part made once per name."""
        prefix = self.prefixes.get(base)
        if prefix is None:
            prefix = self.prefixes[base] = bench_key(base, {}, self.reader.options.keys)
        if not params:
            return prefix
        return f"{prefix}[{','.join(f'{k}={key_value(v)}' for k, v in sorted(params.items()))}]"


def _counters(entry: dict[str, Any]) -> dict[str, float]:
    """The user counters of a plain entry (``gbench_json._counters`` for plain numbers)."""
    counters: dict[str, float] = {}
    for key, value in entry.items():
        if key in _FIELDS:
            continue
        kind = type(value)
        if kind is float or kind is int:
            if value < 0 and is_work(key):  # the record path names the field
                raise NotBatchable(f"work counter {key!r} is negative")
            counters[key] = float(value)
        elif kind is bool or key.endswith("_per_second") or _counted(key):
            raise NotBatchable(f"counter {key!r} is no plain number")
    return counters


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


_ONE_REPETITION = _reported("real_time", "median of 1 repetition(s) of real_time per iteration")
