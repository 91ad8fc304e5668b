"""A generated nightly history with planted regressions, improvements, recoveries and flips.

40 nights on two devices, six kernels each; the digest period is the last seven nights. Every
planted event is listed in ``PLANTED`` so tests can check that change points are found where they
were planted and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from collectors.schema import DeviceInfo, KernelRecord, ProfilerInfo, RunKind, RunRecord
from rules import like_for_like_history
from rules.frames import HISTORY_COLUMNS, history_from_runs
from rules.hardware import builtin_catalog
from rules.roofline import Roof

NIGHTS = 40
FIRST_NIGHT = datetime(2026, 10, 19, 2, 0, tzinfo=UTC)  # a Monday
PERIOD_START = FIRST_NIGHT + timedelta(days=33, hours=-1)
PERIOD_END = FIRST_NIGHT + timedelta(days=39, hours=1)
DEVICES = ("H100-SXM5", "A100-SXM4-80GB")
KERNELS = ("gemv_bf16", "softmax_fwd", "layernorm_fwd", "gemm_bf16", "attention_fwd", "fused_mlp")


@dataclass(frozen=True)
class Step:
    """A level change of ``factor`` from ``night`` until ``until`` (exclusive; None: the end)."""

    kernel: str
    device: str
    night: int
    factor: float
    until: int | None = None


#: Level changes that the digest must find (each start, and each end, is a change point).
PLANTED = (
    Step("gemv_bf16", "H100-SXM5", 35, 0.80),  # new regression in the period
    Step("softmax_fwd", "H100-SXM5", 10, 0.85),  # old, unresolved
    Step("layernorm_fwd", "A100-SXM4-80GB", 20, 0.75, until=34),  # old, recovers in the period
    Step("gemm_bf16", "A100-SXM4-80GB", 36, 1.15),  # improvement in the period
    Step("fused_mlp", "A100-SXM4-80GB", 34, 0.70),  # regression that is also a regime flip
)
#: One bad night (must not be reported) and a drop on the last night only (not yet reported).
BLIPS = (("attention_fwd", "H100-SXM5", 37, 0.70), ("gemm_bf16", "H100-SXM5", 39, 0.75))
#: The regime flips to memory-bound from this night on (and a one-night flip that must not count).
REGIME_FLIP = ("fused_mlp", "A100-SXM4-80GB", 34)
REGIME_BLIP = ("gemm_bf16", "H100-SXM5", 30)
BASE_LEVEL = {
    "gemv_bf16": 85.0,
    "softmax_fwd": 70.0,
    "layernorm_fwd": 60.0,
    "gemm_bf16": 55.0,
    "attention_fwd": 48.0,
    "fused_mlp": 65.0,
}
COMPUTE_BOUND = {"gemm_bf16", "attention_fwd", "fused_mlp"}
#: FLOP per DRAM byte of each kernel (4 GB of DRAM traffic each night).
INTENSITY = {
    "gemv_bf16": 0.5,
    "softmax_fwd": 1.2,
    "layernorm_fwd": 2.0,
    "gemm_bf16": 300.0,
    "attention_fwd": 150.0,
    "fused_mlp": 220.0,
}


def _factors() -> pd.DataFrame:
    index = pd.MultiIndex.from_product([DEVICES, KERNELS], names=["device", "kernel"])
    factors = pd.DataFrame(1.0, index=index, columns=range(NIGHTS))
    for step in PLANTED:
        factors.loc[(step.device, step.kernel), step.night : (step.until or NIGHTS) - 1] *= (
            step.factor
        )
    for kernel, device, night, factor in BLIPS:
        factors.loc[(device, kernel), night] *= factor
    return factors


def _regimes(device: str, kernel: str) -> list[str]:
    regime = "compute-bound" if kernel in COMPUTE_BOUND else "memory-bound"
    regimes = [regime] * NIGHTS
    if (kernel, device) == REGIME_FLIP[:2]:
        regimes[REGIME_FLIP[2] :] = ["memory-bound"] * (NIGHTS - REGIME_FLIP[2])
    if (kernel, device) == REGIME_BLIP[:2]:
        regimes[REGIME_BLIP[2]] = "memory-bound"
    return regimes


def make_digest_history(seed: int = 7, noise: float = 0.005) -> pd.DataFrame:
    """The history frame (``rules.frames.HISTORY_COLUMNS``), one row per night, device, kernel."""
    rng = np.random.default_rng(seed)
    rows = []
    factors = _factors()
    for (device, kernel), levels in factors.iterrows():
        regimes = _regimes(device, kernel)
        for night, factor in enumerate(levels):
            pct = BASE_LEVEL[kernel] * factor * (1 + noise * rng.standard_normal())
            rows.append(_row(device, kernel, night, pct, regimes[night]))
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))


def series_history(
    values: list[float], kernel: str = "gemv_bf16", device: str = DEVICES[0]
) -> pd.DataFrame:
    """A history of one kernel on one device: ``values`` its percent of roof, a night each."""
    regime = "compute-bound" if kernel in COMPUTE_BOUND else "memory-bound"
    rows = [_row(device, kernel, night, pct, regime) for night, pct in enumerate(values)]
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))


def _row(device: str, kernel: str, night: int, pct: float, regime: str) -> dict[str, object]:
    time_s = 1e-3 * 85.0 / pct
    return {
        "run_id": night * len(DEVICES) + DEVICES.index(device) + 1,
        "commit": commit_of(night),
        "timestamp": FIRST_NIGHT + timedelta(days=night),
        "kind": "nightly",
        "kernel_key": kernel,
        "kernel_name": f"{kernel}_kernel",
        "device": device,
        "roof_source": "datasheet",
        "percent_of_roof": pct,
        "regime": regime,
        "binding": "dram" if regime == "memory-bound" else "tensor_bf16",
        "time_s": time_s,
        "total_flops": 4e9 * INTENSITY[kernel],
        "bytes_dram": 4e9,
        "bytes_l2": 6e9,
        "bytes_l1": np.nan,
        "driver": "560.35",
        "clock_control": "base",
        "cache_control": "all",
        "trusted": True,
    }


def commit_of(night: int) -> str:
    """The commit of ``night`` in the generated history."""
    return f"{night:03d}{'c0ffee' * 6}"[:40]


def night_of(stamp: datetime) -> int:
    """The night number of a timestamp in the generated history."""
    return round((stamp - FIRST_NIGHT).total_seconds() / 86400)


def _kernel_record(row: pd.Series, roof: Roof) -> KernelRecord:
    """A kernel whose placement on ``roof`` gives the row's time, percent of roof and regime.

    The work is what that time at that percent takes at the binding: a night that falls to
    memory-bound keeps the row's slower time, as a broken fusion does.
    """
    compute = row["regime"] == "compute-bound"
    intensity = 1000.0 if compute else min(INTENSITY[row["kernel_key"]], 50.0)
    t_roof = row["time_s"] * row["percent_of_roof"] / 100.0
    if compute:
        flops = t_roof * roof.peak_flop_per_s["tensor_bf16"]
        nbytes = flops / intensity
    else:
        nbytes = t_roof * roof.bandwidth_byte_per_s["dram"]
        flops = nbytes * intensity
    return KernelRecord(
        name=row["kernel_name"],
        key=row["kernel_key"],
        duration_s=row["time_s"],
        flops={"tensor_bf16": flops},
        bytes={"dram": nbytes},
    )


def history_runs(history: pd.DataFrame, repo: str = "acme/kernels") -> list[RunRecord]:
    """One nightly RunRecord per (night, device) that reproduces ``history`` when placed."""
    runs = []
    for (stamp, device, commit), rows in history.groupby(
        ["timestamp", "device", "commit"], sort=True
    ):
        roof = builtin_catalog().lookup(device).roof()
        runs.append(
            RunRecord(
                repo=repo,
                commit=commit,
                branch="main",
                kind=RunKind.NIGHTLY,
                timestamp=stamp,
                device=DeviceInfo(name=device),
                profiler=ProfilerInfo(tool="ncu"),
                kernels=tuple(_kernel_record(r, roof) for _, r in rows.iterrows()),
            )
        )
    return runs


def stored_like_for_like(history: pd.DataFrame) -> pd.DataFrame:
    """``history`` as the store reads it back: its records placed, then like for like.

    The store keeps the counters of ``history_runs``' records (not the frame's), and the
    digest reads every night against the roof its kernel is usually bound by.
    """
    frames, roofs = [], {}
    for offset, device in enumerate(DEVICES):
        roof = builtin_catalog().lookup(device).roof()
        runs = [r for r in history_runs(history) if r.device.name == device]
        frame = history_from_runs(runs, roof)
        frame["run_id"] += offset * 1000
        roofs |= dict.fromkeys(frame["run_id"], roof)
        frames.append(frame)
    placed = pd.concat(frames, ignore_index=True).sort_values("timestamp", kind="stable")
    return like_for_like_history(placed.reset_index(drop=True), roofs)
