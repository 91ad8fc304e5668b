"""Fit a runner's ceilings from its measurements. Pure numpy: no I/O, no torch.

The sweep points (K fused multiply-adds per element, intensity ``I = 2K / bytes_per_element``)
trace ``min(P, I W)``: they climb the bandwidth slope and flatten at the compute roof. The fit
works in log space, where the roof is two straight pieces, and uses medians so that a noisy,
non-monotonic sweep or a single preempted repetition does not move the ceilings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from rules import DeviceSpec
from service.calibrate.model import MatmulResult, MemoryResult, SweepFit, SweepPoint

FloatArray = npt.NDArray[np.float64]

#: A point this many times above the fitted roof is a timing glitch, not a ceiling. Real sweeps
#: do bulge above their plateau (on CPUs a short FMA chain overlaps better than a long one,
#: 1.8x seen here), so only a far larger excess counts.
SPIKE_FACTOR = 2.5
_AT_RIDGE = 1e-6  # log-space tolerance


def _usable(points: Iterable[SweepPoint]) -> tuple[FloatArray, FloatArray]:
    pairs = sorted(
        (p.intensity_flop_per_byte, p.flop_per_s)
        for p in points
        if p.intensity_flop_per_byte > 0 and p.flop_per_s > 0
    )
    x = np.log(np.array([i for i, _ in pairs], dtype=np.float64))
    y = np.log(np.array([f for _, f in pairs], dtype=np.float64))
    return x, y


def _candidate(x: FloatArray, y: FloatArray, split: int) -> tuple[float, float, float]:
    """Log W from the first ``split`` points, log P from the rest, and the L1 log-error."""
    log_w = float(np.median(y[:split] - x[:split])) if split > 0 else float(np.max(y - x))
    log_p = float(np.median(y[split:])) if split < len(x) else float(np.max(y))
    predicted = np.minimum(log_p, x + log_w)
    return log_w, log_p, float(np.sum(np.abs(y - predicted)))


def fit_sweep(points: Sequence[SweepPoint]) -> SweepFit | None:
    """Fit ``min(P, I W)`` to sweep points; None with fewer than two usable points.

    Every split of the points (sorted by intensity) into a slope part and a plateau part is
    tried; each part is summarised by its median (``ln F - ln I`` on the slope, ``ln F`` on the
    plateau) and the split with the smallest absolute log-error over all points wins. When no
    point lies on one side, that ceiling is only bounded by the points (``max``) and the fit
    says so through ``climbed`` / ``flattened``.
    """
    x, y = _usable(points)
    if len(x) < 2:
        return None
    best = min((_candidate(x, y, s) for s in range(len(x) + 1)), key=lambda c: c[2])
    log_w, log_p, _ = best
    log_ridge = log_p - log_w
    residual = np.abs(y - np.minimum(log_p, x + log_w))
    # A point at the ridge itself (within rounding) shows neither side.
    climbed = bool(np.any(x < log_ridge - _AT_RIDGE))
    flattened = bool(np.any(x > log_ridge + _AT_RIDGE))
    return SweepFit(
        bandwidth_byte_per_s=float(np.exp(log_w)),
        peak_flop_per_s=float(np.exp(log_p)),
        ridge_flop_per_byte=float(np.exp(log_ridge)),
        slope_points=int(np.sum(x < log_ridge - _AT_RIDGE)),
        median_abs_log_residual=float(np.median(residual)),
        climbed=climbed,
        flattened=flattened,
    )


def find_spikes(points: Sequence[SweepPoint], bandwidth: float, peak: float) -> tuple[int, ...]:
    """K of isolated points more than ``SPIKE_FACTOR`` above ``min(peak, I bandwidth)``."""
    spikes = tuple(
        p.k
        for p in points
        if p.flop_per_s > SPIKE_FACTOR * min(peak, p.intensity_flop_per_byte * bandwidth)
    )
    # A glitch is rare; many points far above the fit are the sweep's real shape (the envelope
    # in fit_ceilings then lifts the roof to them).
    return spikes if len(spikes) <= max(1, len(points) // 4) else ()


def best_bandwidth(memory: Iterable[MemoryResult]) -> dict[str, float]:
    """Best bandwidth per tier over the memory tests (copy and reduction)."""
    result: dict[str, float] = {}
    for test in memory:
        result[test.tier] = max(result.get(test.tier, 0.0), test.byte_per_s)
    return result


def best_peaks(matmul: Iterable[MatmulResult]) -> dict[str, float]:
    """Best FLOP/s per schema precision over the matrix products."""
    result: dict[str, float] = {}
    for product in matmul:
        result[product.key] = max(result.get(product.key, 0.0), product.flop_per_s)
    return result


def fit_ceilings(
    *,
    memory: Sequence[MemoryResult],
    matmul: Sequence[MatmulResult],
    sweep_fit: SweepFit | None,
    sweep: Sequence[SweepPoint] = (),
    sweep_precision: str = "fp32",
) -> tuple[dict[str, float], dict[str, float], tuple[int, ...]]:
    """Bandwidth per tier and peak per precision from all the measurements.

    A ceiling is the best rate the runner demonstrably reaches: dram bandwidth is the larger of
    the STREAM-like tests and the sweep's slope; the sweep precision's peak is the larger of its
    matrix product and the sweep's plateau (CUDA-core FMA rate on GPUs). Sweep points far above
    that roof are glitches (spikes, returned as their K); no other point may lie above the
    roof: ``P >= F`` and ``W >= F / I`` for each of them.

    Spikes are judged against the roof that the memory tests and products support too, not the
    sweep's fit alone: on a busy machine most points are slowed and the one undisturbed point
    would otherwise look like the outlier.
    """
    bandwidth = best_bandwidth(memory)
    peaks = best_peaks(matmul)
    if sweep_fit is not None:
        if sweep_fit.climbed:
            bandwidth["dram"] = max(bandwidth.get("dram", 0.0), sweep_fit.bandwidth_byte_per_s)
        if sweep_fit.flattened:
            peak = max(peaks.get(sweep_precision, 0.0), sweep_fit.peak_flop_per_s)
            peaks[sweep_precision] = peak
    own = [p for p in sweep if p.precision == sweep_precision]
    base_peak = peaks.get(sweep_precision, float("inf"))
    spikes = find_spikes(own, bandwidth.get("dram", float("inf")), base_peak)
    _envelope([p for p in own if p.k not in spikes], bandwidth, peaks, sweep_precision)
    return bandwidth, peaks, spikes


def _envelope(
    points: Sequence[SweepPoint],
    bandwidth: dict[str, float],
    peaks: dict[str, float],
    precision: str,
) -> None:
    """Raise the ceilings so no (non-spike) sweep point lies above the roof.

    A best-of-N time can be slowed by the machine but not sped up beyond the hardware, so a
    point proves both ``P >= F`` and ``W >= F / I`` (``min(P, I W) >= F`` needs both).
    """
    if not points:
        return
    peaks[precision] = max(peaks.get(precision, 0.0), max(p.flop_per_s for p in points))
    slope = max(p.flop_per_s / p.intensity_flop_per_byte for p in points)
    bandwidth["dram"] = max(bandwidth.get("dram", 0.0), slope)


def ridges(peaks: Mapping[str, float], bandwidth: Mapping[str, float]) -> dict[str, float]:
    """The measured ridge ``P_p / W_dram`` per precision (empty without a dram bandwidth)."""
    dram = bandwidth.get("dram")
    if not dram:
        return {}
    return {precision: peak / dram for precision, peak in peaks.items()}


def datasheet_ratios(
    spec: DeviceSpec | None, peaks: Mapping[str, float], bandwidth: Mapping[str, float]
) -> dict[str, float]:
    """Measured over datasheet, keyed ``bandwidth.<tier>`` and ``peak.<precision>``."""
    if spec is None:
        return {}
    ratios: dict[str, float] = {}
    sheet_bw: dict[str, float] = {k: v for k, v in spec.bandwidth_byte_per_s.items()}
    sheet_peak: dict[str, float] = {k: v for k, v in spec.peak_flop_per_s.items()}
    for tier, value in bandwidth.items():
        if sheet_bw.get(tier):
            ratios[f"bandwidth.{tier}"] = value / sheet_bw[tier]
    for precision, value in peaks.items():
        if sheet_peak.get(precision):
            ratios[f"peak.{precision}"] = value / sheet_peak[precision]
    return ratios


def roof_at(intensity: FloatArray, peak: float, bandwidth: float) -> FloatArray:
    """``min(P, I W)`` at each intensity (for charts and the below-the-roof checks)."""
    return np.minimum(peak, intensity * bandwidth)
