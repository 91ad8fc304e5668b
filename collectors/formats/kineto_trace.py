"""PyTorch profiler (Kineto) Chrome traces: ``torch.profiler`` ``export_chrome_trace`` JSON.

GPU activity events (``ph: X``) carry ``dur`` in microseconds. Kernel events (``cat:
kernel``) become KernelRecords aggregated by identity key, like a profiler report: ``launches``
is the number of launches, ``duration_s`` their total and ``samples_s`` each launch's time.
Grid and block are kept when every launch agrees. Device-to-device copies and memsets are
kept too, with the bytes the trace reports as a DRAM proxy: a copy reads and writes each
byte (2 x bytes), a memset writes it (1 x bytes); an L2-resident copy moves less DRAM.
Host<->device copies measure PCIe, not the device roofline, and are listed in the notes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collectors.base import Collector
from collectors.formats._micro import check_unique, number, read_json, require
from collectors.identity import make_key
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


def _dims(value: Any) -> str | None:
    if isinstance(value, list) and value:
        return "(" + ", ".join(str(v) for v in value) + ")"
    return None


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
        props = {int(p.get("id", i)): p for i, p in enumerate(root.get("deviceProperties") or [])}
        device = self._device_id(events, props)
        groups, notes = self._groups(events, device, path)
        kernels = [self._record(g, path) for g in groups.values()]
        return RunRecord(
            device=self._device(props.get(device, {})),
            profiler=ProfilerInfo(tool="kineto", version=_text(root.get("schemaVersion"))),
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
                dev = (event.get("args") or {}).get("device")
                if isinstance(dev, int):
                    return dev
        return next(iter(props), 0)

    def _device(self, prop: Mapping[str, Any]) -> DeviceInfo:
        major, minor = prop.get("computeMajor"), prop.get("computeMinor")
        return DeviceInfo(
            name=str(prop.get("name") or self.options.device or "unknown"),
            compute_capability=f"{major}.{minor}" if major is not None else None,
            sm_count=prop.get("numSms"),
        )

    def _groups(
        self, events: list[Any], device: int, path: Path
    ) -> tuple[dict[str, _Group], list[str]]:
        groups: dict[str, _Group] = {}
        notes: list[str] = []
        for index, event in enumerate(events):
            if not isinstance(event, Mapping) or event.get("ph") != "X":
                continue
            category = str(event.get("cat", "")).lower()
            if category not in {"kernel", "gpu_memcpy", "gpu_memset"}:
                continue
            args = event.get("args") or {}
            if args.get("device", device) != device:
                continue
            factor = _copy_factor(event) if category != "kernel" else 0.0
            if factor is None:
                notes.append(f"traceEvents[{index}]: {event.get('name')} (host copy) not ingested")
                continue
            self._add(groups, index, event, factor, path)
        return groups, notes

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
        args = event.get("args") or {}
        grid, block = _dims(args.get("grid")), _dims(args.get("block"))
        key = make_key(name, None, self.options.keys, grid=grid, block=block)
        group = groups.setdefault(key, _Group(name=name, first=index, byte_factor=factor))
        group.times.append(number(event.get("dur"), path, row, "dur") / _US_PER_S)
        group.grids.update([grid] if grid else [])
        group.blocks.update([block] if block else [])
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
        nbytes = {}
        if group.byte_factor:
            nbytes["dram"] = group.dram_bytes
            provenance["bytes.dram"] = Provenance(
                kind=ProvenanceKind.PROXY,
                metrics=("args.bytes",),
                note=f"logical copy/memset bytes x {group.byte_factor:g} (reads + writes); "
                "a copy that fits in L2 moves less DRAM traffic and can sit above the roof",
            )
        return KernelRecord(
            name=group.name,
            key=make_key(group.name, None, self.options.keys, grid=grid, block=block),
            launches=len(group.times),
            duration_s=sum(group.times),
            samples_s=tuple(group.times),
            bytes=nbytes,
            provenance=provenance,
            grid=grid,
            block=block,
            missing=("flops: a trace does not count FLOPs (declare a work model)",)
            + (() if nbytes else ("bytes: a trace does not count kernel bytes",)),
            source=SourceRef(path=str(path), row=f"traceEvents[{group.first}]", format=self.name),
        )


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
