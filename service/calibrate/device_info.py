"""Who did the measuring: device identity, driver, clocks and throttle reasons.

GPU clocks and throttle reasons come from NVML through nvidia-ml-py (``import pynvml``) when it
is installed; without it those fields stay empty and ``notes`` says why. On CPU: the processor
name from /proc/cpuinfo (or ``platform``) and the number of logical CPUs.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

from service.calibrate.model import DeviceIdentity

#: NVML ``nvmlClocksThrottleReason*`` (a.k.a. clocks event reasons) bits and our names.
THROTTLE_BITS: tuple[tuple[int, str], ...] = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
)


def decode_throttle_reasons(mask: int) -> tuple[str, ...]:
    """Names of the throttle reasons set in an NVML reason bit mask."""
    return tuple(name for bit, name in THROTTLE_BITS if mask & bit)


def cpu_name() -> str:
    """The processor's model name ("AMD EPYC 9654 ..."), or the platform's best guess."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_identity(*, threads: int | None, runtime: str | None) -> DeviceIdentity:
    """Identity of the host CPU."""
    return DeviceIdentity(
        name=cpu_name(), kind="cpu", cpu_cores=os.cpu_count(), threads=threads, runtime=runtime
    )


def _nvml_handle(pynvml: Any, index: int, pci_bus_id: str | None) -> Any:
    # CUDA and NVML number devices differently under CUDA_VISIBLE_DEVICES: prefer the bus id.
    if pci_bus_id:
        try:
            return pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
        except pynvml.NVMLError:
            pass
    return pynvml.nvmlDeviceGetHandleByIndex(index)


def _throttle_mask(pynvml: Any, handle: Any) -> int:
    # nvidia-ml-py 12.535 renamed "throttle reasons" to "clocks event reasons".
    getter = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
    getter = getter or pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
    return int(getter(handle))


def _as_text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def nvml_snapshot(index: int, pci_bus_id: str | None = None) -> dict[str, Any]:
    """Driver, clocks and throttle reasons from NVML, as DeviceIdentity fields.

    Returns only ``notes`` when nvidia-ml-py is absent or NVML fails (no driver, no device).
    """
    try:
        import pynvml
    except ImportError:
        return {"notes": ("nvidia-ml-py not installed: no clocks or throttle reasons",)}
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return {"notes": (f"NVML unavailable: {exc}",)}
    try:
        handle = _nvml_handle(pynvml, index, pci_bus_id)
        return {
            "driver": _as_text(pynvml.nvmlSystemGetDriverVersion()),
            "sm_clock_hz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM) * 1e6,
            "memory_clock_hz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM) * 1e6,
            "max_sm_clock_hz": pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM) * 1e6,
            "throttle_reasons": decode_throttle_reasons(_throttle_mask(pynvml, handle)),
        }
    except pynvml.NVMLError as exc:
        return {"notes": (f"NVML query failed: {exc}",)}
    finally:
        pynvml.nvmlShutdown()


def gpu_identity(*, index: int, pci_bus_id: str | None = None, **fields: Any) -> DeviceIdentity:
    """Identity of a CUDA device: the runtime's ``fields`` merged with an NVML snapshot."""
    snapshot = nvml_snapshot(index, pci_bus_id)
    notes = tuple(fields.pop("notes", ())) + tuple(snapshot.pop("notes", ()))
    merged = {**fields, **{k: v for k, v in snapshot.items() if v is not None}}
    return DeviceIdentity(kind="cuda", index=index, notes=notes, **merged)
