"""Small keyword-default builders of records for tests (shared by every test package)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
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
