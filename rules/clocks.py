"""A datasheet roof at the clocks a report ran at.

Datasheet peaks assume the boost clock; ncu locks the GPU to its base clock by default
(``--clock-control base``), so a GEMM at 95% of the peak it could reach at that clock reads
about 75% against the datasheet. FLOP/s peaks and the L1/L2 bandwidths (the catalog's are
bytes per clock x boost clock) scale with the SM clock over the boost clock; DRAM bandwidth
with the memory clock over the nominal one, where the catalog has it. The measured roof
(calibration) is measured at the runner's clocks and is never scaled.

A run of several reports (an ncu report beside a Kineto trace of one card) is scaled to the
clocks of the reports that record them; the kernels that record none keep the datasheet roof
(``ClockedRoof``), so a kernel's percent of roof does not depend on which files share its run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from collectors.schema import KernelRecord, RunRecord
from rules.hardware import DeviceSpec
from rules.roofline import Roof

#: A clock within 1% of the datasheet's leaves the roof as it is (no note for noise).
CLOCK_TOLERANCE = 0.01
#: Kernels whose clocks spread wider than this are named in the note.
SPREAD_NOTE = 0.05
#: Clocks outside this share of the datasheet's are a unit slip or a bad counter, not a clock
#: a kernel ran at (an H100 idles at 0.17x its boost): the roof is not scaled to them. A
#: report's SM clock of 1.64e-06 GHz cut every peak 300-fold, with only a note.
PLAUSIBLE_SCALE = (0.05, 2.0)


@dataclass(frozen=True)
class RunClock:
    """One clock of a run: the time-weighted mean over its kernels, and the range they span."""

    mean_hz: float
    low_hz: float
    high_hz: float


@dataclass(frozen=True)
class ClockedRoof(Roof):
    """A datasheet roof scaled to the clocks of a run, some of whose reports record none.

    The kernels that record a clock are placed on it; those that record none (a Kineto
    trace's, beside an ncu report) ran at clocks nobody knows, and are placed on ``unscaled``,
    as in a run of their report alone (``kernel_roof``). Whatever reads their work on a roof
    takes the kernel's own: ``Placement.roof`` for a placed kernel, and for a stored row,
    which records no clock, the one its figures fit (``rules.placedroof``).

    Attributes:
        unscaled: The datasheet roof as it is.
    """

    unscaled: Roof = field(kw_only=True)


def kernel_roof(kernel: KernelRecord, roof: Roof) -> Roof:
    """``roof`` for ``kernel``; a ``ClockedRoof``'s unscaled roof where the kernel records no clock.

    By the kernel's own clock, not its report's name: a re-measurement (``check --rerun``) of
    the same kernels comes in files of other names.
    """
    if isinstance(roof, ClockedRoof) and not _has_clock(kernel):
        return roof.unscaled
    return roof


def _has_clock(kernel: KernelRecord) -> bool:
    return bool(kernel.sm_clock_hz or kernel.memory_clock_hz)


def _report_of(kernel: KernelRecord) -> str:
    """The report ``kernel`` was read from, as given ("" where it names none)."""
    # getattr: a huge run's clock stand-ins (service.pipeline.hugerun) carry times and clocks
    # alone; a huge run is one report, so they are one report here.
    source = getattr(kernel, "source", None)
    return source.path if source is not None else ""


def run_clock(run: RunRecord, which: str) -> RunClock | None:
    """The run's SM (``which="sm"``) or memory clock: its kernels', else the device's.

    The device's clocks stand in only for ncu (other tools record the default clocks, not
    the ones the kernels ran at).
    """
    pairs = [
        (clock, k.duration_s)
        for k in run.kernels
        if (clock := k.sm_clock_hz if which == "sm" else k.memory_clock_hz)
    ]
    if not pairs:
        if run.profiler.tool != "ncu":
            return None
        device = run.device.sm_clock_hz if which == "sm" else run.device.memory_clock_hz
        return RunClock(device, device, device) if device else None
    time = sum(t for _, t in pairs)
    mean = (
        sum(c * t for c, t in pairs) / time if time > 0 else sum(c for c, _ in pairs) / len(pairs)
    )
    clocks = [c for c, _ in pairs]
    return RunClock(mean, min(clocks), max(clocks))


def _plausible(
    clock: RunClock | None, reference: float | None, which: str
) -> tuple[RunClock | None, str | None]:
    """``clock``, or None and why where it is too far from the datasheet's to be one."""
    if clock is None or not reference:
        return clock, None
    low, high = PLAUSIBLE_SCALE
    if low <= clock.mean_hz / reference <= high:
        return clock, None
    return None, (
        f"the report's {which} clock, {_ghz(clock.mean_hz)}, is far from the datasheet's "
        f"{_ghz(reference)} (a unit slip or a bad counter?): left out"
    )


def _ghz(hz: float) -> str:
    return f"{hz / 1e9:.3g} GHz"


def _scale(clock: RunClock | None, reference: float | None) -> float | None:
    if clock is None or not reference:
        return None
    scale = clock.mean_hz / reference
    return None if abs(scale - 1) <= CLOCK_TOLERANCE else scale


def _scaled(values: Iterable[tuple[str, float]], scale: float) -> dict[str, float]:
    return {name: value * scale for name, value in values}


def _spread(clock: RunClock) -> str:
    if clock.high_hz <= clock.low_hz * (1 + SPREAD_NOTE):
        return ""
    return f", the time-weighted mean of kernels at {_ghz(clock.low_hz)} to {_ghz(clock.high_hz)}"


def at_report_clocks(spec: DeviceSpec, run: RunRecord) -> tuple[Roof, str | None]:
    """``spec``'s datasheet roof scaled to the clocks ``run`` ran at, and a note saying how.

    The roof is the datasheet's (and no note) where the report records no clock, the catalog
    has no boost clock, or the clocks are within ``CLOCK_TOLERANCE`` of the datasheet's. A
    scaled roof of a run whose other reports record no clock is a ``ClockedRoof``: their
    kernels keep the datasheet's, and the note names the reports on each.
    """
    unclocked = _unclocked_reports(run)
    if not unclocked:
        return _at_run_clocks(spec, run, "the report's clocks")
    with_clock, without = _reports(run, unclocked)
    roof, note = _at_run_clocks(spec, run, f"the clocks of {with_clock}")
    if note is None or roof == spec.roof():
        return roof, note
    verb = "records no clock: its" if len(unclocked) == 1 else "record no clock: their"
    note += f"; {without} {verb} kernels stay on the datasheet roof as it is"
    return ClockedRoof(**vars(roof), unscaled=spec.roof()), note


def _unclocked_reports(run: RunRecord) -> tuple[str, ...]:
    """The reports of ``run`` none of whose kernels records a clock, where another's does.

    Where none records one (the device's clock of an ncu run may stand in), there are none.
    """
    clocked: dict[str, bool] = {}
    for kernel in run.kernels:
        report = _report_of(kernel)
        clocked[report] = clocked.get(report, False) or _has_clock(kernel)
    if not any(clocked.values()):
        return ()
    return tuple(sorted(report for report, has in clocked.items() if not has))


def _reports(run: RunRecord, unclocked: tuple[str, ...]) -> tuple[str, str]:
    """The reports with a clock and those without: ``a.ncu-rep (2 kernels)``, file names."""
    counts = Counter(_report_of(kernel) for kernel in run.kernels)
    named = {
        report: f"{_file_name(report)} ({n} kernel{'s' if n != 1 else ''})"
        for report, n in counts.items()
    }
    with_clock = [text for report, text in named.items() if report not in unclocked]
    return ", ".join(with_clock), ", ".join(named[report] for report in unclocked)


def _file_name(report: str) -> str:
    """A report's file name alone, as any machine wrote its path: the run's notes are stored."""
    return PurePosixPath(report.replace("\\", "/")).name or report or "no file"


def _at_run_clocks(spec: DeviceSpec, run: RunRecord, whose: str) -> tuple[Roof, str | None]:
    """``spec``'s datasheet roof scaled to the mean of ``run``'s clocks, and how (``whose``)."""
    roof = spec.roof()
    sm, odd_sm = _plausible(run_clock(run, "sm"), spec.boost_clock_hz, "SM")
    memory, odd_memory = _plausible(run_clock(run, "memory"), spec.memory_clock_hz, "memory")
    parts = [odd for odd in (odd_sm, odd_memory) if odd]
    sm_scale, memory_scale = _scale(sm, spec.boost_clock_hz), _scale(memory, spec.memory_clock_hz)
    no_boost = sm is not None and not spec.boost_clock_hz
    if sm_scale is None and memory_scale is None and not no_boost:
        return (
            roof,
            f"{spec.id}'s datasheet roof is not scaled: {'; '.join(parts)}" if parts else None,
        )
    bandwidth = dict(roof.bandwidth_byte_per_s)
    peaks = dict(roof.peak_flop_per_s)
    if sm is not None and no_boost:
        parts.append(
            f"SM clock {_ghz(sm.mean_hz)}, but the catalog has no boost clock for {spec.id}: "
            "FLOP/s peaks and L1/L2 bandwidth left as the datasheet's"
        )
    if sm is not None and sm_scale is not None and spec.boost_clock_hz:
        peaks = _scaled(peaks.items(), sm_scale)
        bandwidth |= _scaled(((t, v) for t, v in bandwidth.items() if t != "dram"), sm_scale)
        parts.append(
            f"SM clock {_ghz(sm.mean_hz)}{_spread(sm)} against the {_ghz(spec.boost_clock_hz)} "
            f"boost clock: FLOP/s peaks and L1/L2 bandwidth x{sm_scale:.3f}"
        )
    parts.append(_memory_part(spec, memory, memory_scale, bandwidth))
    how = (
        "is scaled to"
        if peaks != roof.peak_flop_per_s or bandwidth != roof.bandwidth_byte_per_s
        else "is not scaled to"
    )
    note = f"{spec.id}'s datasheet roof {how} {whose}: " + "; ".join(parts)
    return replace(roof, peak_flop_per_s=peaks, bandwidth_byte_per_s=bandwidth), note


def _memory_part(
    spec: DeviceSpec, memory: RunClock | None, scale: float | None, bandwidth: dict[str, float]
) -> str:
    """The DRAM half of the note; scales ``bandwidth["dram"]`` in place when it can."""
    if memory is None:
        return "the report records no memory clock: DRAM bandwidth as the datasheet's"
    if not spec.memory_clock_hz:
        return (
            f"memory clock {_ghz(memory.mean_hz)}, but the catalog has no nominal memory clock "
            f"for {spec.id}: DRAM bandwidth left as the datasheet's"
        )
    if scale is None:
        return f"memory clock {_ghz(memory.mean_hz)} is the nominal one: DRAM bandwidth as is"
    if "dram" in bandwidth:
        bandwidth["dram"] *= scale
    return (
        f"memory clock {_ghz(memory.mean_hz)}{_spread(memory)} against the nominal "
        f"{_ghz(spec.memory_clock_hz)}: DRAM bandwidth x{scale:.3f}"
    )
