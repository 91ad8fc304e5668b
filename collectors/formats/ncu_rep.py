"""``.ncu-rep`` binary reports, read through NVIDIA's ``ncu_report`` module (the ``ncu`` extra).

``ncu_report`` never raises on garbage: an empty or truncated file loads with zero ranges or
with actions that read as None. This collector checks the magic, the ranges and every action.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

from collectors import isolation
from collectors.base import Collector
from collectors.errors import MalformedReport, MissingExtra, shown
from collectors.ncu import recipe
from collectors.ncu.aggregate import RunBuilder
from collectors.ncu.metrics import is_relevant
from collectors.ncu.peaks import DeviceFacts, device_facts, device_info
from collectors.ncu.provenance import profiler_info, version_from_bytes
from collectors.schema import RunRecord
from collectors.textio import replace_surrogates
from collectors.units import UnknownUnit, unit_factor

MAGIC = b"NVR\x00"
_COMMAND = re.compile(rb"(?:\bncu|nv-nsight-cu-cli)(?:\.exe)? --")


def _ncu_report(path: Path) -> ModuleType:
    try:
        import ncu_report
    except ImportError:
        raise MissingExtra(str(path), "ncu", "ncu_report") from None
    module: ModuleType = ncu_report
    return module


class NcuRep(Collector):
    """Nsight Compute binary report.

    ``ncu_report`` aborts the process on some damaged files, so each file is read in a child
    process under ``limits`` (see ``collectors.isolation``); ``parse_here`` is what runs there.
    """

    name = "ncu-rep"
    description = "Nsight Compute binary report (needs the 'ncu' extra: NVIDIA's ncu_report module)"
    example = "ncu --set roofline -o run ./app  # writes run.ncu-rep"
    suffixes = (".ncu-rep",)
    limits: ClassVar[isolation.Limits] = isolation.Limits(preload=("ncu_report",))

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """The report magic (N, V, R and a NUL byte)."""
        return head.startswith(MAGIC)

    def parse(self, path: Path) -> RunRecord:
        """Every action of every range is one launch, read in a child process."""
        _check_magic(path)
        _ncu_report(path)  # a missing extra is named here, not as a crash of the child
        return isolation.read_in_child(self.name, str(path), self.options, self.limits)

    def parse_here(self, where: str) -> RunRecord:
        """Read the report in this process (what the child runs; ``parse`` isolates it)."""
        path = Path(where)
        data = _check_magic(path)
        context = _ncu_report(path).load_report(where)
        if context.num_ranges() == 0:
            raise MalformedReport(
                where, None, None, "the report holds no range (empty or truncated file)"
            )
        builder = RunBuilder(path, self.name, self.options)
        facts, cc = self._read_actions(context, builder)
        device, notes = device_info(facts, self.options, cc)
        profiler, more = profiler_info(version_from_bytes(data), command_line(data))
        return builder.build(device, profiler, notes + more)

    def _read_actions(
        self, context: Any, builder: RunBuilder
    ) -> tuple[DeviceFacts | None, str | None]:
        facts: DeviceFacts | None = None
        cc = None
        launch = 0
        for r in range(context.num_ranges()):
            rng = context.range_by_idx(r)
            for a in range(rng.num_actions()):
                action = rng.action_by_idx(a)
                label = f"range {r} action {a}"
                if action is None or not action.name() or not action.metric_names():
                    raise MalformedReport(
                        builder.path, label, None, "the action cannot be read (truncated report)"
                    )
                metrics, strings = self._metrics(action, builder.path, label)
                cc = _compute_capability(metrics)
                builder.check_device(label, strings.get("device__attribute_display_name"), cc)
                figs = recipe.launch_figures(metrics, cc)
                name = replace_surrogates(str(action.name(action.NameBase_DEMANGLED)))
                grid, block = _dims(action, "grid"), _dims(action, "block")
                builder.add(str(launch), name, figs, grid=grid, block=block, nvtx=_nvtx(action))
                launch += 1
                if facts is None and figs.failed is None:
                    facts = device_facts(metrics, strings)
        return facts, cc

    @staticmethod
    def _metrics(action: Any, path: str, label: str) -> tuple[dict[str, float], dict[str, str]]:
        metrics: dict[str, float] = {}
        strings: dict[str, str] = {}
        for name in action.metric_names():
            if name == "device__attribute_display_name":
                strings[name] = replace_surrogates(str(action.metric_by_name(name).value()))
            elif is_relevant(name):
                metric = action.metric_by_name(name)
                value = metric.value() if metric is not None else None
                if isinstance(value, int | float):
                    metrics[name] = _scaled(float(value), metric.unit(), path, label, name)
        return metrics, strings


def _check_magic(path: Path) -> bytes:
    """The file's bytes, which must start with the report magic."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MalformedReport(str(path), None, None, f"cannot read file: {exc.strerror}") from None
    if not data.startswith(MAGIC):
        raise MalformedReport(str(path), None, None, "not an ncu report (missing the NVR magic)")
    return data


def _scaled(value: float, unit: str, path: str, label: str, name: str) -> float:
    if value < 0 and not math.isnan(value):
        raise MalformedReport(path, label, name, f"negative value {value!r}")
    try:
        return value * unit_factor(unit)
    except UnknownUnit:
        raise MalformedReport(path, label, name, f"unknown unit {shown(unit)}") from None


def _compute_capability(metrics: dict[str, float]) -> str | None:
    major = metrics.get("device__attribute_compute_capability_major")
    minor = metrics.get("device__attribute_compute_capability_minor")
    # int() of NaN or infinity (a damaged report) raises; such a figure says nothing
    if major is None or minor is None or not math.isfinite(major) or not math.isfinite(minor):
        return None
    return f"{int(major)}.{int(minor)}"


def _dims(action: Any, kind: str) -> str | None:
    values = []
    for axis in "xyz":
        metric = action.metric_by_name(f"launch__{kind}_dim_{axis}")
        value = metric.value() if metric is not None else None
        if not isinstance(value, int | float) or not math.isfinite(value):
            return None
        values.append(str(int(value)))
    return f"({', '.join(values)})"


def _nvtx(action: Any) -> str | None:
    """The NVTX push/pop (or start/end) ranges the launch ran in, joined with '/'."""
    state = action.nvtx_state()
    if state is None:
        return None
    for domain_id in state.domains():
        domain = state.domain_by_id(domain_id)
        ranges = tuple(domain.push_pop_ranges()) + tuple(domain.start_end_ranges())
        if ranges:
            return replace_surrogates("/".join(map(str, ranges)))
    return None


def command_line(data: bytes) -> str | None:
    """The ncu command line embedded in a report (a length-prefixed string in the file)."""
    match = _COMMAND.search(data)
    if match is None:
        return None
    start, end = _printable_run(data, *match.span())
    for skip in range(3):  # the length varint may itself be a printable byte
        length = _varint_before(data, start + skip)
        if length is not None and start + skip + length <= end:
            return data[start + skip : start + skip + length].decode("ascii")
    return data[start:end].decode("ascii")


def _printable_run(data: bytes, start: int, end: int) -> tuple[int, int]:
    """Widen ``[start, end)`` to the run of printable ASCII around it."""
    while start > 0 and 0x20 <= data[start - 1] <= 0x7E:
        start -= 1
    while end < len(data) and 0x20 <= data[end] <= 0x7E:
        end += 1
    return start, end


def _varint_before(data: bytes, pos: int) -> int | None:
    """Decode the protobuf varint that ends just before ``pos`` (1 or 2 bytes)."""
    if pos >= 1 and data[pos - 1] < 0x80:
        if pos >= 2 and data[pos - 2] >= 0x80:
            return (data[pos - 2] & 0x7F) | (data[pos - 1] << 7)
        return data[pos - 1]
    return None
