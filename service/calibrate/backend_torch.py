"""The PyTorch backend: CPU and CUDA devices; CUDA events on GPUs, perf_counter on CPU."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from service.calibrate import backend_torch_mm
from service.calibrate.backend import (
    GPU_MIN_TIMED_S,
    MAX_CALLS,
    CalibrateExtraMissing,
    Case,
    NoGpu,
)
from service.calibrate.device_info import cpu_identity, gpu_identity
from service.calibrate.model import DeviceIdentity, DeviceKind
from service.errors import BadInput

#: Elements per cache-resident block of the eager sweep: 512 KiB of fp32 on CPU (fits L2,
#: split over threads), 16 MiB on GPUs (fits the L2 of A100/H100-class parts).
EAGER_BLOCK = {"cpu": 128 * 1024, "cuda": 4 * 1024 * 1024}
#: Multiply and add constants of the sweep chain; 1 is their fixed point, so values stay finite
#: and normal (denormals would slow CPUs down) however long the chain.
CHAIN_A, CHAIN_B = 0.9999999, 1e-7


def _import_torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise CalibrateExtraMissing("torch") from exc
    return torch


def _chain(k: int) -> Callable[[Any, Any], None]:
    def chain(x: Any, out: Any) -> None:
        y = x
        for _ in range(k):
            y = y * CHAIN_A + CHAIN_B
        # Into a preallocated output: a fresh 64 MiB result per call would page-fault on CPU.
        out.copy_(y)

    return chain


def _pci_bus_id(props: Any) -> str | None:
    """NVML's "domain:bus:device.function" for a torch device, when torch reports it."""
    bus = getattr(props, "pci_bus_id", None)
    if bus is None:
        return None
    return f"{getattr(props, 'pci_domain_id', 0):08x}:{bus:02x}:{props.pci_device_id:02x}.0"


def eager_passes(blocks: list[Any], k: int) -> None:
    """``k`` in-place passes ``x += CHAIN_B * x`` (one FMA per element) over each block.

    Each block stays in cache for its k passes, so memory sees one read and one write.
    """
    for block in blocks:
        for _ in range(k):
            block.add_(block, alpha=CHAIN_B)


class TorchBackend:
    """Measurements through PyTorch on ``device`` ("cpu", "cuda", "cuda:N")."""

    name = "torch"

    def __init__(self, device: str, threads: int | None = None) -> None:
        torch = _import_torch()
        self.torch = torch
        if threads is not None:
            torch.set_num_threads(threads)  # CPU work; lets a shared box calibrate one core
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            self.device = torch.device(device)
        except RuntimeError as exc:
            raise BadInput(f"--device: {device!r} is not a torch device ({exc})") from exc
        if self.device.type not in ("cpu", "cuda"):
            raise BadInput(f"--device: {device!r}: only cpu and cuda devices are supported")
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise NoGpu(device, f"torch {torch.__version__} sees no CUDA device")
        self.kind: DeviceKind = "cuda" if self.device.type == "cuda" else "cpu"
        self.timer = "CUDA events" if self.kind == "cuda" else "time.perf_counter"
        self.compiled = False
        self._index = (self.device.index or 0) if self.kind == "cuda" else None
        if self._index is not None:
            torch.cuda.set_device(self._index)  # events record on the current device's stream

    def identity(self) -> DeviceIdentity:
        """Identity of the device (NVML clocks and throttle reasons on GPUs)."""
        torch = self.torch
        runtime = f"torch {torch.__version__}"
        if self.kind == "cpu":
            return cpu_identity(threads=torch.get_num_threads(), runtime=runtime)
        props = torch.cuda.get_device_properties(self.device)
        return gpu_identity(
            index=self._index or 0,
            pci_bus_id=_pci_bus_id(props),
            name=props.name,
            runtime=f"{runtime}, cuda {torch.version.cuda}",
            compute_capability=f"{props.major}.{props.minor}",
            sm_count=props.multi_processor_count,
            memory_bytes=float(props.total_memory),
        )

    def _sync(self) -> None:
        if self.kind == "cuda":
            self.torch.cuda.synchronize(self.device)

    def _time_calls(self, run: Callable[[], object], calls: int) -> float:
        if self.kind == "cpu":
            start = time.perf_counter()
            for _ in range(calls):
                run()
            return time.perf_counter() - start
        cuda = self.torch.cuda
        begin, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(calls):
            run()
        end.record()
        end.synchronize()
        return float(begin.elapsed_time(end)) / 1e3

    def time_best(self, case: Case, *, warmup: int, reps: int) -> float:
        """Best of ``reps`` timed calls after ``warmup`` untimed ones (compiles, caches, clocks).

        On GPUs each repetition enqueues back-to-back calls filling ``GPU_MIN_TIMED_S`` between
        the two events, so launch and Python overhead (tens of microseconds against a 0.1 ms
        kernel) do not count as device time.
        """
        for _ in range(warmup):
            case.run()
        self._sync()
        calls = 1
        if self.kind == "cuda":
            once = self._time_calls(case.run, 1)
            calls = max(1, min(MAX_CALLS, math.ceil(GPU_MIN_TIMED_S / max(once, 1e-9))))
        return min(self._time_calls(case.run, calls) for _ in range(reps)) / calls

    def _vector(self, elements: int, dtype: Any = None) -> Any:
        return self.torch.rand(elements, device=self.device, dtype=dtype or self.torch.float32)

    def copy_case(self, elements: int) -> Case:
        """``dst.copy_(src)``: 4 bytes read and 4 written per element."""
        src, dst = self._vector(elements), self._vector(elements)
        return Case(lambda: dst.copy_(src), bytes=8.0 * elements)

    def reduce_case(self, elements: int) -> Case:
        """``src.sum()``: 4 bytes read per element (the scalar written is negligible)."""
        src = self._vector(elements)
        return Case(src.sum, bytes=4.0 * elements + 4.0)

    def matmul_case(self, precision: str, n: int) -> tuple[str, Case]:
        """An ``n x n`` product; fp32 with TF32 off is the CUDA-core (non-tensor) figure."""
        return backend_torch_mm.matmul_case(self, precision, n)

    def prepare_sweep(self, impl: str) -> str:
        """Use torch.compile (one fused kernel per K) where asked and working, else eager."""
        if impl not in ("auto", "compiled", "eager"):
            raise BadInput(f"--sweep: unknown implementation {impl!r} (auto, compiled, eager)")
        # The eager loop pays one dispatch per block and pass, so its plateau is a cache rate;
        # a fused kernel reaches the FMA units. Compilation costs seconds per K (more on CPU).
        want = impl in ("auto", "compiled")
        if want:
            reason = self._try_compile()
            if reason is None:
                self.compiled = True
                return "sweep: torch.compile, one fused kernel of K FMAs per element"
            if impl == "compiled":
                raise BadInput(f"--sweep compiled: torch.compile does not work here: {reason}")
        block = EAGER_BLOCK[self.kind]
        note = (
            "sweep: eager in-place add_(alpha) loop over cache-resident blocks of "
            f"{block * 4 // 1024} KiB (plateau = cache rate, not the FMA peak)"
        )
        return note + (f" (torch.compile failed: {reason})" if want else "")

    def _try_compile(self) -> str | None:
        try:
            self.torch.compile(_chain(2))(self._vector(1024), self._vector(1024))
        except Exception as exc:  # any backend failure (no compiler, no triton) means eager
            return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        return None

    def sweep_case(self, elements: int, k: int) -> Case:
        """``k`` FMAs per element; bytes are one read and one write of the fp32 vector."""
        x = self._vector(elements)
        flops, nbytes = 2.0 * k * elements, 8.0 * elements
        if self.compiled:
            # Every K is a new graph of the same function: without a reset dynamo stops
            # recompiling after its recompile limit (8) and silently runs the loop eagerly.
            self.torch._dynamo.reset()
            compiled, out = self.torch.compile(_chain(k), dynamic=False), self._vector(elements)
            return Case(lambda: compiled(x, out), flops=flops, bytes=nbytes)
        blocks = list(x.split(EAGER_BLOCK[self.kind]))
        return Case(lambda: eager_passes(blocks, k), flops=flops, bytes=nbytes)
