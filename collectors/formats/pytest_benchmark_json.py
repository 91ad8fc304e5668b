"""pytest-benchmark ``--benchmark-json`` output.

One KernelRecord per benchmark. ``duration_s`` is the **median** time of one call (robust
against outlier rounds; pytest-benchmark reports per-call statistics in seconds), and
``samples_s`` are the per-round times of ``stats.data`` when ``--benchmark-save-data`` kept
them. ``params`` (from ``@pytest.mark.parametrize``) are part of the identity key.
``extra_info`` numbers are counters; ``flops_<precision>`` and ``bytes_<tier>`` entries are
the reported FLOPs and bytes of one call. ``machine_info`` and ``commit_info`` fill the
run's device, commit, branch and tools.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from collectors.base import Collector
from collectors.formats._micro import (
    bench_key,
    check_unique,
    device_name,
    kernel_record,
    number,
    numeric_or_text,
    optional,
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

_PARAMETRIZED = re.compile(r"^(.*?)\[.*\]$")


def _samples(
    stats: Mapping[str, Any], path: Path, row: str
) -> tuple[tuple[float, ...], str | None]:
    """Per-round times, or a note when the list was edited (a text marker among numbers)."""
    data = stats.get("data")
    if not isinstance(data, list) or not data:
        return (), None
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in data):
        rounds = tuple(number(v, path, row, "stats.data") for v in data)
        for index, seconds in enumerate(rounds):
            what = f"one of {len(rounds)} rounds"
            check_sample(seconds, str(path), row, f"stats.data[{index}]", what)
        return rounds, None
    return (), f"{row}: stats.data holds non-numeric entries (edited or elided); samples not kept"


def _work(
    extra: Mapping[str, float],
) -> tuple[dict[str, float], dict[str, float], dict[str, Provenance]]:
    flops: dict[str, float] = {}
    nbytes: dict[str, float] = {}
    provenance: dict[str, Provenance] = {}
    for name, value in extra.items():
        slot = work_slot(name)
        if slot is not None:
            kind, which = slot
            (flops if kind == "flops" else nbytes)[which] = value
            provenance[f"{kind}.{which}"] = _reported(name)
    return flops, nbytes, provenance


def _reported(name: str) -> Provenance:
    return Provenance(
        kind=ProvenanceKind.REPORTED,
        metrics=(f"extra_info.{name}",),
        note="pytest-benchmark extra_info, per call",
    )


class PytestBenchmarkJson(Collector):
    """pytest-benchmark JSON: one KernelRecord per benchmark, rounds as samples."""

    name = "pytest-benchmark-json"
    description = "pytest-benchmark JSON: one record per benchmark, rounds as samples"
    example = "pytest --benchmark-json=run.json --benchmark-save-data"
    suffixes = (".json",)
    priority = 5

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """A JSON object with pytest-benchmark's ``machine_info`` or ``stats`` blocks."""
        return (
            head.lstrip().startswith(b"{")
            and b'"benchmarks"' in head
            and (b'"machine_info"' in head or b'"stats"' in head)
        )

    def parse(self, path: Path) -> RunRecord:
        """Read every benchmark; see the module docstring for what is kept."""
        root = read_json(path)
        entries = require(root, "benchmarks", list, path, None)
        notes: list[str] = []
        kernels = [self._kernel(i, e, path, notes) for i, e in enumerate(entries)]
        kernels = self._apart(kernels, entries, path)
        commit = optional(root, "commit_info", dict, path, None) or {}
        machine = optional(root, "machine_info", dict, path, None) or {}
        when = timestamp(root.get("datetime"))
        return RunRecord(
            **({"timestamp": when} if when else {}),
            commit=text(commit.get("id")),
            branch=text(commit.get("branch")),
            device=self._device(machine),
            profiler=ProfilerInfo(tool="pytest-benchmark", version=text(root.get("version"))),
            tools=_tools(machine, commit),
            kernels=check_unique(kernels, path),
            notes=tuple(notes),
            sources=(SourceRef(path=str(path), format=self.name),),
        )

    def _apart(
        self, kernels: list[KernelRecord], entries: list[Any], path: Path
    ) -> list[KernelRecord]:
        """Tests whose keys clash, named and keyed by their ``fullname`` (``module::test``).

        pytest-benchmark tells ``test_forward`` of two modules apart by it. Only where keys
        clash do name and key change, so the keys of every other file stay as stored.
        """
        counts = Counter(kernel.key for kernel in kernels)
        if all(count == 1 for count in counts.values()):
            return kernels
        out = []
        for index, (kernel, entry) in enumerate(zip(kernels, entries, strict=True)):
            row = kernel.source.row if kernel.source else f"benchmarks[{index}]"
            full = optional(entry, "fullname", str, path, row) if counts[kernel.key] > 1 else None
            if full and full.strip():
                base = _PARAMETRIZED.sub(r"\1", full) if kernel.params else full
                key = bench_key(base, kernel.params, self.options.keys)
                kernel = kernel.model_copy(update={"name": base, "key": key})
            out.append(kernel)
        return out

    def _device(self, machine: Mapping[str, Any]) -> DeviceInfo:
        named = device_name(machine)
        if named:
            return DeviceInfo(name=named)
        raw_cpu = machine.get("cpu")
        cpu = raw_cpu if isinstance(raw_cpu, Mapping) else {}
        fallback = cpu.get("brand_raw") or cpu.get("brand") or machine.get("node") or "unknown"
        return DeviceInfo(name=self.options.device or str(fallback))

    def _kernel(self, index: int, entry: Any, path: Path, notes: list[str]) -> KernelRecord:
        row = f"benchmarks[{index}]"
        name = require(entry, "name", str, path, row)
        row = f"{row} ({name})"
        stats = require(entry, "stats", dict, path, row)
        samples, note = _samples(stats, path, row)
        notes.extend([note] if note else [])
        extra = _extra_info(entry, path, row)
        flops, nbytes, provenance = _work(extra)
        provenance["duration"] = Provenance(
            kind=ProvenanceKind.REPORTED,
            metrics=("stats.median",),
            note=f"median of {stats.get('rounds', '?')} rounds, per call",
        )
        raw_params = optional(entry, "params", dict, path, row) or {}
        params = {str(k): numeric_or_text(v) for k, v in raw_params.items()}
        base = _PARAMETRIZED.sub(r"\1", name) if params else name
        return kernel_record(
            path,
            row,
            name=base,
            key=bench_key(base, params, self.options.keys),
            launches=1,
            duration_s=number(
                require(stats, "median", (int, float), path, row), path, row, "stats.median"
            ),
            samples_s=samples,
            flops=flops,
            bytes=nbytes,
            provenance=provenance,
            params=params,
            counters={**extra, **_summary(stats, path, row)},
            missing=_missing(extra, flops, nbytes),
            source=SourceRef(path=str(path), row=row, format=self.name),
        )


def _extra_info(entry: Mapping[str, Any], path: Path, row: str) -> dict[str, float]:
    """The numbers of ``extra_info`` (an object of anything a test chose to record).

    Work (``flops_<precision>``, ``bytes_<tier>``) must be a non-negative number, and an
    error names it as the file does (``extra_info.bytes_dram``); null is no work recorded.
    Other entries may be text.
    """
    extra = optional(entry, "extra_info", dict, path, row) or {}
    return {
        str(k): number(v, path, row, f"extra_info.{k}", signed=work_slot(str(k)) is None)
        for k, v in extra.items()
        if (isinstance(v, int | float) and not isinstance(v, bool))
        or (v is not None and work_slot(str(k)))
    }


def _summary(stats: Mapping[str, Any], path: Path, row: str) -> dict[str, float]:
    summary = ("mean", "min", "max", "stddev", "ops")
    return {
        f"stats_{k}": number(stats[k], path, row, f"stats.{k}", signed=True)
        for k in summary
        if isinstance(stats.get(k), int | float) and not isinstance(stats.get(k), bool)
    }


def _missing(
    extra: Mapping[str, float], flops: Mapping[str, float], nbytes: Mapping[str, float]
) -> tuple[str, ...]:
    unread = [why for name in extra if (why := unread_work(name, "extra_info "))]
    missing = [] if flops else ["flops: no extra_info flops_<precision> (declare a work model)"]
    return tuple(unread + missing + ([] if nbytes else ["bytes: no extra_info bytes_<tier>"]))


def _tools(machine: Mapping[str, Any], commit: Mapping[str, Any]) -> dict[str, str]:
    keys = ("python_version", "python_implementation", "system", "node")
    tools = {k: str(machine[k]) for k in keys if machine.get(k)}
    if commit.get("project"):
        tools["project"] = str(commit["project"])
    if "dirty" in commit:
        tools["commit_dirty"] = str(bool(commit["dirty"])).lower()
    return tools
