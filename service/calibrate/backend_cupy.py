"""The CuPy backend: CUDA devices only, timed with CUDA events.

Its sweep is one hand-written elementwise kernel (K fused multiply-adds per element in a loop),
so it needs no compiler beyond the NVRTC that CuPy ships with. Not exercised in this project's
CI (no GPU there); the torch backend is the tested reference.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from service.calibrate.backend import (
    GPU_MIN_TIMED_S,
    MAX_CALLS,
    CalibrateExtraMissing,
    Case,
    NoGpu,
    Unsupported,
)
from service.calibrate.device_info import gpu_identity
from service.calibrate.model import DeviceIdentity, DeviceKind
from service.errors import BadInput

_SWEEP_SOURCE = """
float v = x;
#pragma unroll 16
for (int i = 0; i < k; ++i) { v = fmaf(v, 0.9999999f, 1e-7f); }
y = v;
"""
#: cublas computes fp32 on CUDA cores and fp16 on tensor cores; fp64 uses DMMA from sm_80.
_DTYPES = {"fp32": "float32", "fp16": "float16", "fp64": "float64"}


def _import_cupy() -> Any:
    try:
        import cupy
    except ImportError as exc:
        raise CalibrateExtraMissing("cupy") from exc
    return cupy


class CupyBackend:
    """Measurements through CuPy on ``device`` ("cuda" or "cuda:N")."""

    name = "cupy"
    timer = "CUDA events"

    def __init__(self, device: str) -> None:
        if device != "cuda" and not device.startswith("cuda:"):
            raise BadInput(f"--device {device}: the cupy backend measures CUDA devices only")
        self.cp = _import_cupy()
        self.index = int(device.partition(":")[2] or 0)
        try:
            count = self.cp.cuda.runtime.getDeviceCount()
        except self.cp.cuda.runtime.CUDARuntimeError as exc:  # no driver, or no device
            raise NoGpu(device, f"CuPy sees no CUDA device ({exc})") from exc
        if count == 0:
            raise NoGpu(device, "CuPy sees no CUDA device")
        self.cp.cuda.Device(self.index).use()
        self.kind: DeviceKind = "cuda"
        self._sweep_kernel = self.cp.ElementwiseKernel(
            "float32 x, int32 k", "float32 y", _SWEEP_SOURCE, "roofguard_fma_chain"
        )

    def identity(self) -> DeviceIdentity:
        """Identity from the CUDA runtime, clocks and throttle reasons from NVML."""
        runtime = self.cp.cuda.runtime
        props = runtime.getDeviceProperties(self.index)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        bus = f"{props['pciDomainID']:08x}:{props['pciBusID']:02x}:{props['pciDeviceID']:02x}.0"
        return gpu_identity(
            index=self.index,
            pci_bus_id=bus,
            name=name,
            runtime=f"cupy {self.cp.__version__}, cuda runtime {runtime.runtimeGetVersion()}",
            compute_capability=f"{props['major']}.{props['minor']}",
            sm_count=props["multiProcessorCount"],
            memory_bytes=float(props["totalGlobalMem"]),
        )

    def _time_calls(self, run: Callable[[], object], calls: int) -> float:
        begin, end = self.cp.cuda.Event(), self.cp.cuda.Event()
        begin.record()
        for _ in range(calls):
            run()
        end.record()
        end.synchronize()
        return float(self.cp.cuda.get_elapsed_time(begin, end)) / 1e3

    def time_best(self, case: Case, *, warmup: int, reps: int) -> float:
        """Best of ``reps`` event-timed repetitions of back-to-back calls (>= 5 ms each)."""
        for _ in range(warmup):
            case.run()
        self.cp.cuda.Device(self.index).synchronize()
        once = self._time_calls(case.run, 1)
        calls = max(1, min(MAX_CALLS, math.ceil(GPU_MIN_TIMED_S / max(once, 1e-9))))
        return min(self._time_calls(case.run, calls) for _ in range(reps)) / calls

    def _vector(self, elements: int) -> Any:
        return self.cp.random.random(elements, dtype=self.cp.float32)

    def copy_case(self, elements: int) -> Case:
        """``copyto(dst, src)``: 4 bytes read and 4 written per element."""
        src, dst = self._vector(elements), self._vector(elements)
        return Case(lambda: self.cp.copyto(dst, src), bytes=8.0 * elements)

    def reduce_case(self, elements: int) -> Case:
        """``src.sum()``: 4 bytes read per element."""
        src = self._vector(elements)
        return Case(src.sum, bytes=4.0 * elements + 4.0)

    def matmul_case(self, precision: str, n: int) -> tuple[str, Case]:
        """fp32 (CUDA cores), fp16 (tensor cores) and fp64; others are not in CuPy."""
        if precision not in _DTYPES:
            raise Unsupported(f"{precision}: not available through cupy (use --backend torch)")
        major = int(self.cp.cuda.Device(self.index).compute_capability[:-1] or 0)
        fp64_key = "tensor_fp64" if major >= 8 else "fp64"
        key = {"fp32": "fp32", "fp16": "tensor_fp16", "fp64": fp64_key}[precision]
        a = self.cp.random.random((n, n)).astype(_DTYPES[precision])
        b = self.cp.random.random((n, n)).astype(_DTYPES[precision])
        out = self.cp.empty((n, n), dtype=_DTYPES[precision])
        return key, Case(lambda: self.cp.matmul(a, b, out=out), flops=2.0 * n**3)

    def prepare_sweep(self, impl: str) -> str:
        """CuPy's sweep is always one fused kernel; ``eager`` is not offered."""
        if impl not in ("auto", "compiled"):
            raise BadInput(f"--sweep {impl}: the cupy backend has only its fused kernel (auto)")
        return "sweep: one CuPy elementwise kernel with a loop of K fmaf per element"

    def sweep_case(self, elements: int, k: int) -> Case:
        """``k`` fmaf per element; one read and one write of the fp32 vector."""
        x, y = self._vector(elements), self._vector(elements)
        return Case(
            lambda: self._sweep_kernel(x, k, y), flops=2.0 * k * elements, bytes=8.0 * elements
        )
