"""NVIDIA nvbench ``--json`` output, in the three schema generations found in the wild.

* 2021-03: ``states`` is a list, ``summaries`` a list of ``{name, values: [{name, type,
  value}]}`` with JSON numbers, skipped states have ``"summaries": null``;
* 2021-12: no ``meta``; ``states`` is an object keyed by state name, ``summaries`` an object
  keyed by display name ("Average GPU Time (Cold)"), values typed strings;
* 1.0.0: ``meta`` (argv, versions), ``states`` a list, ``summaries`` a list with a ``tag``
  (``nv/cold/time/gpu/mean`` ...) and ``data: [{name, type, value}]``.

All three are normalised to 1.0.0 tags (see ``_nvbench``). Per-sample times are read from
the binary file a 1.0.0 ``nv/cold/sample_times`` summary names, when it sits beside the JSON.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from collectors.base import Collector
from collectors.errors import MalformedReport
from collectors.formats import _nvbench
from collectors.formats._micro import (
    by_id,
    check_unique,
    mapping,
    number,
    numeric_or_text,
    optional,
    read_json,
    require,
)
from collectors.schema import ProfilerInfo, RunRecord, SourceRef

_SAMPLE_TIMES = "nv/cold/sample_times"
_NUMERIC = {"int64", "float64", "int32", "float32"}


def _dig(obj: Any, *keys: str) -> Any:
    """``obj[k1][k2]...``, or None where a level is missing or not an object."""
    for key in keys:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj


def _generation(root: Mapping[str, Any]) -> str:
    meta = root.get("meta")
    if isinstance(meta, Mapping):
        return str(_dig(meta, "version", "json", "string") or "1.0.0")
    for bench in root.get("benchmarks") or []:
        if isinstance(bench, Mapping) and isinstance(bench.get("states"), Mapping):
            return "2021-12"
    return "2021-03"


def _typed(entries: Any, path: Path, row: str, field: str) -> dict[str, tuple[str, Any]]:
    """``[{name, type, value}, ...]`` -> ``{name: (type, value)}``."""
    if not isinstance(entries, list):
        raise MalformedReport(str(path), row, field, "expected a list of {name, type, value}")
    out: dict[str, tuple[str, Any]] = {}
    for entry in entries:
        name = require(entry, "name", str, path, row)
        out[name] = (
            str(optional(entry, "type", str, path, row, f"{field}.type") or ""),
            entry.get("value"),
        )
    return out


def _summaries(raw: Any, path: Path, row: str) -> Iterator[tuple[str, str, tuple[str, Any]]]:
    """Every summary as ``(tag, short name, (type, value))`` whatever the generation.

    Older generations name a summary by its display name, which an error names (``_named``).
    """
    if isinstance(raw, Mapping):  # 2021-12: keyed by display name, fields are {type, value}
        yield from _keyed_summaries(raw, path, row)
        return
    if not isinstance(raw, list):
        raise MalformedReport(str(path), row, "summaries", "expected a list or an object")
    for summary in raw:
        if "tag" in mapping(summary, path, row, "summaries"):  # 1.0.0
            tag = require(summary, "tag", str, path, row)
            data = _typed(summary.get("data"), path, row, f"summaries[{tag}].data")
            yield tag, str(summary.get("name", "")), data.get("value", ("", None))
            if tag == _SAMPLE_TIMES:
                yield _SAMPLE_TIMES, "filename", data.get("filename", ("", None))
        else:  # 2021-03: {name, values: [...]}
            display = require(summary, "name", str, path, row)
            values = _typed(summary.get("values"), path, row, f"summaries[{display}].values")
            short = str(values.get("short_name", ("", display))[1])
            yield _nvbench.display_tag(display, short), short, values.get("value", ("", None))


def _keyed_summaries(
    raw: Mapping[str, Any], path: Path, row: str
) -> Iterator[tuple[str, str, tuple[str, Any]]]:
    """2021-12 summaries: ``{display: {short_name: {value}, value: {type, value}}}``."""
    for display, fields in raw.items():
        where = f"summaries[{display}]"
        entry = mapping(fields, path, row, where)
        short = str(_dig(entry, "short_name", "value") or display)
        value = mapping(entry.get("value") or {}, path, row, f"{where}.value")
        kind = optional(value, "type", str, path, row, f"{where}.value.type") or ""
        yield _nvbench.display_tag(display, short), short, (kind, value.get("value"))


def _named(raw: Any, tag: str) -> str:
    """What the file calls the summary of ``tag``: its 1.0.0 tag, else its display name."""
    names = raw if isinstance(raw, Mapping) else {}
    if isinstance(raw, list):
        names = {s.get("name"): s for s in raw if isinstance(s, Mapping) and "tag" not in s}
    return next((str(d) for d in names if _nvbench.DISPLAY_TAGS.get(str(d)) == tag), tag)


def _axis_values(raw: Any, path: Path, row: str) -> dict[str, str | float]:
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        raw = [
            {"name": k, **(v if isinstance(v, Mapping) else {"value": v})} for k, v in raw.items()
        ]
    typed = _typed(raw, path, row, "axis_values")
    return {
        name: numeric_or_text(value) if kind != "string" else str(value)
        for name, (kind, value) in typed.items()
    }


def _read_samples(json_path: Path, filename: Any, row: str) -> tuple[float, ...]:
    """float32 little-endian sample times nvbench wrote beside the JSON (empty when absent)."""
    if not isinstance(filename, str):
        return ()
    sample_path = json_path.parent / filename
    if not sample_path.is_file():
        return ()
    blob = sample_path.read_bytes()
    if len(blob) % 4:
        raise MalformedReport(str(sample_path), row, _SAMPLE_TIMES, "not a whole number of float32")
    return tuple(float(v) for v in struct.unpack(f"<{len(blob) // 4}f", blob))


def _state(bench: str, name: str, raw: Any, path: Path) -> _nvbench.State:
    row = f"{bench} [{name}]"
    raw = mapping(raw, path, row)
    state = _nvbench.State(
        bench=bench,
        name=name,
        device=optional(raw, "device", int, path, row),
        params=_axis_values(raw.get("axis_values"), path, row),
    )
    for tag, short, (kind, value) in _summaries(raw.get("summaries"), path, row):
        if tag in (_nvbench.GPU_MEAN, _nvbench.CPU_MEAN):  # a time: an error may name it
            state.fields[tag] = f"summaries[{_named(raw.get('summaries'), tag)}]"
        if tag == _SAMPLE_TIMES and short == "filename":
            state.samples = _read_samples(path, value, row)
        elif kind in _NUMERIC or (isinstance(value, int | float) and not isinstance(value, bool)):
            state.add(tag, short, number(value, path, row, short or tag))
    return state


def _skip_reason(raw: Any, path: Path, row: str) -> str | None:
    raw = mapping(raw, path, row)
    if raw.get("is_skipped") or (raw.get("summaries") is None and raw.get("skip_reason")):
        return str(raw.get("skip_reason") or "no reason given")
    return None


class NvbenchJson(Collector):
    """nvbench ``--json`` output: one KernelRecord per state, skipped states in the notes."""

    name = "nvbench-json"
    description = "nvbench --json output (2021-03, 2021-12 and 1.0.0 schemas): one record per state"
    example = "./bench --json run.json"
    suffixes = (".json",)
    priority = 5

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """A JSON object with ``benchmarks`` and nvbench's device or state keys."""
        markers = (b'"sm_version"', b'"axis_values"', b'"number_of_sms"', b'"is_skipped"')
        return (
            head.lstrip().startswith(b"{")
            and b'"benchmarks"' in head
            and any(m in head for m in markers)
        )

    def parse(self, path: Path) -> RunRecord:
        """Read every benchmark state; see the module docstring for the schemas."""
        root = read_json(path)
        benches = require(root, "benchmarks", list, path, None)
        devices = by_id(require(root, "devices", list, path, None), path, "devices")
        names = {i: str(d.get("name", "")) for i, d in devices.items()}
        states, notes, order = self._states(benches, path)
        chosen = _nvbench.choose_device(order, names, self.options.device)
        here = [s for s in states if s.device in (None, chosen)]
        kept, untimed = _nvbench.gpu_timed(here, states)
        kernels = [_nvbench.kernel(s, path, self.name, self.options.keys) for s in kept]
        notes = untimed + notes + _nvbench.other_device_notes(states, chosen, names)
        meta = optional(root, "meta", dict, path, None) or {}
        argv = optional(meta, "argv", list, path, "meta")
        return RunRecord(
            device=_nvbench.device_info(
                devices.get(chosen, {}), self.options.device or "unknown", path, f"device {chosen}"
            ),
            profiler=ProfilerInfo(
                tool="nvbench",
                version=_text(_dig(meta, "version", "nvbench", "string")),
                command_line=" ".join(map(str, argv)) if argv else None,
            ),
            tools={"nvbench-json-schema": _generation(root)},
            kernels=check_unique(kernels, path),
            notes=tuple(notes),
            sources=(SourceRef(path=str(path), format=self.name),),
        )

    def _states(
        self, benches: list[Any], path: Path
    ) -> tuple[list[_nvbench.State], list[str], list[int | None]]:
        """The states that ran, notes for the skipped ones, and every state's device in order."""
        states: list[_nvbench.State] = []
        notes: list[str] = []
        order: list[int | None] = []
        for index, bench in enumerate(benches):
            bench_name = require(bench, "name", str, path, f"benchmarks[{index}]")
            raw_states = require(bench, "states", (list, dict), path, bench_name)
            items = (
                list(raw_states.items())
                if isinstance(raw_states, dict)
                else [
                    (str(_dig(s, "name") or _dig(s, "description") or i), s)
                    for i, s in enumerate(raw_states)
                ]
            )
            for state_name, raw in items:
                row = f"{bench_name} [{state_name}]"
                reason = _skip_reason(raw, path, row)
                order.append(optional(raw, "device", int, path, row))
                if reason is not None:
                    notes.append(f"skipped state {row}: {reason}")
                else:
                    states.append(_state(bench_name, state_name, raw, path))
        return states, notes, order


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
