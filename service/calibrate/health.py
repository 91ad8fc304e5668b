"""The health preflight's decision: is this runner as fast tonight as its own calibration?

Pure: compares two ``Ceilings`` (a quick measurement now, the stored calibration) and returns a
``Health``; reading and writing ``health.json`` lives in ``service.calibrate.storage``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from service.calibrate.model import Ceilings

HealthStatus = Literal["healthy", "degraded", "uncalibrated", "no-gpu"]
DEFAULT_TOLERANCE = 0.8

#: NVML throttle reasons that slow a GPU below its calibrated clocks (idle, application clock
#: settings and sync boost are normal states and do not count).
SLOWING_THROTTLE_REASONS = frozenset(
    {
        "sw_power_cap",
        "hw_slowdown",
        "sw_thermal_slowdown",
        "hw_thermal_slowdown",
        "hw_power_brake_slowdown",
    }
)

_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


class Health(BaseModel):
    """The preflight's verdict on a runner, written to ``.roofguard/health.json``.

    Attributes:
        trusted: False when no regression verdict should be drawn from this runner's runs.
        status: healthy, degraded, uncalibrated (no stored ceilings to compare with), or
            no-gpu (the runner sees no GPU: nothing measured).
        runner: The runner checked.
        device: The device checked.
        checked_at: When the preflight ran.
        calibrated_at: When the stored ceilings were measured.
        tolerance: The lowest acceptable ratio of measured to calibrated.
        ratios: Measured over calibrated, keyed "bandwidth.<tier>" or "peak.<precision>".
        reasons: What is off, one line each (empty when healthy).
        notes: What changed without making the runner slower (driver, clocks, a calibration
            that now looks too slow): reasons to recalibrate, not to distrust the run.
        message: One line for people.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    trusted: bool
    status: HealthStatus
    runner: str | None = None
    device: str
    checked_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    calibrated_at: datetime | None = None
    tolerance: float = DEFAULT_TOLERANCE
    ratios: dict[str, float] = Field(default_factory=dict)
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    message: str


def format_rate(value: float, unit: str) -> str:
    """``3.1e12, "B/s"`` -> "3.1 TB/s" (two or three significant digits)."""
    for factor, prefix in _PREFIXES:
        if value >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def ceiling_ratios(current: Ceilings, stored: Ceilings) -> dict[str, float]:
    """Current over stored for every ceiling both measured."""
    ratios: dict[str, float] = {}
    for tier, value in stored.bandwidth_byte_per_s.items():
        now = current.bandwidth_byte_per_s.get(tier)
        if now is not None and value > 0:
            ratios[f"bandwidth.{tier}"] = now / value
    for precision, value in stored.peak_flop_per_s.items():
        now = current.peak_flop_per_s.get(precision)
        if now is not None and value > 0:
            ratios[f"peak.{precision}"] = now / value
    return ratios


def _describe(key: str, ratio: float, stored: Ceilings) -> str:
    kind, name = key.split(".", 1)
    if kind == "bandwidth":
        figure = format_rate(stored.bandwidth_byte_per_s[name], "B/s")
        what = f"{name} bandwidth"
    else:
        figure = format_rate(stored.peak_flop_per_s[name], "FLOP/s")
        what = f"{name} peak"
    return f"{what} {ratio:.0%} of this runner's calibrated {figure}"


def _reasons(
    ratios: dict[str, float], current: Ceilings, stored: Ceilings, tolerance: float
) -> list[str]:
    reasons = [
        _describe(k, r, stored)
        for k, r in sorted(ratios.items(), key=lambda kv: kv[1])
        if r < tolerance
    ]
    slowing = sorted(set(current.identity.throttle_reasons) & SLOWING_THROTTLE_REASONS)
    if slowing:
        reasons.append(f"clocks throttled: {', '.join(slowing)}")
    if not ratios:
        reasons.append("no ceiling in common with the stored calibration (different precisions?)")
    return reasons


def _changes(
    ratios: dict[str, float], current: Ceilings, stored: Ceilings, tolerance: float
) -> list[str]:
    now, then = current.identity, stored.identity
    notes = []
    if now.driver and then.driver and now.driver != then.driver:
        notes.append(f"driver {then.driver} at calibration, {now.driver} now")
    if now.max_sm_clock_hz and then.max_sm_clock_hz and now.max_sm_clock_hz != then.max_sm_clock_hz:
        notes.append(
            f"max SM clock {then.max_sm_clock_hz / 1e6:.0f} MHz at calibration, "
            f"{now.max_sm_clock_hz / 1e6:.0f} MHz now"
        )
    faster = sorted(k for k, r in ratios.items() if r > 1 / tolerance)
    if faster:
        notes.append(
            f"{', '.join(faster)} faster than calibrated: the calibration may have "
            "run on a busy machine"
        )
    if notes:
        notes.append("recalibrate with `roofguard calibrate --store`")
    return notes


def decide_health(
    *, current: Ceilings, stored: Ceilings, tolerance: float = DEFAULT_TOLERANCE
) -> Health:
    """Healthy when every common ceiling is at least ``tolerance`` of the stored one.

    Also degraded when NVML reports a slowing throttle reason, or when nothing can be compared.
    """
    if not 0 < tolerance <= 1:
        raise ValueError(f"tolerance must lie in (0, 1], got {tolerance}")
    ratios = ceiling_ratios(current, stored)
    reasons = _reasons(ratios, current, stored, tolerance)
    runner = current.runner or stored.runner
    if reasons:
        message = f"runner {runner or current.host} is degraded: " + "; ".join(reasons)
    else:
        lowest = min(ratios, key=lambda k: ratios[k])
        message = (
            f"runner {runner or current.host} is healthy: every ceiling within "
            f"{tolerance:.0%} of its calibration "
            f"(lowest: {_describe(lowest, ratios[lowest], stored)})"
        )
    return Health(
        trusted=not reasons,
        status="degraded" if reasons else "healthy",
        runner=runner,
        device=current.device,
        calibrated_at=stored.created_at,
        tolerance=tolerance,
        ratios=ratios,
        reasons=tuple(reasons),
        message=message,
        notes=tuple(_changes(ratios, current, stored, tolerance)),
    )


def uncalibrated(runner: str, device: str, where: str) -> Health:
    """The verdict when the runner has no stored ceilings: untrusted, with what to do."""
    reason = (
        f"no stored ceilings for runner {runner!r} and device {device!r} "
        f"in {where}; run `roofguard calibrate --store` on this runner first"
    )
    return Health(
        trusted=False,
        status="uncalibrated",
        runner=runner,
        device=device,
        reasons=(reason,),
        message=reason,
    )


def no_gpu(runner: str, device: str, detail: str) -> Health:
    """The verdict when the runner sees no GPU: untrusted, nothing measured, and why."""
    reason = f"no GPU visible ({detail})"
    return Health(
        trusted=False,
        status="no-gpu",
        runner=runner,
        device=device,
        reasons=(reason,),
        message=(
            f"runner {runner!r} is untrusted: {reason}; nothing was measured. Fix the runner "
            "(a CUDA build of torch, the driver), or check its CPU with --device cpu"
        ),
    )
