"""What the three nvbench outputs (JSON, ``--csv``, markdown) share once normalised.

A state (one benchmark at one point of its axes, on one device) becomes one KernelRecord:
its axis values are ``params`` and part of the identity key; ``duration_s`` is nvbench's
primary statistic, the **mean** isolated (cold) GPU time measured with CUDA events (nvbench
reports no median); global-memory bytes become ``bytes["dram"]`` with provenance
``reported``. A RunRecord holds one device, so states of other devices are listed in the
run's notes, not ingested (pick one with ``CollectOptions.device``; else the first device the
file's states name, skipped ones too). A state without GPU time in a file whose other
states have one is left out with a note rather than read as CPU time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collectors.errors import MalformedReport
from collectors.formats._micro import bench_key, kernel_record, number
from collectors.identity import KeyOptions
from collectors.safety import check_sample
from collectors.schema import DeviceInfo, KernelRecord, Provenance, ProvenanceKind, SourceRef

GPU_MEAN = "nv/cold/time/gpu/mean"
CPU_MEAN = "nv/cold/time/cpu/mean"
BATCH_MEAN = "nv/batch/time/gpu/mean"
GLOBAL_BW = "nv/cold/bw/global/bytes_per_second"
#: Achieved over peak global-memory bandwidth (nvbench's ``BWUtil``, a fraction).
GLOBAL_UTILIZATION = "nv/cold/bw/global/utilization"
SAMPLES = "nv/cold/sample_size"
#: Relative agreement under which nvbench's named read/write sizes are taken as the total.
_AGREE = 0.005

#: Display names of older schemas (and column titles) -> the 1.0.0 tags.
DISPLAY_TAGS = {
    "Average GPU Time (Cold)": GPU_MEAN,
    "Average CPU Time (Cold)": CPU_MEAN,
    "GPU Relative Standard Deviation (Cold)": "nv/cold/time/gpu/stdev/relative",
    "CPU Relative Standard Deviation (Cold)": "nv/cold/time/cpu/stdev/relative",
    "Number of Samples (Cold)": SAMPLES,
    "Number of Trials (Cold)": SAMPLES,
    "Average GPU Time (Batch)": BATCH_MEAN,
    "Number of Samples (Batch)": "nv/batch/sample_size",
    "Number of Trials (Batch)": "nv/batch/sample_size",
    "Average Global Memory Throughput": GLOBAL_BW,
    "Percent Peak Global Memory Throughput": GLOBAL_UTILIZATION,
    "Element Throughput": "nv/cold/bw/item_rate",
}
#: Prefixes of older display names -> tag prefixes (the short name follows).
DISPLAY_PREFIXES = {
    "Element count:": "nv/element_count/",
    "Input Buffer Size:": "nv/gmem/reads/",
    "Output Buffer Size:": "nv/gmem/writes/",
}
#: Counters kept for work models, by tag: the name they get.
_COUNTER_TAGS = {SAMPLES: "samples", CPU_MEAN: "cpu_time_s", BATCH_MEAN: "batch_gpu_time_s"}


@dataclass
class State:
    """One nvbench state, normalised across output formats.

    Attributes:
        bench: Benchmark name.
        name: State name as nvbench prints it ("Device=0 T=F32").
        device: Device index.
        params: Axis values (numbers where numeric).
        summaries: Numeric summaries by 1.0.0 tag.
        named: Named counters: element counts and global-memory read/write sizes.
        gmem: The subset of ``named`` that are global-memory read/write sizes, in bytes.
        samples: Per-sample GPU times, when nvbench saved them.
        fields: What the file calls a summary, by tag, for errors (``GPU Time (sec)``).
    """

    bench: str
    name: str
    device: int | None
    params: dict[str, str | float]
    summaries: dict[str, float] = field(default_factory=dict)
    named: dict[str, float] = field(default_factory=dict)
    gmem: dict[str, float] = field(default_factory=dict)
    samples: tuple[float, ...] = ()
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def row(self) -> str:
        """Where the state is, for errors and SourceRef."""
        return f"{self.bench} [{self.name}]"

    def add(self, tag: str, short_name: str, value: float) -> None:
        """Record a numeric summary under its tag (and as a named counter when it is one)."""
        self.summaries[tag] = value
        for prefix in ("nv/element_count/", "nv/gmem/reads/", "nv/gmem/writes/"):
            if tag.startswith(prefix):
                name = tag[len(prefix) :] or short_name
                self.named[name] = value
                if prefix != "nv/element_count/":
                    self.gmem[name] = self.gmem.get(name, 0.0) + value


def display_tag(display: str, short_name: str | None) -> str:
    """The 1.0.0 tag for an older schema's display name (unknown names keep their text)."""
    if display in DISPLAY_TAGS:
        return DISPLAY_TAGS[display]
    for prefix, tag in DISPLAY_PREFIXES.items():
        if display.startswith(prefix):
            return tag + (short_name or display[len(prefix) :].strip())
    return display


def _duration(state: State, path: Path) -> tuple[float, Provenance]:
    if GPU_MEAN in state.summaries:
        note = "nvbench's primary statistic: mean isolated (cold) GPU time, CUDA events"
        return state.summaries[GPU_MEAN], Provenance(
            kind=ProvenanceKind.REPORTED, metrics=(GPU_MEAN,), note=note
        )
    if CPU_MEAN in state.summaries:
        note = "no GPU time in this state (CPU-only benchmark): mean isolated CPU time"
        return state.summaries[CPU_MEAN], Provenance(
            kind=ProvenanceKind.REPORTED, metrics=(CPU_MEAN,), note=note
        )
    raise MalformedReport(str(path), state.row, "GPU Time", "no GPU or CPU time in this state")


def dram_bytes(state: State, time_s: float) -> tuple[float, Provenance] | None:
    """Global-memory bytes nvbench counted (reads + writes) and how they were obtained.

    nvbench reports throughput = bytes / mean GPU time; multiplying back recovers its own
    total, which also includes reads and writes added without a column name. Where the
    named sizes add up to that total they are used as they are (exact integers).
    """
    explicit = sum(state.gmem.values())
    names = tuple(sorted(state.gmem))
    bandwidth = state.summaries.get(GLOBAL_BW)
    if bandwidth is not None and time_s > 0:
        recovered = bandwidth * time_s
        if state.gmem and abs(explicit - recovered) <= _AGREE * max(recovered, 1.0):
            return explicit, _gmem_provenance(names)
        note = "nvbench's global-memory byte count, recovered as throughput x mean GPU time"
        # past a float's range the product is infinite, which the record refuses by name
        whole = float(round(recovered)) if math.isfinite(recovered) else recovered
        return whole, Provenance(
            kind=ProvenanceKind.REPORTED, metrics=(GLOBAL_BW, GPU_MEAN), note=note
        )
    if state.gmem:
        return explicit, _gmem_provenance(names)
    return None


def _gmem_provenance(names: tuple[str, ...]) -> Provenance:
    note = "nvbench add_global_memory_reads/writes sizes, summed"
    return Provenance(kind=ProvenanceKind.REPORTED, metrics=names, note=note)


def kernel(state: State, path: Path, fmt: str, keys: KeyOptions) -> KernelRecord:
    """The KernelRecord of one state."""
    duration, time_prov = _duration(state, path)
    timed_by = time_prov.metrics[0]  # under the file's own name, as every other field
    what = "a kernel that ran (1 launch(es))"  # as ``safety`` words it, which named the tag
    check_sample(duration, str(path), state.row, state.fields.get(timed_by, timed_by), what)
    provenance = {"duration": time_prov}
    nbytes: dict[str, float] = {}
    found = dram_bytes(state, duration)
    if found is not None:
        nbytes["dram"], provenance["bytes.dram"] = found
    counters = dict(state.named)
    counters.update(
        {n: state.summaries[t] for t, n in _COUNTER_TAGS.items() if t in state.summaries}
    )
    missing = () if nbytes else ("bytes: the benchmark declares no global-memory reads/writes",)
    key = bench_key(state.bench, state.params, keys)
    return kernel_record(
        path,
        state.row,
        name=key if state.params else state.bench,  # the states of a sweep, told apart
        key=key,
        launches=1,
        duration_s=duration,
        samples_s=state.samples,
        bytes=nbytes,
        provenance=provenance,
        params=state.params,
        counters=counters,
        missing=("flops: nvbench does not count FLOPs", *missing),
        source=SourceRef(path=str(path), row=state.row, format=fmt),
    )


def choose_device(order: Iterable[int | None], names: Mapping[int, str], wanted: str | None) -> int:
    """The device to keep: the one named ``wanted``, else the first one the file's states name.

    ``order`` is the device of every state in file order, skipped states included: which
    states were skipped must not change the device a run is read as.
    """
    if wanted:
        for index, name in names.items():
            if name == wanted or str(index) == wanted:
                return index
    first = next((index for index in order if index is not None), None)
    return first if first is not None else next(iter(names), 0)


def gpu_timed(states: Iterable[State], file: Iterable[State]) -> tuple[list[State], list[str]]:
    """``states`` but those without GPU time where the ``file``'s other states have one; notes.

    Such a state (a damaged or edited file) would be read as CPU time and compared with a
    GPU-time baseline, so it is left out with a note naming it. A file of which no state has
    a GPU time (CPU-only benchmarks) is read as CPU time.
    """
    if not any(GPU_MEAN in s.summaries for s in file):
        return list(states), []
    kept: list[State] = []
    notes: list[str] = []
    for state in states:
        if GPU_MEAN in state.summaries:
            kept.append(state)
        else:
            notes.append(
                f"state {state.row} not ingested: no GPU time ({GPU_MEAN}) while the file's "
                "other states have one (its CPU time is no GPU time)"
            )
    return kept, notes


def other_device_notes(states: Iterable[State], chosen: int, names: Mapping[int, str]) -> list[str]:
    """One note per other device whose states were left out."""
    left: dict[int, int] = {}
    for state in states:
        if state.device is not None and state.device != chosen:
            left[state.device] = left.get(state.device, 0) + 1
    return [
        f"{count} state(s) measured on device {dev} ({names.get(dev, '?')}) not ingested: "
        f"a run holds one device (choose it with --device)"
        for dev, count in sorted(left.items())
    ]


def device_info(raw: Mapping[str, Any], fallback: str, path: Path, row: str) -> DeviceInfo:
    """DeviceInfo from an nvbench device section (JSON keys; the markdown parser maps to them).

    ``global_memory_bus_bandwidth`` is nvbench's peak global-memory bandwidth (bus width x
    memory clock): a report-derived DRAM roof. The SM clock is the *default* clock rate.
    A figure that is not a number is an error naming the device (``row``) and its key.
    """
    bandwidth = _figure(raw, "global_memory_bus_bandwidth", path, row)
    return DeviceInfo(
        name=str(raw.get("name") or fallback),
        compute_capability=_compute_capability(raw, path, row),
        sm_count=raw.get("number_of_sms"),
        sm_clock_hz=_figure(raw, "sm_default_clock_rate", path, row),
        memory_clock_hz=_figure(raw, "global_memory_bus_peak_clock_rate", path, row),
        bandwidth_byte_per_s={"dram": bandwidth} if bandwidth else {},
    )


def implied_bus_bandwidth(states: Iterable[State]) -> float | None:
    """The peak global-memory bandwidth the states imply: ``GlobalMem BW / BWUtil``.

    nvbench computes ``BWUtil`` against its device's bus peak (bus width x memory clock), the
    figure its JSON and markdown print in the device section; ``--csv`` has no device section,
    so the peak is read back from the rows. None when no state has both, or when they
    disagree by more than ``_AGREE`` (an edited file: no roof is made up).
    """
    implied = sorted(
        s.summaries[GLOBAL_BW] / s.summaries[GLOBAL_UTILIZATION]
        for s in states
        if s.summaries.get(GLOBAL_BW, 0.0) > 0 and s.summaries.get(GLOBAL_UTILIZATION, 0.0) > 0
    )
    if not implied or implied[-1] > implied[0] * (1 + _AGREE):
        return None
    return implied[len(implied) // 2]


def _figure(raw: Mapping[str, Any], key: str, path: Path, row: str) -> float | None:
    value = raw.get(key)
    return None if value is None else number(value, path, row, key)


def _compute_capability(raw: Mapping[str, Any], path: Path, row: str) -> str | None:
    """``"7.5"`` from nvbench's ``sm_version`` 750 (None when absent or 0)."""
    sm_version = _figure(raw, "sm_version", path, row)
    if not sm_version:
        return None
    if not sm_version.is_integer() or sm_version >= 10_000:
        reason = f"not an SM version (nvbench writes 900 for sm_90): {sm_version:g}"
        raise MalformedReport(str(path), row, "sm_version", reason)
    whole = int(sm_version)
    return f"{whole // 100}.{whole % 100 // 10}"


#: Column titles of nvbench's ``--csv`` and markdown tables -> tags ("Samples" and "Noise"
#: repeat and are resolved by position in ``column_tags``).
_COLUMN_TAGS = {
    "GPU Time": GPU_MEAN,
    "CPU Time": CPU_MEAN,
    "Batch GPU": BATCH_MEAN,
    "GlobalMem BW": GLOBAL_BW,
    "BWUtil": GLOBAL_UTILIZATION,
    "Elem/s": "nv/cold/bw/item_rate",
}
_NOISE = {CPU_MEAN: "nv/cold/time/cpu/stdev/relative", GPU_MEAN: "nv/cold/time/gpu/stdev/relative"}


def column_base(title: str) -> str:
    """``"GPU Time (sec)"`` -> ``"GPU Time"``."""
    base, _, _ = title.partition(" (")
    return base.strip()


def column_tags(titles: list[str]) -> list[str]:
    """The tag of each summary column; user summaries keep their title (no ``nv/`` prefix).

    The first "Samples" is the cold sample count, the second the batch one; a "Noise" is the
    relative deviation of the time column before it.
    """
    tags: list[str] = []
    samples_seen = 0
    last_time: str | None = None
    for title in titles:
        base = column_base(title)
        if base == "Samples":
            tags.append(SAMPLES if samples_seen == 0 else "nv/batch/sample_size")
            samples_seen += 1
        elif base == "Noise":
            tags.append(_NOISE.get(last_time or "", f"noise after {last_time}"))
        elif base in _COLUMN_TAGS:
            tags.append(_COLUMN_TAGS[base])
            last_time = _COLUMN_TAGS[base] if base.endswith("Time") else last_time
        else:
            tags.append(base)
    return tags


def add_column(state: State, tag: str, value: float, *, is_bytes: bool) -> None:
    """Record one table cell: a known tag, a global-memory size, or a named counter."""
    if tag.startswith("nv/"):
        state.add(tag, tag, value)
        return
    state.named[tag] = value
    if is_bytes:
        state.gmem[tag] = value
