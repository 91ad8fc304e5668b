"""Google Benchmark ``--benchmark_format=json`` (2016, 2019 and ``json_schema_version`` 1 schemas).

One KernelRecord per benchmark run name, named as Google Benchmark prints it
(``BM_copy/1024/real_time``: instances of one benchmark differ in their arguments) and keyed
by its base name and arguments (``BM_copy[arg0=1024]``). Its per-repetition entries
(``run_type`` iteration, or no ``run_type`` in the 2016 schema) are kept as ``samples_s``;
``duration_s`` is their **median** (robust to the odd slow repetition; with one repetition,
that repetition's time).
Aggregates (mean, median, stddev, cv, BigO, RMS) are not counted again; only when a run has
no repetition entries (``--benchmark_report_aggregates_only``) is its median (else mean)
aggregate used. Times are ``real_time`` in ``time_unit`` per iteration, which is the manual
(e.g. CUDA event) time for benchmarks that use ``UseManualTime``; ``cpu_time`` is kept as a
counter. Rate counters (``bytes_per_second``, ``items_per_second``) are turned back into
per-iteration amounts with the time Google Benchmark divided by (real time for
``/real_time`` and ``/manual_time`` runs, else CPU time).

User counters named ``flops_<precision>`` or ``bytes_<tier>`` (per iteration) become reported
FLOPs or bytes; ``bytes_per_second`` (``SetBytesProcessed``) becomes DRAM bytes. Any other
numeric counter is kept in ``counters`` for work models.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from collectors.base import Collector
from collectors.batch import RunColumns
from collectors.errors import MalformedReport, shown
from collectors.formats._micro import (
    BYTE_COUNTER,
    FLOP_COUNTER,
    bench_key,
    check_unique,
    device_name,
    kernel_record,
    median,
    number,
    numeric_or_text,
    optional,
    per_second,
    read_json,
    require,
    text,
    timestamp,
    unread_work,
    work_slot,
)
from collectors.safety import check_sample
from collectors.schema import (
    DeviceInfo,
    KernelRecord,
    ProfilerInfo,
    Provenance,
    ProvenanceKind,
    RunRecord,
    SourceRef,
)

#: Fields of an entry that are not user counters.
_FIELDS = {
    "name",
    "family_index",
    "per_family_instance_index",
    "run_name",
    "run_type",
    "repetitions",
    "repetition_index",
    "threads",
    "iterations",
    "real_time",
    "cpu_time",
    "time_unit",
    "aggregate_name",
    "aggregate_unit",
    "error_occurred",
    "error_message",
    "label",
    "skipped",
    "skip_message",
    "big_o",
    "rms",
    "cpu_coefficient",
    "real_coefficient",
    "complexity_n",
}
_MODIFIERS = re.compile(
    r"^(real_time|manual_time|process_time|(iterations|repeats|min_time|"
    r"min_warmup_time):.*)$"
)
_RATES = {"bytes_per_second": "bytes", "items_per_second": "items"}


def split_name(run_name: str) -> tuple[str, dict[str, str | float]]:
    """``BM_gemm/1024/512/threads:2/real_time`` -> ``("BM_gemm", {arg0, arg1, threads})``.

    Unnamed arguments become ``arg0, arg1 ...``; ``M:1024`` forms keep their name; timing
    modifiers (``real_time``, ``iterations:N`` ...) are not parameters.
    """
    base, *parts = run_name.split("/")
    params: dict[str, str | float] = {}
    position = 0
    for part in parts:
        if not part or _MODIFIERS.match(part):
            continue
        name, sep, value = part.partition(":")
        if sep:
            params[name] = numeric_or_text(value)
        else:
            params[f"arg{position}"] = numeric_or_text(part)
            position += 1
    return base, params


def apart(kernels: list[KernelRecord]) -> list[KernelRecord]:
    """Runs whose keys clash, told apart by their timing modifiers, as Google Benchmark does.

    Only on a clash (``BM_copy/1024/manual_time`` beside ``BM_copy/1024``) does a key gain
    them, ``BM_copy[arg0=1024]/manual_time``: other files key as stored; no modifier, no change.
    """
    counts = Counter(kernel.key for kernel in kernels)
    if all(count == 1 for count in counts.values()):
        return kernels
    out = []
    for kernel in kernels:
        suffix = "".join(f"/{p}" for p in kernel.name.split("/")[1:] if _MODIFIERS.match(p))
        if counts[kernel.key] > 1 and suffix:
            kernel = kernel.model_copy(update={"key": kernel.key + suffix})
        out.append(kernel)
    return out


def _group(entries: list[Any], path: Path) -> tuple[dict[str, list[tuple[int, Any]]], list[str]]:
    """Entries by run name: repetitions, or aggregates where a run has no repetition."""
    runs: dict[str, list[tuple[int, Any]]] = {}
    aggregates: dict[str, list[tuple[int, Any]]] = {}
    notes: list[str] = []
    for index, entry in enumerate(entries):
        name = require(entry, "name", str, path, f"benchmarks[{index}]")
        if entry.get("error_occurred") or entry.get("skipped"):
            reason = entry.get("error_message") or entry.get("skip_message") or "no reason given"
            notes.append(f"benchmark {name} not ingested: it reported an error or skip: {reason}")
            continue
        run = optional(entry, "run_name", str, path, f"benchmarks[{index}]") or name
        target = aggregates if entry.get("run_type") == "aggregate" else runs
        target.setdefault(run, []).append((index, entry))
    notes += _aggregate_notes(aggregates, runs)
    for run, aggs in aggregates.items():
        if run not in runs:
            chosen = _pick_aggregate(aggs)
            kinds = ", ".join(sorted(str(e.get("aggregate_name")) for _, e in aggs))
            if chosen is None:
                notes.append(f"{run} not ingested: only aggregates ({kinds}), none a time")
                continue
            runs[run] = [chosen]
            notes.append(
                f"{run}: only aggregates in the file; used its "
                f"{chosen[1].get('aggregate_name')} aggregate"
            )
    return runs, notes


def _aggregate_notes(aggregates: Mapping[str, list[Any]], runs: Mapping[str, Any]) -> list[str]:
    """What became of the aggregates: of runs with repetitions, and of runs with none."""
    summarised = sum(len(a) for run, a in aggregates.items() if run in runs)
    alone = {run: a for run, a in aggregates.items() if run not in runs}
    used = sum(_pick_aggregate(a) is not None for a in alone.values())
    notes = []
    if summarised:
        notes.append(
            f"{summarised} aggregate entries (mean, median, stddev ...) not counted again: "
            "the repetitions they summarise are kept"
        )
    if alone:
        notes.append(
            f"{sum(map(len, alone.values()))} aggregate entries of {len(alone)} run(s) with no "
            f"repetition entries: {used} used as their run's time (the median, else the mean), "
            "the others not counted"
        )
    return notes


def _pick_aggregate(aggs: list[tuple[int, Any]]) -> tuple[int, Any] | None:
    by_name = {str(e.get("aggregate_name")): (i, e) for i, e in aggs}
    return by_name.get("median") or by_name.get("mean")


class GoogleBenchmarkJson(Collector):
    """Google Benchmark JSON: one KernelRecord per run, repetitions as samples."""

    name = "gbench-json"
    description = "Google Benchmark JSON: one record per benchmark run, repetitions as samples"
    example = "./bench --benchmark_format=json --benchmark_repetitions=5 > run.json"
    suffixes = (".json",)
    priority = 5

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """A JSON object with Google Benchmark's ``context`` and timing keys."""
        return (
            head.lstrip().startswith(b"{")
            and b'"context"' in head
            and b'"benchmarks"' in head
            and any(m in head for m in (b'"real_time"', b'"time_unit"', b'"library_build_type"'))
        )

    def parse(self, path: Path) -> RunRecord:
        """Read every run; see the module docstring for what is kept."""
        root = read_json(path)
        context = require(root, "context", dict, path, None)
        entries = require(root, "benchmarks", list, path, None)
        runs, notes = _group(entries, path)
        entries.clear()  # the groups hold them now: each goes once its record is made
        kernels = [self._kernel(run, runs.pop(run), path) for run in list(runs)]
        return self._run(context, check_unique(apart(kernels), path), notes, path)

    def _run(
        self,
        context: dict[str, Any],
        kernels: tuple[KernelRecord, ...] | list[KernelRecord],
        notes: list[str],
        path: Path,
    ) -> RunRecord:
        when = timestamp(context.get("date"))
        return RunRecord(
            **({"timestamp": when} if when else {}),
            device=self._device(context),
            profiler=ProfilerInfo(
                tool="gbench",
                version=text(context.get("library_version")),
                command_line=text(context.get("executable")),
            ),
            tools={
                k: str(context[k])
                for k in ("library_build_type", "host_name", "json_schema_version")
                if k in context
            },
            kernels=tuple(kernels),
            notes=tuple(notes),
            sources=(SourceRef(path=str(path), format=self.name),),
        )

    def _device(self, context: Mapping[str, Any]) -> DeviceInfo:
        named = device_name(context)
        # the host name (in tools) is not a device
        return DeviceInfo(name=named or self.options.device or "unknown")

    def _kernel(self, run: str, reps: list[tuple[int, Any]], path: Path) -> KernelRecord:
        seen: dict[Any, int] = {}
        times, cpu_times, counters = [], [], []
        for index, entry in reps:
            row = f"benchmarks[{index}] ({run})"
            rep = optional(entry, "repetition_index", int, path, row)
            if rep in seen:
                raise MalformedReport(
                    str(path),
                    row,
                    "name",
                    f"duplicate benchmark {shown(run)} (also at benchmarks[{seen[rep]}])",
                )
            seen[rep] = index
            real, cpu = _times(entry, path, row)
            if len(reps) > 1:  # one alone is the kernel's time: ``safety`` refuses it as such
                check_sample(real, str(path), row, "real_time", f"one of {len(reps)} repetitions")
            times.append(real)
            cpu_times.append(cpu)
            counters.append(_counters(entry, path, row))
        return self._record(run, reps[0][0], times, cpu_times, counters, path)

    def _record(
        self,
        run: str,
        first: int,
        times: list[float],
        cpu_times: list[float],
        counters: list[dict[str, float]],
        path: Path,
    ) -> KernelRecord:
        fields = self._fields(run, times, cpu_times, counters)
        return self._made(fields, first, path)

    def _made(self, fields: dict[str, Any], first: int, path: Path) -> KernelRecord:
        """The record of ``_fields``' kernel, first read at entry ``first``."""
        row = f"benchmarks[{first}]"
        source = SourceRef(path=str(path), row=row, format=self.name)
        return kernel_record(path, row, **fields, source=source)

    def _fields(
        self,
        run: str,
        times: list[float],
        cpu_times: list[float],
        counters: list[dict[str, float]],
    ) -> dict[str, Any]:
        """A kernel's record fields but its source (``KernelRecord`` keyword arguments)."""
        base, params = split_name(run)
        duration = median(times)
        per_rate_time = (
            duration if ("/real_time" in run or "/manual_time" in run) else median(cpu_times)
        )
        names = dict.fromkeys(k for c in counters for k in c)  # once each: linear in repetitions
        merged = {k: median(c[k] for c in counters if k in c) for k in names}
        merged["cpu_time_s"] = median(cpu_times)
        for rate, amount in _RATES.items():
            if rate in merged:
                merged[amount] = _whole(merged[rate] * per_rate_time)
        flops, nbytes, provenance, missing = _work(merged)
        provenance["duration"] = _reported(
            "real_time", f"median of {len(times)} repetition(s) of real_time per iteration"
        )
        return {
            "name": run,  # as Google Benchmark prints it: BM_copy/1024 and BM_copy/4096 apart
            "key": bench_key(base, params, self.options.keys),
            "launches": 1,
            "duration_s": duration,
            "samples_s": tuple(times) if len(times) > 1 else (),
            "flops": flops,
            "bytes": nbytes,
            "provenance": provenance,
            "params": params,
            "counters": merged,
            "missing": tuple(missing),
        }

    def parse_columns(self, path: Path) -> RunColumns:
        """The run as columns (``collectors.formats.gbench_columns``)."""
        from collectors.formats.gbench_columns import read_columns

        return read_columns(self, path)


def _whole(amount: float) -> float:
    """Bytes and items are whole numbers: undo the float noise of rate x time."""
    if not math.isfinite(amount):  # rate x time past a float's range: the record refuses it
        return amount
    nearest = round(amount)
    return float(nearest) if abs(amount - nearest) <= 1e-6 * max(1.0, amount) else amount


def _times(entry: Mapping[str, Any], path: Path, row: str) -> tuple[float, float]:
    """Real and CPU time of one entry in seconds (CPU time defaults to real time)."""
    scale = per_second(require(entry, "time_unit", str, path, row), path, row)
    real = number(require(entry, "real_time", (int, float), path, row), path, row, "real_time")
    cpu = entry.get("cpu_time")
    cpu_s = number(cpu, path, row, "cpu_time") / scale if cpu is not None else real / scale
    return real / scale, cpu_s


def _counters(entry: Mapping[str, Any], path: Path, row: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in entry.items():
        if key in _FIELDS:  # the library's own fields: no counter, no pattern to match
            continue
        must_be_number = key in _RATES or FLOP_COUNTER.match(key) or BYTE_COUNTER.match(key)
        if not must_be_number and not isinstance(value, int | float):
            continue  # text fields newer library versions may add
        out[key] = number(value, path, row, key, signed=not is_work(key))
    return out


def is_work(counter: str) -> bool:
    """Whether ``counter`` carries work the roofline uses, which no run can make negative.

    ``bytes_per_second`` and the known ``flops_<precision>``/``bytes_<tier>`` counters; any
    other user counter may be negative (a delta, an error, a temperature).
    """
    return counter == "bytes_per_second" or work_slot(counter) is not None


def _work(
    counters: Mapping[str, float],
) -> tuple[dict[str, float], dict[str, float], dict[str, Provenance], list[str]]:
    flops: dict[str, float] = {}
    nbytes: dict[str, float] = {}
    provenance: dict[str, Provenance] = {}
    for name, value in counters.items():
        slot = work_slot(name)
        if slot is not None:  # never negative (``is_work``)
            kind, which = slot
            (flops if kind == "flops" else nbytes)[which] = value
            provenance[f"{kind}.{which}"] = _reported(name, "user counter, per iteration")
    if "dram" not in nbytes and "bytes" in counters:
        nbytes["dram"] = counters["bytes"]
        provenance["bytes.dram"] = _reported(
            "bytes_per_second", "SetBytesProcessed: bytes_per_second x the time it was divided by"
        )
    unread = [why for why in map(unread_work, counters) if why]  # first: the likeliest cause
    missing = [] if flops else ["flops: no flops_<precision> counter (declare a work model)"]
    missing += [] if nbytes else ["bytes: no bytes counter"]
    return flops, nbytes, provenance, unread + missing


@cache  # a frozen record, the same for every benchmark that reports this counter
def _reported(metric: str, note: str) -> Provenance:
    return Provenance(kind=ProvenanceKind.REPORTED, metrics=(metric,), note=note)
