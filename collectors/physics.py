"""What no device can measure: figures refused at the door, before any store holds them.

The schema takes any finite, non-negative number. A run that claims a kernel ran for 1e308 s
or moved 1e300 bytes in a millisecond is no measurement: once stored, every baseline that
counts it is built on nonsense. These bounds sit orders of magnitude beyond any device (the
fastest card of the catalog does some 1e16 FLOP/s and moves some 1e13 B/s through its
caches), so no real report comes near them, and every number the roofline computes from a
run within them stays far from a float's range. Nor can a kernel's time per launch lie far
outside its per-launch samples: one of them was given per run, or per launch, where the
other was not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from collectors.schema import DeviceInfo, KernelRecord, RunRecord

#: Longest time one kernel record may claim (its launches together): a day.
MAX_DURATION_S = 86_400.0
#: Fastest FLOP rate a record may claim, any precision: 1 EFLOP/s (some 100x any device).
MAX_FLOP_PER_S = 1e18
#: Fastest byte rate a record may claim, any tier: 10 PB/s (some 300x any L1).
MAX_BYTE_PER_S = 1e16
#: Fastest clock a record may claim: 100 GHz.
MAX_CLOCK_HZ = 1e11
#: Largest magnitude of a harness counter (counts past a 64-bit integer are no counts).
MAX_COUNTER = 2.0**63
#: How far (a ratio) a kernel's time per launch, ``duration_s`` over ``launches``, may lie
#: outside its samples' range: noise between a total and its launches is a few percent, and a
#: median or mean lies within its samples; a run's time given as each of 10 launches' samples
#: is 10x off.
SAMPLES_APART = 2.0


def kernel_fault(kernel: KernelRecord) -> tuple[str, str] | None:
    """(field, reason) of the first figure of ``kernel`` no device could measure, else None."""
    fault = _time_fault(kernel)
    if fault is not None:
        return fault
    # A kernel with no timed launch is bounded by a day at the fastest rate.
    seconds = kernel.duration_s if kernel.launches else MAX_DURATION_S
    for prefix, figures, rate in (
        ("flops", kernel.flops, MAX_FLOP_PER_S),
        ("bytes", kernel.bytes, MAX_BYTE_PER_S),
        ("declared_flops", kernel.declared_flops, MAX_FLOP_PER_S),
        ("declared_bytes", kernel.declared_bytes, MAX_BYTE_PER_S),
    ):
        fault = _rate_fault(prefix, figures, seconds, rate)
        if fault is not None:
            return fault
    for name, value in kernel.counters.items():
        if abs(value) > MAX_COUNTER:
            return f"counters.{name}", f"{value:.3g} is past a 64-bit count (2^63)"
    return None


def _time_fault(kernel: KernelRecord) -> tuple[str, str] | None:
    """(field, reason) of the first time of ``kernel`` no timer could have measured, else None."""
    if not kernel.launches and (kernel.duration_s or kernel.samples_s):
        return "launches", _timed_without_launch(kernel)
    if kernel.duration_s > MAX_DURATION_S:
        return "duration_s", _over(kernel.duration_s, "s", MAX_DURATION_S, "a day")
    for index, sample in enumerate(kernel.samples_s):
        if sample > MAX_DURATION_S:
            return f"samples_s.{index}", _over(sample, "s", MAX_DURATION_S, "a day")
    apart = samples_fault(kernel.duration_s, kernel.launches, kernel.samples_s)
    return None if apart is None else ("samples_s", apart)


def samples_fault(duration_s: float, launches: int, samples: Sequence[float]) -> str | None:
    """Why per-launch ``samples`` contradict ``duration_s`` over ``launches``, else None.

    ``duration_s`` is the total over ``launches`` and each sample one launch's time (with
    ``launches`` 1, one iteration's or repetition's): the time per launch, a mean or median of
    such times, lies within the samples. One more than ``SAMPLES_APART`` times outside them
    read every sample's percent of roof that many times off: 10 launches each given the run's
    time failed unchanged kernels on the PR gate.
    """
    if not launches or not samples or not duration_s > 0:
        return None
    per_launch, low, high = duration_s / launches, min(samples), max(samples)
    if low <= per_launch * SAMPLES_APART and per_launch <= high * SAMPLES_APART:
        return None
    spread = f"{low:.4g} s" if low == high else f"{low:.4g} to {high:.4g} s"
    return (
        f"duration_s {duration_s:.4g} s over {launches} launch(es) is {per_launch:.4g} s a "
        f"launch, more than {SAMPLES_APART:g}x from its samples ({spread}, each one launch's "
        "time): give each launch's time as a sample, or launches 1"
    )


def _rate_fault(
    prefix: str, figures: Mapping[str, float], seconds: float, rate: float
) -> tuple[str, str] | None:
    unit = "FLOP" if "flops" in prefix else "B"
    for name, value in figures.items():
        if value > rate * seconds:
            return f"{prefix}.{name}", (
                f"{value:.3g} {unit} in {seconds:.3g} s is {value / seconds:.3g} {unit}/s; no "
                f"device comes near {rate:.0e} {unit}/s"
            )
    return None


def device_fault(device: DeviceInfo) -> tuple[str, str] | None:
    """(field, reason) of the first peak or clock of ``device`` beyond any card, else None."""
    for prefix, figures, bound, unit in (
        ("peak_flop_per_s", device.peak_flop_per_s, MAX_FLOP_PER_S, "FLOP/s"),
        ("bandwidth_byte_per_s", device.bandwidth_byte_per_s, MAX_BYTE_PER_S, "B/s"),
        ("sm_clock_hz", {"": device.sm_clock_hz or 0.0}, MAX_CLOCK_HZ, "Hz"),
        ("memory_clock_hz", {"": device.memory_clock_hz or 0.0}, MAX_CLOCK_HZ, "Hz"),
    ):
        for name, value in figures.items():
            if value > bound:
                where = f"device.{prefix}.{name}" if name else f"device.{prefix}"
                return where, f"{value:.3g} {unit}; no device comes near {bound:.0e} {unit}"
    return None


def run_fault(record: RunRecord) -> tuple[int | None, str, str] | None:
    """(kernel index, field, reason) of the first impossible figure of ``record``, else None.

    The index is None when the figure is the device's.
    """
    fault = device_fault(record.device)
    if fault is not None:
        return None, *fault
    for index, kernel in enumerate(record.kernels):
        found = kernel_fault(kernel)
        if found is not None:
            return index, *found
    return None


def _timed_without_launch(kernel: KernelRecord) -> str:
    """Why 0 launches beside a time contradict: a kernel not measured has no time."""
    timed = f"{len(kernel.samples_s)} sample(s)" if kernel.samples_s else ""
    timed = f"a time of {kernel.duration_s:.3g} s" if kernel.duration_s else timed
    return (
        f"0 launches, but {timed}: a kernel with no measured launch has no time "
        "(give its launches, or 0 s for a kernel not measured)"
    )


def _over(value: float, unit: str, bound: float, words: str) -> str:
    return f"{value:.3g} {unit} is longer than {words} ({bound:g} {unit}); not a measured time"
