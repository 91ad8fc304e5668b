"""Matrix products per precision for the PyTorch backend (the tensor-core ceilings)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.calibrate.backend import Case, Unsupported
from service.calibrate.torch_target import TorchTarget

#: CPU products are stored under the non-tensor keys; the schema has no non-tensor bf16.
CPU_KEYS = {"fp32": "fp32", "fp64": "fp64"}
GPU_KEYS = {
    "fp32": "fp32",
    "tf32": "tensor_tf32",
    "bf16": "tensor_bf16",
    "fp16": "tensor_fp16",
    "fp8": "tensor_fp8",
    "fp64": "tensor_fp64",
}


def _key(backend: TorchTarget, precision: str) -> str:
    if backend.kind == "cpu":
        if precision not in CPU_KEYS:
            raise Unsupported(f"{precision} on CPU: no CPU ceiling for it in the schema")
        return CPU_KEYS[precision]
    capability = backend.torch.cuda.get_device_capability(backend.device)
    if precision == "fp64" and capability < (8, 0):
        return "fp64"  # DMMA tensor cores start with sm_80
    sm = f"sm_{capability[0]}{capability[1]}"
    if precision in ("tf32", "bf16") and capability < (8, 0):
        raise Unsupported(f"{precision} needs sm_80 or newer (device is {sm})")
    if precision == "fp8" and capability < (8, 9):
        raise Unsupported(f"fp8 needs sm_89 or newer (device is {sm})")
    return GPU_KEYS[precision]


def _fp8_case(backend: TorchTarget, n: int) -> Case:
    torch = backend.torch
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        raise Unsupported(f"fp8: torch {torch.__version__} has no _scaled_mm")
    a = torch.randn(n, n, device=backend.device).to(torch.float8_e4m3fn)
    b = torch.randn(n, n, device=backend.device).to(torch.float8_e4m3fn).t()  # column-major
    scale = torch.ones((), device=backend.device)

    def run() -> Any:
        return torch._scaled_mm(a, b, scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)

    return Case(run, flops=2.0 * n**3)


def _tf32_switch(torch: Any, tf32: bool) -> Callable[[], None]:
    """A setter for cuBLAS's fp32 mode: ``fp32_precision`` (torch >= 2.9), else ``allow_tf32``."""
    flags = torch.backends.cuda.matmul
    if hasattr(flags, "fp32_precision"):
        mode = "tf32" if tf32 else "ieee"

        def set_precision() -> None:
            flags.fp32_precision = mode

        return set_precision

    def set_allow() -> None:
        flags.allow_tf32 = tf32

    return set_allow


def _dense_case(backend: TorchTarget, precision: str, n: int) -> Case:
    torch = backend.torch
    dtype = {
        "fp32": torch.float32,
        "tf32": torch.float32,
        "bf16": torch.bfloat16,
        "fp16": torch.float16,
        "fp64": torch.float64,
    }[precision]
    a = torch.randn(n, n, device=backend.device, dtype=dtype)
    b = torch.randn(n, n, device=backend.device, dtype=dtype)
    out = torch.empty(n, n, device=backend.device, dtype=dtype)
    if backend.kind == "cpu":
        return Case(lambda: torch.mm(a, b, out=out), flops=2.0 * n**3)
    set_tf32 = _tf32_switch(torch, precision == "tf32")

    def run() -> Any:
        # The switch is global: set it on every call so that fp32 never silently uses TF32.
        set_tf32()
        return torch.mm(a, b, out=out)

    return Case(run, flops=2.0 * n**3)


def matmul_case(backend: TorchTarget, precision: str, n: int) -> tuple[str, Case]:
    """The schema key and a prepared ``n x n`` product; raises Unsupported."""
    key = _key(backend, precision)
    if precision == "fp8":
        return key, _fp8_case(backend, n)
    return key, _dense_case(backend, precision, n)
