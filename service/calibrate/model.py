"""The calibration record: what a runner measured, and the ceilings fitted from it.

Pure pydantic models (no torch, no SQL) so that ``check``, the store and the tests can read a
``ceilings.json`` on machines without the ``calibrate`` extra. SI units throughout.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from collectors.schema import NonNeg, Precision, Tier
from rules import Roof

CEILINGS_VERSION = 1
DeviceKind = Literal["cpu", "cuda"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SweepPoint(_Model):
    """One point of the intensity sweep: K fused multiply-adds per element.

    Attributes:
        k: Fused multiply-adds per element (2 FLOP each).
        precision: Schema precision of the arithmetic, e.g. "fp32".
        intensity_flop_per_byte: FLOPs over the bytes read and written once per element.
        flop_per_s: Achieved FLOP/s (best of the timed repetitions).
        seconds: Best time of one call.
    """

    k: int = Field(ge=1)
    precision: Precision = "fp32"
    intensity_flop_per_byte: NonNeg
    flop_per_s: NonNeg
    seconds: NonNeg


class MemoryResult(_Model):
    """One memory test (STREAM-like).

    Attributes:
        name: "copy" (device-to-device copy) or "reduce" (read-mostly sum).
        tier: The memory tier the working set exceeds the caches for ("dram").
        bytes: Bytes read plus written per call.
        seconds: Best time of one call.
        byte_per_s: ``bytes / seconds``.
    """

    name: str
    tier: Tier = "dram"
    bytes: NonNeg
    seconds: NonNeg
    byte_per_s: NonNeg


class MatmulResult(_Model):
    """One matrix product ``n x n @ n x n`` at one precision.

    Attributes:
        precision: The name asked for on the command line (fp32, tf32, bf16, fp16, fp8, fp64).
        key: The schema precision its peak is stored under (fp32, tensor_bf16 ...).
        n: Matrix size.
        flops: ``2 n^3``.
        seconds: Best time of one product.
        flop_per_s: ``flops / seconds``.
    """

    precision: str
    key: Precision
    n: int = Field(ge=1)
    flops: NonNeg
    seconds: NonNeg
    flop_per_s: NonNeg


class SweepFit(_Model):
    """The roofline ``min(P, I W)`` fitted to the sweep points.

    Attributes:
        bandwidth_byte_per_s: Slope of the climbing part.
        peak_flop_per_s: Height of the plateau.
        ridge_flop_per_byte: Where slope and plateau meet, ``P / W``.
        slope_points: How many points the slope was fitted from (the rest form the plateau).
        median_abs_log_residual: Median of ``|ln(measured / fitted)|``, a noise figure.
        climbed: Whether some points lie left of the ridge (the slope was observed).
        flattened: Whether some points lie right of the ridge (the plateau was observed).
        spikes: K of points far above the roof the other measurements support (ignored as
            glitches; see ``fit.fit_ceilings``).
    """

    bandwidth_byte_per_s: NonNeg
    peak_flop_per_s: NonNeg
    ridge_flop_per_byte: NonNeg
    slope_points: int
    median_abs_log_residual: NonNeg
    climbed: bool
    flattened: bool
    spikes: tuple[int, ...] = ()


class DeviceIdentity(_Model):
    """What was measured: identity, driver, clocks and throttle state.

    Attributes:
        name: Device name as the runtime reports it ("NVIDIA H100 80GB HBM3", "AMD EPYC").
        kind: cpu or cuda.
        index: CUDA device index (None on CPU).
        driver: Driver version (NVML or the CUDA runtime), when known.
        runtime: Library versions, e.g. "torch 2.13.0+cpu, cuda 12.4".
        compute_capability: e.g. "9.0".
        sm_count: SMs (GPU).
        cpu_cores: Logical CPUs visible to the process (CPU).
        threads: Threads the backend computes with (CPU).
        memory_bytes: Device memory.
        sm_clock_hz: SM clock at the time of measurement (NVML).
        memory_clock_hz: Memory clock at the time of measurement (NVML).
        max_sm_clock_hz: Highest SM clock the device allows (NVML).
        throttle_reasons: Active clock-throttle reasons (NVML names, e.g. "hw_thermal_slowdown").
        notes: Why a field is missing (no NVML, ...).
    """

    name: str
    kind: DeviceKind
    index: int | None = None
    driver: str | None = None
    runtime: str | None = None
    compute_capability: str | None = None
    sm_count: int | None = None
    cpu_cores: int | None = None
    threads: int | None = None
    memory_bytes: NonNeg | None = None
    sm_clock_hz: NonNeg | None = None
    memory_clock_hz: NonNeg | None = None
    max_sm_clock_hz: NonNeg | None = None
    throttle_reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


class Ceilings(_Model):
    """A runner's measured roofline, as ``roofguard calibrate`` writes it (``ceilings.json``).

    Attributes:
        version: Version of this format.
        device: Device name as reported (see ``identity``).
        catalog_id: The hardware-catalog id of the device, when the catalog knows it.
        backend: torch or cupy.
        host: Host name of the machine.
        runner: CI runner name (``--runner``, ``$RUNNER_NAME`` or the host name).
        created_at: When the calibration ran (UTC).
        quick: Whether only the quick subset ran (health preflight).
        bandwidth_byte_per_s: Fitted bandwidth per tier.
        peak_flop_per_s: Fitted peak per schema precision.
        ridge_flop_per_byte: ``peak / dram bandwidth`` per precision.
        sweep_precision: Precision of the intensity sweep.
        sweep: The sweep points.
        sweep_fit: The roofline fitted to the sweep (None with fewer than two usable points).
        memory: The memory tests.
        matmul: The matrix products.
        datasheet_ratio: Measured over datasheet, keyed "bandwidth.<tier>" or "peak.<precision>".
        identity: Device identity, driver, clocks, throttle reasons.
        method: How it was measured (timer, sweep implementation, sizes, skipped precisions).
    """

    version: int = CEILINGS_VERSION
    device: str
    catalog_id: str | None = None
    backend: str
    host: str
    runner: str | None = None
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    quick: bool = False
    bandwidth_byte_per_s: dict[Tier, NonNeg] = Field(default_factory=dict)
    peak_flop_per_s: dict[Precision, NonNeg] = Field(default_factory=dict)
    ridge_flop_per_byte: dict[Precision, NonNeg] = Field(default_factory=dict)
    sweep_precision: Precision = "fp32"
    sweep: tuple[SweepPoint, ...] = ()
    sweep_fit: SweepFit | None = None
    memory: tuple[MemoryResult, ...] = ()
    matmul: tuple[MatmulResult, ...] = ()
    datasheet_ratio: dict[str, NonNeg] = Field(default_factory=dict)
    identity: DeviceIdentity
    method: tuple[str, ...] = ()

    def roof(self) -> Roof:
        """The measured roof (source "measured") that ``check`` judges kernels against."""
        return Roof(
            self.catalog_id or self.device,
            "measured",
            {precision: peak for precision, peak in self.peak_flop_per_s.items()},
            {tier: bandwidth for tier, bandwidth in self.bandwidth_byte_per_s.items()},
        )
