"""The fit of ceilings from sweep points, on synthetic sweeps with known answers."""

from __future__ import annotations

import random

import numpy as np
import pytest
from calibrate_factories import KS, make_ceilings, make_points, roof
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.hardware import builtin_catalog
from service.calibrate import fit
from service.calibrate.model import MatmulResult, MemoryResult, SweepPoint

W, P = 20e9, 100e9  # ridge 5 FLOP/byte, i.e. K = 20


def _memory(byte_per_s: float) -> list[MemoryResult]:
    return [MemoryResult(name="copy", bytes=1e9, seconds=1e9 / byte_per_s, byte_per_s=byte_per_s)]


def _matmul(key: str, flop_per_s: float) -> list[MatmulResult]:
    return [
        MatmulResult(
            precision=key,
            key=key,
            n=1024,
            flops=2e9,
            seconds=2e9 / flop_per_s,  # type: ignore[arg-type]
            flop_per_s=flop_per_s,
        )
    ]


def test_exact_points_give_the_exact_roof():
    result = fit.fit_sweep(make_points(W, P))
    assert result is not None
    assert result.bandwidth_byte_per_s == pytest.approx(W, rel=1e-9)
    assert result.peak_flop_per_s == pytest.approx(P, rel=1e-9)
    assert result.ridge_flop_per_byte == pytest.approx(5.0, rel=1e-9)
    assert result.climbed and result.flattened
    assert result.slope_points == 5  # K = 1..16 lie left of K = 20
    assert result.spikes == ()


def test_noisy_non_monotonic_sweep_with_outliers():
    rng = random.Random(7)
    # Timing noise only slows a best-of-N measurement: factors in [0.95, 1].
    factors = {k: 1 - 0.05 * rng.random() for k in KS}
    factors[2] = 0.3  # preempted repetition on the slope
    factors[256] = 0.25  # and one on the plateau: the sweep goes down, then up again
    factors[64] = 3.0  # a timing glitch far above the roof
    points = make_points(W, P, factors=factors)
    rng.shuffle(points)  # input order must not matter
    result = fit.fit_sweep(points)
    assert result is not None
    assert result.bandwidth_byte_per_s == pytest.approx(W, rel=0.06)
    assert result.peak_flop_per_s == pytest.approx(P, rel=0.06)
    bandwidth, peaks, spikes = fit.fit_ceilings(
        memory=_memory(0.9 * W), matmul=_matmul("fp32", 0.9 * P), sweep_fit=result, sweep=points
    )
    assert spikes == (64,)
    # The envelope of the trusted points: at most the truth, within the 5 % noise band.
    assert 0.95 * W <= bandwidth["dram"] <= W * (1 + 1e-9)
    assert 0.95 * P <= peaks["fp32"] <= P * (1 + 1e-9)
    for point in points:
        if point.k != 64:
            assert point.flop_per_s <= roof(
                point.intensity_flop_per_byte, bandwidth["dram"], peaks["fp32"]
            ) * (1 + 1e-9)


def test_symmetric_noise_is_averaged_out_by_the_medians():
    rng = np.random.default_rng(3)
    factors = dict(zip(KS, np.exp(rng.normal(0.0, 0.08, len(KS))), strict=True))
    result = fit.fit_sweep(make_points(W, P, factors=factors))
    assert result is not None
    assert result.bandwidth_byte_per_s == pytest.approx(W, rel=0.12)
    assert result.peak_flop_per_s == pytest.approx(P, rel=0.12)
    assert result.median_abs_log_residual < 0.1


def test_sweep_that_never_flattens_leaves_the_peak_to_the_matmul():
    points = make_points(W, P, ks=(1, 2, 4, 8))  # intensity <= 2 < ridge 5
    result = fit.fit_sweep(points)
    assert result is not None
    assert result.climbed and not result.flattened
    assert result.bandwidth_byte_per_s == pytest.approx(W, rel=1e-9)
    bandwidth, peaks, _ = fit.fit_ceilings(
        memory=_memory(0.8 * W), matmul=_matmul("fp32", P), sweep_fit=result, sweep=points
    )
    assert bandwidth["dram"] == pytest.approx(W)
    assert peaks["fp32"] == pytest.approx(P)


def test_flat_sweep_has_no_slope_and_stream_sets_the_bandwidth():
    points = make_points(W, P, ks=(64, 128, 256, 512))  # all right of the ridge
    result = fit.fit_sweep(points)
    assert result is not None
    assert result.flattened and not result.climbed
    bandwidth, peaks, _ = fit.fit_ceilings(
        memory=_memory(0.9 * W), matmul=[], sweep_fit=result, sweep=points
    )
    assert bandwidth["dram"] == pytest.approx(0.9 * W)
    assert peaks["fp32"] == pytest.approx(P)


def test_a_point_above_the_stream_roof_lifts_the_bandwidth():
    # An in-place sweep moves no write-allocate traffic, so it can beat a copy: the roof must
    # lie on or above every trusted point.
    points = make_points(W, P, ks=(1, 4, 16, 64))
    bandwidth, _, _ = fit.fit_ceilings(
        memory=_memory(0.7 * W), matmul=_matmul("fp32", P), sweep_fit=None, sweep=points
    )
    assert bandwidth["dram"] == pytest.approx(W)


def test_too_few_points_give_no_fit():
    assert fit.fit_sweep(make_points(W, P, ks=(4,))) is None
    assert fit.fit_sweep([]) is None


def test_ratios_to_the_datasheet_and_ridges():
    spec = builtin_catalog().lookup("NVIDIA H100 80GB HBM3")
    bandwidth = {"dram": 0.9 * 3.35e12}
    peaks = {"tensor_bf16": 0.75 * 989.4e12, "fp32": 50e12}
    ratios = fit.datasheet_ratios(spec, peaks, bandwidth)
    assert ratios["bandwidth.dram"] == pytest.approx(0.9)
    assert ratios["peak.tensor_bf16"] == pytest.approx(0.75)
    assert ratios["peak.fp32"] == pytest.approx(50 / 66.9)
    assert fit.datasheet_ratios(None, peaks, bandwidth) == {}
    assert fit.ridges(peaks, bandwidth)["fp32"] == pytest.approx(50e12 / (0.9 * 3.35e12))
    assert fit.ridges(peaks, {}) == {}


def test_ceilings_give_a_measured_roof():
    ceilings = make_ceilings(bandwidth={"dram": 3e12}, peaks={"tensor_bf16": 7e14})
    measured = ceilings.roof()
    assert measured.source == "measured"
    assert measured.device == "H100-SXM5"
    assert measured.bandwidth_byte_per_s == {"dram": 3e12}
    assert measured.peak_flop_per_s == {"tensor_bf16": 7e14}


@settings(max_examples=40, deadline=None)
@given(
    bandwidth=st.floats(1e9, 1e13),
    ridge=st.floats(0.5, 100.0),
    seed=st.integers(0, 2**16),
)
def test_fit_recovers_any_roof_whose_ridge_lies_inside_the_sweep(bandwidth, ridge, seed):
    rng = random.Random(seed)
    factors = {k: 1 - 0.03 * rng.random() for k in KS}
    result = fit.fit_sweep(make_points(bandwidth, bandwidth * ridge, factors=factors))
    assert result is not None
    assert result.bandwidth_byte_per_s == pytest.approx(bandwidth, rel=0.04)
    assert result.peak_flop_per_s == pytest.approx(bandwidth * ridge, rel=0.04)


def test_real_cpu_sweep_with_a_bulge_is_not_called_a_glitch():
    # Measured here (torch.compile sweep, 2 shared vCPUs): K=16 beats K=64 by 1.8x because a
    # short FMA chain overlaps better in the core than a long one. The roof must cover it.
    measured = {1: 1.3476e9, 4: 5.0183e9, 16: 26.921e9, 64: 14.912e9}
    points = [
        SweepPoint(k=k, intensity_flop_per_byte=k / 4, flop_per_s=f, seconds=1.0)
        for k, f in measured.items()
    ]
    result = fit.fit_sweep(points)
    assert result is not None
    bandwidth, peaks, spikes = fit.fit_ceilings(
        memory=_memory(5.465e9), matmul=_matmul("fp32", 17.11e9), sweep_fit=result, sweep=points
    )
    assert spikes == ()
    assert peaks["fp32"] == pytest.approx(26.921e9)
    assert bandwidth["dram"] == pytest.approx(26.921e9 / 4)  # K=16 proves W >= F / I too
    for p in points:
        assert p.flop_per_s <= roof(p.intensity_flop_per_byte, bandwidth["dram"], peaks["fp32"]) * (
            1 + 1e-9
        )


def test_on_a_busy_machine_the_undisturbed_point_is_not_the_outlier():
    # Measured here under load 5-8 on 2 vCPUs: most points were slowed; K=2 ran undisturbed at
    # the same rate as the read-only memory test (66 GB/s). It must lift the roof, not be
    # dropped, even though the sweep's own median fit puts it 5.8x above.
    measured = {
        1: 3.60e9,
        2: 33.3e9,
        4: 8.41e9,
        8: 18.1e9,
        16: 33.7e9,
        32: 31.7e9,
        64: 38.3e9,
        128: 12.9e9,
        256: 11.6e9,
    }
    points = [
        SweepPoint(k=k, intensity_flop_per_byte=k / 4, flop_per_s=f, seconds=1.0)
        for k, f in measured.items()
    ]
    result = fit.fit_sweep(points)
    assert result is not None and 5 * result.bandwidth_byte_per_s < 2 * 33.3e9
    bandwidth, peaks, spikes = fit.fit_ceilings(
        memory=_memory(65.3e9), matmul=_matmul("fp32", 38.9e9), sweep_fit=result, sweep=points
    )
    assert spikes == ()
    assert bandwidth["dram"] == pytest.approx(2 * 33.3e9)
    assert peaks["fp32"] == pytest.approx(38.9e9)
