"""PyTorch profiler (Kineto) Chrome traces: ``torch.profiler`` ``export_chrome_trace`` JSON.

GPU activity events (``ph: X``) carry ``dur`` in microseconds. Kernel events (``cat:
kernel``) become KernelRecords aggregated by identity key, like a profiler report: ``launches``
is the number of launches, ``duration_s`` their total and ``samples_s`` each launch's time.
Grid and block are kept when every launch agrees. Device-to-device copies and memsets are
kept too, with the bytes the trace reports as a DRAM proxy: a copy reads and writes each
byte (2 x bytes), a memset writes it (1 x bytes); an L2-resident copy moves less DRAM.
Host<->device copies measure PCIe, not the device roofline, and are listed in the notes.
An event of ``dur`` 0 ran shorter than the trace's resolution: it is counted in
``failed_launches`` (profiled, no usable time), not averaged in. A run holds one device (the
one ``--device`` names, else the first kernel's): GPU events of other devices are counted in
the notes, not ingested, as nvbench's states of other devices are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collectors.base import Collector
from collectors.formats._micro import (
    by_id,
    check_unique,
    kernel_record,
    number,
    optional,
    read_json,
    require,
    text,
)
from collectors.identity import make_key
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

_US_PER_S = 1e6
#: The trace categories of GPU activity roofguard reads.
_GPU_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})


@dataclass
class _Group:
    """Launches of one identity key."""

    name: str
    first: int
    times: list[float] = field(default_factory=list)
    grids: set[str] = field(default_factory=set)
    blocks: set[str] = field(default_factory=set)
    dram_bytes: float = 0.0
    byte_factor: float = 0.0
    untimed: int = 0


def _dims(value: Any) -> str | None:
    if isinstance(value, list) and value and all(isinstance(v, int) for v in value):
        return "(" + ", ".join(str(v) for v in value) + ")"
    return None


def _args(event: Mapping[str, Any], path: Path, row: str) -> Mapping[str, Any]:
    """An event's ``args`` (an object, when present)."""
    return optional(event, "args", dict, path, row) or {}


def _copy_factor(event: Mapping[str, Any]) -> float | None:
    """DRAM bytes per reported byte: 2 for device-to-device copies, 1 for memsets."""
    category = str(event.get("cat", "")).lower()
    name = str(event.get("name", ""))
    if category == "gpu_memset":
        return 1.0
    if category == "gpu_memcpy" and ("DtoD" in name or "Device -> Device" in name):
        return 2.0
    return None


class KinetoTrace(Collector):
    """PyTorch/Kineto chrome trace: kernels (and on-device copies) per identity key."""

    name = "kineto-trace"
    description = "PyTorch profiler (Kineto) Chrome trace: GPU kernels and on-device copies"
    example = "prof.export_chrome_trace('trace.json')  # torch.profiler, with ProfilerActivity.CUDA"
    suffixes = (".json",)
    priority = 5

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """A Chrome trace with Kineto's ``traceEvents``."""
        return b'"traceEvents"' in head

    def parse(self, path: Path) -> RunRecord:
        """Group the GPU events; see the module docstring."""
        root = read_json(path)
        events = require(root, "traceEvents", list, path, None)
        listed = optional(root, "deviceProperties", list, path, None) or []
        props = by_id(listed, path, "deviceProperties")
        device = self._device_id(events, props)
        names = {index: str(prop.get("name") or "?") for index, prop in props.items()}
        groups, notes, others = self._groups(events, device, path)
        notes += _other_devices(others, names)
        kernels = [self._record(g, path) for g in groups.values()]
        return RunRecord(
            device=self._device(props.get(device, {})),
            profiler=ProfilerInfo(tool="kineto", version=text(root.get("schemaVersion"))),
            tools={"trace_name": str(root["traceName"])} if root.get("traceName") else {},
            kernels=check_unique(kernels, path),
            notes=tuple(notes),
            sources=(SourceRef(path=str(path), format=self.name),),
        )

    def _device_id(self, events: list[Any], props: Mapping[int, Any]) -> int:
        for index, prop in props.items():
            if self.options.device and prop.get("name") == self.options.device:
                return index
        for event in events:
            if isinstance(event, Mapping) and str(event.get("cat", "")).lower() == "kernel":
                args = event.get("args")
                dev = args.get("device") if isinstance(args, Mapping) else None
                if isinstance(dev, int) and not isinstance(dev, bool):
                    return dev
        return next(iter(props), 0)

    def _device(self, prop: Mapping[str, Any]) -> DeviceInfo:
        major, minor = prop.get("computeMajor"), prop.get("computeMinor")
        sms = prop.get("numSms")
        return DeviceInfo(
            name=str(prop.get("name") or self.options.device or "unknown"),
            compute_capability=f"{major}.{minor}" if major is not None else None,
            sm_count=sms if isinstance(sms, int) and not isinstance(sms, bool) else None,
        )

    def _groups(
        self, events: list[Any], device: int, path: Path
    ) -> tuple[dict[str, _Group], list[str], Counter[Any]]:
        """The run device's GPU events by kernel key, notes, and the other devices' counts."""
        groups: dict[str, _Group] = {}
        notes: list[str] = []
        others: Counter[Any] = Counter()
        for index, event in enumerate(events):
            if not isinstance(event, Mapping) or event.get("ph") != "X":
                continue
            category = str(event.get("cat", "")).lower()
            if category not in _GPU_CATEGORIES:
                continue
            on = _args(event, path, f"traceEvents[{index}]").get("device", device)
            if on != device:
                others[on] += 1
                continue
            factor = _copy_factor(event) if category != "kernel" else 0.0
            if factor is None:
                notes.append(f"traceEvents[{index}]: {event.get('name')} (host copy) not ingested")
                continue
            self._add(groups, index, event, factor, path)
        return groups, notes, others

    def _add(
        self,
        groups: dict[str, _Group],
        index: int,
        event: Mapping[str, Any],
        factor: float,
        path: Path,
    ) -> None:
        row = f"traceEvents[{index}]"
        name = require(event, "name", str, path, row)
        args = _args(event, path, row)
        grid, block = _dims(args.get("grid")), _dims(args.get("block"))
        key = make_key(name, None, self.options.keys, grid=grid, block=block)
        group = groups.setdefault(key, _Group(name=name, first=index, byte_factor=factor))
        group.grids.update([grid] if grid else [])
        group.blocks.update([block] if block else [])
        duration = number(event.get("dur"), path, row, "dur") / _US_PER_S
        if duration == 0:  # shorter than the trace's resolution: profiled, but untimed
            group.untimed += 1
            return
        check_sample(duration, str(path), row, "dur", "a launch")  # timed, yet under a picosecond
        group.times.append(duration)
        if factor:
            group.dram_bytes += factor * number(args.get("bytes", 0), path, row, "args.bytes")

    def _record(self, group: _Group, path: Path) -> KernelRecord:
        grid = next(iter(group.grids)) if len(group.grids) == 1 else None
        block = next(iter(group.blocks)) if len(group.blocks) == 1 else None
        provenance = {
            "duration": Provenance(
                kind=ProvenanceKind.REPORTED,
                metrics=("dur",),
                note=f"sum of {len(group.times)} launch durations (trace 'dur', microseconds)",
            )
        }
        flops, nbytes = _copy_work(group, provenance)
        return kernel_record(
            path,
            f"traceEvents[{group.first}]",
            name=group.name,
            key=make_key(group.name, None, self.options.keys, grid=grid, block=block),
            launches=len(group.times),
            duration_s=sum(group.times),
            samples_s=tuple(group.times),
            flops=flops,
            bytes=nbytes,
            provenance=provenance,
            grid=grid,
            block=block,
            failed_launches=group.untimed,
            missing=_missing(group, nbytes),
            source=SourceRef(path=str(path), row=f"traceEvents[{group.first}]", format=self.name),
        )


def _other_devices(others: Counter[Any], names: Mapping[int, str]) -> list[str]:
    """One note per other device whose GPU events were left out (a run holds one device)."""
    return [
        f"{count} GPU event(s) on device {other} ({names.get(other, '?')}) not ingested: a run "
        "holds one device (choose it with --device)"
        for other, count in sorted(others.items(), key=lambda item: str(item[0]))
    ]


def _copy_work(
    group: _Group, provenance: dict[str, Provenance]
) -> tuple[dict[str, float], dict[str, float]]:
    """FLOPs and bytes of a device copy or memset (none for a kernel); adds their provenance.

    A copy or memset does no arithmetic: zero FLOPs is a count, not a missing counter, so the
    copy is placed on the bandwidth roof rather than left unplaced.
    """
    if not group.byte_factor:
        return {}, {}
    provenance["flops.fp32"] = Provenance(
        kind=ProvenanceKind.REPORTED,
        metrics=("cat",),
        note="a device copy or memset (trace category) does no floating-point work",
    )
    if not group.times:
        return {"fp32": 0.0}, {}
    provenance["bytes.dram"] = Provenance(
        kind=ProvenanceKind.PROXY,
        metrics=("args.bytes",),
        note=f"logical copy/memset bytes x {group.byte_factor:g} (reads + writes); "
        "a copy that fits in L2 moves less DRAM traffic and can sit above the roof",
    )
    return {"fp32": 0.0}, {"dram": group.dram_bytes}


def _missing(group: _Group, nbytes: Mapping[str, float]) -> tuple[str, ...]:
    no_flops = "flops: a trace does not count FLOPs (declare a work model)"
    missing = [] if group.byte_factor else [no_flops]  # a copy's zero FLOPs are known
    if not nbytes and not group.byte_factor:  # a copy's bytes need a timed launch
        missing.append("bytes: a trace does not count kernel bytes")
    if group.untimed:
        missing.append(
            f"duration: {group.untimed} launch(es) of dur 0, shorter than the trace's "
            "resolution, not timed"
        )
    return tuple(missing)
