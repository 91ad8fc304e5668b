"""Builders for synthetic calibrations (known answers for the fit, health and chart tests)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from service.calibrate.model import Ceilings, DeviceIdentity, MemoryResult, SweepPoint

KS = tuple(2**i for i in range(11))  # 1 .. 1024, intensity K / 4 for fp32 read + write


def roof(intensity: float, bandwidth: float, peak: float) -> float:
    return min(peak, intensity * bandwidth)


def make_points(
    bandwidth: float,
    peak: float,
    *,
    ks: Sequence[int] = KS,
    factors: Mapping[int, float] | None = None,
) -> list[SweepPoint]:
    """Sweep points exactly on ``min(P, I W)``, each scaled by ``factors[k]`` (default 1)."""
    points = []
    for k in ks:
        intensity = 2 * k / 8
        flops = roof(intensity, bandwidth, peak) * (factors or {}).get(k, 1.0)
        points.append(
            SweepPoint(
                k=k, intensity_flop_per_byte=intensity, flop_per_s=flops, seconds=2 * k / flops
            )
        )
    return points


def make_ceilings(
    *,
    bandwidth: Mapping[str, float] | None = None,
    peaks: Mapping[str, float] | None = None,
    device: str = "NVIDIA H100 80GB HBM3",
    runner: str | None = "gpu-runner-1",
    throttle: tuple[str, ...] = (),
    sweep: Sequence[SweepPoint] = (),
    created_at: datetime | None = None,
    quick: bool = False,
) -> Ceilings:
    bandwidth = dict(bandwidth or {"dram": 3.1e12})
    peaks = dict(peaks or {"fp32": 60e12, "tensor_bf16": 800e12})
    memory = tuple(
        MemoryResult(name="copy", bytes=8e9, seconds=8e9 / bw, byte_per_s=bw)
        for tier, bw in bandwidth.items()
        if tier == "dram"
    )
    return Ceilings(
        device=device,
        catalog_id="H100-SXM5" if "H100" in device else None,
        backend="torch",
        host="host-a",
        runner=runner,
        quick=quick,
        bandwidth_byte_per_s=bandwidth,
        peak_flop_per_s=peaks,
        sweep=tuple(sweep),
        memory=memory,
        ridge_flop_per_byte={p: v / bandwidth["dram"] for p, v in peaks.items()}
        if "dram" in bandwidth
        else {},
        identity=DeviceIdentity(name=device, kind="cuda", index=0, throttle_reasons=throttle),
        created_at=created_at or datetime.now(UTC),
    )


def scaled(ceilings: Ceilings, factor: float, **changes: object) -> Ceilings:
    """A copy with every ceiling multiplied by ``factor``."""
    return ceilings.model_copy(
        update={
            "bandwidth_byte_per_s": {
                k: v * factor for k, v in ceilings.bandwidth_byte_per_s.items()
            },
            "peak_flop_per_s": {k: v * factor for k, v in ceilings.peak_flop_per_s.items()},
            **changes,
        }
    )
