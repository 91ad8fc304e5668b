"""Small keyword-default builders of records for tests (shared by every test package)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from collectors.schema import DeviceInfo, KernelRecord, ProfilerInfo, RunKind, RunRecord


def make_kernel(
    name: str = "gemv",
    *,
    key: str | None = None,
    flops: Mapping[str, float] | None = None,
    dram_bytes: float | None = 4e9,
    l2_bytes: float | None = None,
    time_s: float = 1e-3,
    launches: int = 1,
    **extra: Any,
) -> KernelRecord:
    """One kernel; ``flops`` defaults to 2 GFLOP of fp16, ``key`` to ``name``."""
    nbytes = {t: b for t, b in (("dram", dram_bytes), ("l2", l2_bytes)) if b is not None}
    return KernelRecord(
        name=name,
        key=key or name,
        launches=launches,
        duration_s=time_s,
        flops=dict(flops if flops is not None else {"fp16": 2e9}),
        bytes=nbytes,
        **extra,
    )


def make_device(name: str = "NVIDIA H100 80GB HBM3", **extra: Any) -> DeviceInfo:
    """A device as a profiler reports it."""
    return DeviceInfo(name=name, **extra)


def make_run(
    *,
    kernels: Iterable[KernelRecord] | None = None,
    repo: str | None = "acme/kernels",
    commit: str | None = "c0ffee0",
    branch: str | None = "main",
    kind: RunKind | str = RunKind.NIGHTLY,
    pull_request: int | None = None,
    timestamp: datetime | None = None,
    device: DeviceInfo | str | None = None,
    tool: str = "ncu",
    **extra: Any,
) -> RunRecord:
    """One run; defaults to a nightly run of acme/kernels on an H100 with one kernel."""
    dev = make_device(device) if isinstance(device, str) else (device or make_device())
    return RunRecord(
        repo=repo,
        commit=commit,
        branch=branch,
        kind=RunKind(kind),
        pull_request=pull_request,
        timestamp=timestamp or datetime(2026, 1, 1, tzinfo=UTC),
        device=dev,
        profiler=ProfilerInfo(tool=tool),
        kernels=tuple(kernels if kernels is not None else [make_kernel()]),
        **extra,
    )


def night_run(
    kernel: KernelRecord,
    night: int,
    *,
    start: datetime,
    kind: RunKind | str = RunKind.NIGHTLY,
    device: str = "NVIDIA A100-SXM4-80GB",
) -> RunRecord:
    """A run of one kernel ``night`` days after ``start`` (commit ``c<night>``)."""
    return make_run(
        commit=f"c{night}",
        kind=kind,
        timestamp=start + timedelta(days=night),
        kernels=[kernel],
        device=device,
    )


#: H100 SXM5 datasheet peaks of the GEMM that falls off the tensor cores (rules' catalog).
H100_BF16 = 989.4e12
H100_FP32 = 66.9e12
GEMM_FLOPS = 2e12


def falling_gemm_runs(
    *, repo: str | None = "acme/kernels", nights: int = 10, fall_at: int = 7, start: datetime
) -> list[RunRecord]:
    """Nightly runs of a GEMM at 70% of its roof that falls off the tensor cores at ``fall_at``.

    From ``fall_at`` on, its FLOPs are fp32 and it runs at 70% of the fp32 roof: 14.8x slower,
    4.7% of the tensor_bf16 roof it used to be bound by. A copy kernel stays put beside it.
    """
    runs = []
    for night in range(nights):
        fell = night >= fall_at
        precision, peak = ("fp32", H100_FP32) if fell else ("tensor_bf16", H100_BF16)
        gemm = make_kernel(
            "gemm_bf16_128x128",
            flops={precision: GEMM_FLOPS},
            dram_bytes=1e8,
            time_s=GEMM_FLOPS / peak / 0.70,
        )
        copy = make_kernel("copy", flops={}, dram_bytes=2e9, time_s=2e9 / 3.35e12 / 0.8)
        runs.append(
            make_run(
                repo=repo,
                commit=f"{night:07x}ab",
                timestamp=start + timedelta(days=night),
                kernels=[gemm, copy],
            )
        )
    return runs


def time_only_runs(
    *, repo: str | None = "acme/kernels", nights: int = 9, slow_from: int = 7, start: datetime
) -> list[RunRecord]:
    """Google Benchmark nightlies without counters (timed alone), a slowdown and a split.

    ``BM_plain_0`` takes 200 µs, 400 µs from ``slow_from`` on; ``BM_plain_2`` is replaced by
    ``BM_plain_2a`` and ``BM_plain_2b`` then; ``BM_plain_1`` stays put.
    """
    runs = []
    for night in range(nights):
        later = night >= slow_from
        times = {"BM_plain_0": 4e-4 if later else 2e-4, "BM_plain_1": 1e-4}
        times |= {"BM_plain_2a": 1.5e-4, "BM_plain_2b": 1.5e-4} if later else {"BM_plain_2": 3e-4}
        kernels = [
            make_kernel(name, flops={}, dram_bytes=None, time_s=t) for name, t in times.items()
        ]
        runs.append(
            make_run(
                repo=repo,
                commit=f"{night:07x}de",
                timestamp=start + timedelta(days=night),
                kernels=kernels,
                tool="gbench",
            )
        )
    return runs
