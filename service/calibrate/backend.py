"""What a measuring backend (torch, cupy) provides to the calibration driver.

Importing this module imports no array library: backends are loaded on demand by
``load_backend`` so that the rest of roofguard runs without the ``calibrate`` extra.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from service.calibrate.model import DeviceIdentity, DeviceKind
from service.errors import BadInput

#: Device time one GPU repetition spans (back-to-back calls), and the most calls it may take.
GPU_MIN_TIMED_S, MAX_CALLS = 5e-3, 1000

#: --backend name -> "module:Class"; one line per backend.
BACKENDS: dict[str, str] = {
    "torch": "service.calibrate.backend_torch:TorchBackend",
    "cupy": "service.calibrate.backend_cupy:CupyBackend",
}


class CalibrateExtraMissing(BadInput):
    """The array library a backend needs is not installed."""

    def __init__(self, package: str) -> None:
        self.package = package
        super().__init__(
            f"roofguard calibrate needs {package}, which is not installed: "
            f"pip install 'roofguard[calibrate]' (or pip install {package})"
        )


class NoGpu(BadInput):
    """The backend sees no GPU: a CPU-only build of its array library, or no driver.

    Attributes:
        detail: What the backend saw, for the health file (``torch 2.4.0+cpu sees no CUDA device``).
    """

    def __init__(self, device: str, detail: str) -> None:
        self.detail = detail
        super().__init__(f"--device {device}: {detail}")


class Unsupported(Exception):
    """A measurement this backend or device cannot make (fp8 before sm_89, bf16 on CPU ...)."""


@dataclass(frozen=True)
class Case:
    """One prepared measurement: a callable and the work one call does.

    Attributes:
        run: Does the work once (asynchronously on GPUs; the timer synchronises).
        flops: FLOPs per call.
        bytes: Bytes read plus written per call.
    """

    run: Callable[[], object]
    flops: float = 0.0
    bytes: float = 0.0


class Backend(Protocol):
    """A measuring backend bound to one device."""

    name: str
    kind: DeviceKind
    timer: str

    def identity(self) -> DeviceIdentity:
        """Identity, driver, clocks and throttle reasons of the device."""
        ...

    def time_best(self, case: Case, *, warmup: int, reps: int) -> float:
        """Best time of one call in seconds, after ``warmup`` untimed calls."""
        ...

    def copy_case(self, elements: int) -> Case:
        """A device-to-device copy of ``elements`` fp32 values."""
        ...

    def reduce_case(self, elements: int) -> Case:
        """A sum over ``elements`` fp32 values (read-mostly)."""
        ...

    def matmul_case(self, precision: str, n: int) -> tuple[str, Case]:
        """The schema key and an ``n x n`` product at ``precision``; raises Unsupported."""
        ...

    def prepare_sweep(self, impl: str) -> str:
        """Choose the sweep implementation (auto, compiled, eager); returns a method note."""
        ...

    def sweep_case(self, elements: int, k: int) -> Case:
        """``k`` fused multiply-adds per element over ``elements`` fp32 values."""
        ...


def load_backend(name: str, device: str, threads: int | None = None) -> Backend:
    """The backend ``name`` bound to ``device`` ("cpu", "cuda", "cuda:1").

    ``threads`` limits the CPU threads the backend computes with (torch only).

    Raises:
        BadInput: Unknown backend or device.
        CalibrateExtraMissing: The backend's array library is not installed.
    """
    if name not in BACKENDS:
        raise BadInput(f"--backend: unknown backend {name!r} (known: {', '.join(BACKENDS)})")
    module_name, class_name = BACKENDS[name].split(":")
    factory: Callable[..., Backend] = getattr(importlib.import_module(module_name), class_name)
    if threads is None:
        return factory(device)
    if name != "torch":
        raise BadInput(f"--threads: only the torch backend computes on CPU threads, not {name}")
    if threads < 1:
        raise BadInput(f"--threads: must be at least 1, got {threads}")
    return factory(device, threads)
