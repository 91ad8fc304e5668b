"""Measure a runner's roofline: memory tests, matrix products and the intensity sweep.

The driver is backend-neutral (``service.calibrate.backend``); torch and cupy do the work. Every
figure is the best of several timed repetitions after warm-up, timed by the backend's timer
(CUDA events on GPUs, ``time.perf_counter`` on CPUs). Bytes are counted as read plus written.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass

from rules import builtin_catalog
from service.calibrate import fit
from service.calibrate.backend import Backend, Case, Unsupported
from service.calibrate.model import Ceilings, MatmulResult, MemoryResult, SweepPoint
from service.errors import BadInput

KNOWN_PRECISIONS = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8")
DEFAULT_PRECISIONS = {"cpu": ("fp32", "fp64"), "cuda": ("fp32", "tf32", "bf16", "fp16", "fp8")}
FULL_KS = tuple(2**i for i in range(11))  # 1 .. 1024 FMAs per element
FULL_KS_CPU = FULL_KS[:9]  # 1 .. 256: intensity 64 FLOP/byte is far past any CPU ridge
QUICK_KS = (1, 4, 16, 64, 256, 1024)
#: CPU ridges sit near 1-10 FLOP/byte (K = 4..40): K = 64 already lies on the plateau.
QUICK_KS_CPU = (1, 4, 16, 64)

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Plan:
    """Sizes and repetitions of one calibration.

    The quick subset keeps the sizes (so a preflight compares like with like against the full
    calibration) and drops sweep points and repetitions.

    Attributes:
        memory_elements: fp32 elements per array of the memory tests (well beyond the caches).
        matmul_n: Matrix size of the products.
        sweep_elements: fp32 elements of the intensity sweep.
        ks: FMAs per element of the sweep points.
        reps: Timed repetitions (the best counts).
        warmup: Untimed calls first (compilation, page faults, clocks ramping up).
        precisions: Matrix-product precisions (command-line names).
        sweep_impl: auto, compiled or eager.
        quick: Whether this is the quick subset.
    """

    memory_elements: int
    matmul_n: int
    sweep_elements: int
    ks: tuple[int, ...]
    reps: int
    warmup: int
    precisions: tuple[str, ...]
    sweep_impl: str = "auto"
    quick: bool = False

    @property
    def steps(self) -> int:
        """Number of measurements (for progress bars)."""
        return 2 + len(self.precisions) + len(self.ks)


def parse_precisions(text: str | None, kind: str) -> tuple[str, ...]:
    """``"fp32,bf16"`` -> ("fp32", "bf16"); the device's defaults when ``text`` is None."""
    if text is None:
        return DEFAULT_PRECISIONS[kind]
    names = tuple(dict.fromkeys(p.strip().lower() for p in text.split(",") if p.strip()))
    unknown = [p for p in names if p not in KNOWN_PRECISIONS]
    if unknown or not names:
        raise BadInput(
            f"--precisions: unknown {', '.join(unknown) or 'empty list'} "
            f"(known: {', '.join(KNOWN_PRECISIONS)})"
        )
    return names


def make_plan(kind: str, *, quick: bool, precisions: tuple[str, ...], sweep_impl: str) -> Plan:
    """The plan for a device kind; sizes exceed the caches of current CPUs and GPUs."""
    if kind == "cpu":
        ks = QUICK_KS_CPU if quick else FULL_KS_CPU
    else:
        ks = QUICK_KS if quick else FULL_KS
    if kind == "cpu":  # 64 MiB arrays: twice a 32 MiB L3
        sizes, reps, warmup = (16 << 20, 1024, 16 << 20), (3 if quick else 5), 1
    else:  # 1 GiB arrays: far beyond any GPU's L2; matrices big enough to fill an H100
        sizes, reps, warmup = (256 << 20, 8192, 64 << 20), (5 if quick else 10), 2
    return Plan(*sizes, ks, reps, warmup, precisions, sweep_impl, quick)


def _memory(backend: Backend, plan: Plan, step: Progress) -> list[MemoryResult]:
    results = []
    for name, make in (("copy", backend.copy_case), ("reduce", backend.reduce_case)):
        step(f"memory: {name}")
        case = make(plan.memory_elements)
        seconds = backend.time_best(case, warmup=plan.warmup, reps=plan.reps)
        results.append(
            MemoryResult(
                name=name, bytes=case.bytes, seconds=seconds, byte_per_s=case.bytes / seconds
            )
        )
        del case  # free the arrays before the next test allocates
    return results


def _matmul(backend: Backend, plan: Plan, step: Progress) -> tuple[list[MatmulResult], list[str]]:
    results, skipped = [], []
    for precision in plan.precisions:
        step(f"matmul: {precision}")
        try:
            key, case = backend.matmul_case(precision, plan.matmul_n)
        except Unsupported as exc:
            skipped.append(f"matmul {precision} skipped: {exc}")
            continue
        seconds = backend.time_best(case, warmup=plan.warmup, reps=plan.reps)
        results.append(
            MatmulResult(
                precision=precision,
                key=key,
                n=plan.matmul_n,
                flops=case.flops,
                seconds=seconds,
                flop_per_s=case.flops / seconds,
            )
        )
    return results, skipped


def _sweep_point(backend: Backend, plan: Plan, k: int) -> SweepPoint:
    case: Case = backend.sweep_case(plan.sweep_elements, k)
    seconds = backend.time_best(case, warmup=plan.warmup, reps=plan.reps)
    return SweepPoint(
        k=k,
        intensity_flop_per_byte=case.flops / case.bytes,
        flop_per_s=case.flops / seconds,
        seconds=seconds,
    )


def _sweep(backend: Backend, plan: Plan, step: Progress) -> list[SweepPoint]:
    points = []
    for k in plan.ks:
        step(f"sweep: K={k}")
        points.append(_sweep_point(backend, plan, k))
    return points


def _method(backend: Backend, plan: Plan, sweep_note: str) -> list[str]:
    return [
        f"backend: {backend.name} on {backend.kind}; timer: {backend.timer}",
        f"best of {plan.reps} timed repetitions after {plan.warmup} warm-up call(s)"
        + (
            "; each GPU repetition times back-to-back calls for >= 5 ms"
            if backend.kind == "cuda"
            else ""
        ),
        f"memory: copy and sum of {plan.memory_elements * 4 >> 20} MiB fp32 arrays; "
        "bytes = read + written",
        f"matmul: {plan.matmul_n} x {plan.matmul_n}, FLOPs = 2 n^3",
        f"{sweep_note}; {plan.sweep_elements * 4 >> 20} MiB fp32; "
        f"K = {', '.join(map(str, plan.ks))}",
    ]


def run_calibration(
    backend: Backend, plan: Plan, *, runner: str | None = None, progress: Progress | None = None
) -> Ceilings:
    """Measure, fit and return the ceilings of ``backend``'s device."""
    step = progress or (lambda _label: None)
    identity = backend.identity()
    sweep_note = backend.prepare_sweep(plan.sweep_impl)
    memory = _memory(backend, plan, step)
    matmul, skipped = _matmul(backend, plan, step)
    sweep = _sweep(backend, plan, step)
    sweep_fit = fit.fit_sweep(sweep)
    bandwidth, peaks, spikes = fit.fit_ceilings(
        memory=memory, matmul=matmul, sweep_fit=sweep_fit, sweep=sweep
    )
    if sweep_fit is not None:
        sweep_fit = sweep_fit.model_copy(update={"spikes": spikes})
    spec = builtin_catalog().find(identity.name)
    return Ceilings(
        device=identity.name,
        catalog_id=spec.id if spec else None,
        backend=backend.name,
        host=socket.gethostname(),
        runner=runner,
        quick=plan.quick,
        bandwidth_byte_per_s=bandwidth,
        peak_flop_per_s=peaks,
        ridge_flop_per_byte=fit.ridges(peaks, bandwidth),
        sweep=tuple(sweep),
        sweep_fit=sweep_fit,
        memory=tuple(memory),
        matmul=tuple(matmul),
        datasheet_ratio=fit.datasheet_ratios(spec, peaks, bandwidth),
        identity=identity,
        method=tuple(_method(backend, plan, sweep_note) + skipped),
    )
