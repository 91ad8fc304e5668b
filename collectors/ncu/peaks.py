"""Device facts and report-derived peaks: ``<counter>.peak_sustained x <unit> clock``.

The peaks are at the clocks the kernel ran at (ncu locks to base clocks by default), so they
are lower than datasheet peaks; DeviceInfo keeps them apart from the hardware catalog's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from collectors.base import CollectOptions
from collectors.ncu.metrics import TENSOR_DTYPES
from collectors.schema import DeviceInfo

SM_CLOCKS = (
    "sm__cycles_elapsed.avg.per_second",
    "smsp__cycles_elapsed.avg.per_second",
    "gpc__cycles_elapsed.avg.per_second",
)
DRAM_CLOCK = "dram__cycles_elapsed.avg.per_second"
#: precision -> (FLOP per instruction, peak metric). FMA = 2; HFMA2 = 4 (2 lanes x FMA).
_CORE_PEAKS = {
    "fp32": (2.0, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"),
    "fp64": (2.0, "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained"),
    "fp16": (4.0, "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained"),
}
#: tier -> ((bytes per unit-cycle metric, clock metric), ...) first match wins.
_BW_PEAKS = {
    "dram": (("dram__bytes.sum.peak_sustained", DRAM_CLOCK),),
    "l2": (
        ("lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second"),
        ("derived__lts__lts2xbar_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second"),
    ),
    "l1": (
        ("l1tex__t_bytes.sum.peak_sustained", "l1tex__cycles_elapsed.avg.per_second"),
        (
            "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained",
            "l1tex__cycles_elapsed.avg.per_second",
        ),
        (
            "derived__l1tex__lsu_writeback_bytes_mem_lg.sum.peak_sustained",
            "l1tex__cycles_elapsed.avg.per_second",
        ),
    ),
}
_TENSOR_PEAK = re.compile(
    r"^sm__ops_path_tensor_(?:op_[a-z0-9]+_)?src_([a-z0-9_]+?)(?:_dst_[a-z0-9]+?)?"
    r"(_sparsity_o(?:n|ff))?\.sum\.peak_sustained$"
)


@dataclass(slots=True)
class DeviceFacts:
    """What one launch says about the device.

    Attributes:
        name: ``device__attribute_display_name``.
        sm_count: ``device__attribute_multiprocessor_count``.
        sm_clock_hz: The SM clock during the launch.
        memory_clock_hz: The DRAM clock during the launch.
        peak_flop_per_s: Report-derived FLOP/s peaks by precision.
        bandwidth_byte_per_s: Report-derived bandwidths by tier.
    """

    name: str | None = None
    sm_count: int | None = None
    sm_clock_hz: float | None = None
    memory_clock_hz: float | None = None
    peak_flop_per_s: dict[str, float] = field(default_factory=dict)
    bandwidth_byte_per_s: dict[str, float] = field(default_factory=dict)


def _num(m: Mapping[str, float], name: str) -> float | None:
    value = m.get(name)
    # NaN (a failed replay) and infinity (a damaged figure) are no fact about the device
    return None if value is None or not math.isfinite(value) or value <= 0 else value


def sm_clock(m: Mapping[str, float]) -> float | None:
    """The average SM clock, Hz."""
    return next((c for c in (_num(m, n) for n in SM_CLOCKS) if c is not None), None)


def tensor_peaks(m: Mapping[str, float], clock: float) -> dict[str, float]:
    """Dense tensor peaks by precision, FLOP/s.

    ``_sparsity_off`` peaks; un-suffixed ones only for dtypes without a sparsity split (the
    un-suffixed peak of a split dtype is the 2x sparse peak).
    """
    dense: dict[str, float] = {}
    plain: dict[str, float] = {}
    split: set[str] = set()
    for name, value in m.items():
        match = _TENSOR_PEAK.match(name)
        precision = TENSOR_DTYPES.get(match.group(1)) if match else None
        if match is None or precision is None or _num(m, name) is None:
            continue
        if match.group(2):
            split.add(precision)
        target = (
            dense if match.group(2) == "_sparsity_off" else plain if not match.group(2) else None
        )
        if target is not None:
            target[precision] = max(target.get(precision, 0.0), value)
    peaks = {p: v * clock for p, v in dense.items()}
    peaks.update({p: v * clock for p, v in plain.items() if p not in split and p not in peaks})
    return peaks


def device_facts(m: Mapping[str, float], strings: Mapping[str, str] | None = None) -> DeviceFacts:
    """Device name, SM count, clocks and report-derived peaks from one launch's SI metrics."""
    strings = strings or {}
    sm_count = _num(m, "device__attribute_multiprocessor_count") or _num(m, "launch__sm_count")
    facts = DeviceFacts(
        name=strings.get("device__attribute_display_name") or None,
        sm_count=int(sm_count) if sm_count else None,
        sm_clock_hz=sm_clock(m),
        memory_clock_hz=_num(m, DRAM_CLOCK),
    )
    if facts.sm_clock_hz:
        for precision, (weight, metric) in _CORE_PEAKS.items():
            per_cycle = _num(m, metric)
            if per_cycle is not None:
                facts.peak_flop_per_s[precision] = weight * per_cycle * facts.sm_clock_hz
        facts.peak_flop_per_s.update(tensor_peaks(m, facts.sm_clock_hz))
    for tier, sources in _BW_PEAKS.items():
        for per_cycle_name, clock_name in sources:
            per_cycle, clock = _num(m, per_cycle_name), _num(m, clock_name)
            if per_cycle is not None and clock is not None:
                facts.bandwidth_byte_per_s[tier] = per_cycle * clock
                break
    return facts


def device_info(
    facts: DeviceFacts | None, options: CollectOptions, cc: str | None, fallback: str | None = None
) -> tuple[DeviceInfo, list[str]]:
    """DeviceInfo from report facts; ``options.device`` fills in when the file names none."""
    facts = facts or DeviceFacts()
    name = facts.name or fallback or options.device
    notes: list[str] = []
    if not name:
        name = f"unknown GPU (CC {cc})" if cc else "unknown GPU"
        notes.append("the report names no device; pass --device NAME to name it")
    info = DeviceInfo(
        name=name,
        compute_capability=cc,
        sm_count=facts.sm_count,
        sm_clock_hz=facts.sm_clock_hz,
        memory_clock_hz=facts.memory_clock_hz,
        peak_flop_per_s=facts.peak_flop_per_s,
        bandwidth_byte_per_s=facts.bandwidth_byte_per_s,
    )
    return info, notes
