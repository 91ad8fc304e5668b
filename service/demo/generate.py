"""Generate the demo's example data as Nsight Compute raw-page CSV exports.

The workload is one decode step of a Llama-3-8B-shaped model on an H100 SXM5 (bf16,
continuous batching: 64 sequences at a 4k context), profiled with the explicit NERSC metric
list (`ncu --metrics ... --csv --page raw`), four transformer layers per step. Each kernel is
given a true percent of roof; each night draws its duration from that with realistic runner
noise: 1.5 % log-normal jitter, and now and then a slow outlier (a clock dip or a noisy
neighbour, +6-10 %).

The pull-request run breaks two things, as real PRs do:

* the residual add is no longer fused into the RMSNorm (two kernels, more bytes, slower);
* the speculative-decoding verify GEMM falls off the tensor cores (bf16 HMMA -> fp32 FFMA).

A third run is the healthy step moved to an H200 SXM (the H100's peaks, 4.8 TB/s of HBM3e
instead of 3.35): every kernel keeps its percent of roof except the attention kernel, which
keeps its H100 launch shape and reaches 60% of the HBM roof instead of 80% (the first pull
request on the new card, judged against the H100's history: ``roofguard demo --device-change``).

Run ``python -m service.demo.generate [OUT_DIR]`` to rewrite service/demo/data (seeded, so the
output is identical each time).
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

H100_DRAM_BPS = 3.35e12
H200_DRAM_BPS = 4.8e12
H100_NAME = "NVIDIA H100 80GB HBM3"
H200_NAME = "NVIDIA H200"
H100_BF16_FLOPS = 989.4e12
H100_FP32_FLOPS = 66.9e12
NIGHTS = 30
LAYERS = 4
DATA_DIR = Path(__file__).parent / "data"
#: The first pull request on an H200 (``moved_step``).
MOVED_RUN = "h200-pr-1240.csv"

METRICS = [
    ("device__attribute_display_name", ""),
    ("gpu__time_duration.sum", "nsecond"),
    ("dram__bytes_read.sum", "byte"),
    ("dram__bytes_write.sum", "byte"),
    ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst"),
    ("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "inst"),
    ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst"),
    ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", ""),
    ("sm__cycles_elapsed.avg.per_second", "cycle/second"),
]
HEAD = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
]


@dataclass(frozen=True)
class Kernel:
    """One kernel of the decode step: its work per launch and its true percent of roof."""

    name: str
    tensor_flops: float
    fp32_flops: float
    read_bytes: float
    write_bytes: float
    percent_of_roof: float
    grid: str = "(132, 1, 1)"

    def roof_time_s(self, dram_bps: float = H100_DRAM_BPS) -> float:
        """Speed-of-light time on the H100 datasheet roof (T_roof, rules/README.md).

        ``dram_bps``: another card's HBM bandwidth (the H200 has the H100's peaks).
        """
        t_compute = max(self.tensor_flops / H100_BF16_FLOPS, self.fp32_flops / H100_FP32_FLOPS)
        return max(t_compute, (self.read_bytes + self.write_bytes) / dram_bps)


def _gemm(name: str, m: int, n: int, k: int, pct: float) -> Kernel:
    weights, acts_in, acts_out = 2 * n * k, 2 * m * k, 2 * m * n
    return Kernel(name, 2.0 * m * n * k, 0.0, weights + acts_in, acts_out, pct)


def decode_step() -> list[Kernel]:
    """The healthy decode step (per layer), batch 64, hidden 4096, MLP 14336, 8 KV heads."""
    b, h = 64, 4096
    return [*_decode_attention(b, h), *_decode_mlp(b, h)]


def _decode_attention(b: int, h: int) -> list[Kernel]:
    """Norm, QKV projection, rotary embedding, attention over the KV cache, output projection."""
    kv_bytes = 64 * 4096 * 8 * 128 * 2 * 2
    return [
        Kernel(
            "void fused_add_rmsnorm_kernel<__nv_bfloat16, 4096>(__nv_bfloat16*, "
            "__nv_bfloat16*, const __nv_bfloat16*, float)",
            0.0,
            4.0 * b * h,
            3 * 2 * b * h,
            2 * 2 * b * h,
            58.0,
        ),
        _gemm("decode_gemm_bf16<64, 6144, 4096>(qkv_proj)", b, 6144, h, 85.0),
        Kernel(
            "rotary_embedding_kernel<__nv_bfloat16, 128>",
            0.0,
            6.0 * b * 5120,
            2 * b * 5120,
            2 * b * 5120,
            46.0,
        ),
        Kernel(
            "flash_decode_attention_kernel<__nv_bfloat16, 128, 8>",
            4.0 * b * 32 * 4096 * 128,
            0.0,
            kv_bytes,
            2 * b * h,
            80.0,
        ),
        _gemm("decode_gemm_bf16<64, 4096, 4096>(o_proj)", b, h, h, 84.0),
    ]


def _decode_mlp(b: int, h: int) -> list[Kernel]:
    """The MLP (gate/up, SiLU, down) and the speculative-decoding verify GEMM."""
    return [
        _gemm("decode_gemm_bf16<64, 28672, 4096>(gate_up_proj)", b, 28672, h, 87.0),
        Kernel(
            "silu_and_mul_kernel<__nv_bfloat16>",
            0.0,
            3.0 * b * 14336,
            2 * b * 28672,
            2 * b * 14336,
            71.0,
        ),
        _gemm("decode_gemm_bf16<64, 4096, 14336>(down_proj)", b, h, 14336, 86.0),
        _gemm("verify_gemm_bf16<512, 14336, 4096>", 512, 14336, h, 72.0),
    ]


def broken_step() -> list[Kernel]:
    """The pull request: the add+norm fusion broke and the verify GEMM lost its tensor cores."""
    b, h = 64, 4096
    kernels = []
    for kernel in decode_step():
        if kernel.name.startswith("void fused_add_rmsnorm"):
            kernels.append(
                Kernel(
                    "residual_add_kernel<__nv_bfloat16>",
                    0.0,
                    1.0 * b * h,
                    2 * 2 * b * h,
                    2 * b * h,
                    60.0,
                )
            )
            kernels.append(
                Kernel(
                    "void rmsnorm_kernel<__nv_bfloat16, 4096>",
                    0.0,
                    3.0 * b * h,
                    2 * 2 * b * h,
                    2 * b * h,
                    52.0,
                )
            )
        elif kernel.name.startswith("verify_gemm"):
            kernels.append(
                replace(
                    kernel, tensor_flops=0.0, fp32_flops=kernel.tensor_flops, percent_of_roof=70.0
                )
            )
        else:
            kernels.append(kernel)
    return kernels


def moved_step() -> list[Kernel]:
    """The healthy step on an H200: the attention kernel did not keep up with the new card."""
    return [
        replace(k, percent_of_roof=60.0) if k.name.startswith("flash_decode") else k
        for k in decode_step()
    ]


def _row(launch_id: int, kernel: Kernel, duration_s: float, device: str) -> list[str]:
    ffma = kernel.fp32_flops / 2.0  # an FFMA is two FLOPs
    values = [
        device,
        f"{duration_s * 1e9:,.0f}",
        f"{kernel.read_bytes:,.0f}",
        f"{kernel.write_bytes:,.0f}",
        "0",
        "0",
        f"{ffma:,.0f}",
        f"{kernel.tensor_flops:,.0f}",
        "1,980,000,000",  # boost clocks (--clock-control none): the datasheet roof as is
    ]
    head = [
        str(launch_id),
        "4242",
        "python3",
        "gpu-runner-07",
        kernel.name,
        "1",
        "7",
        "(128, 1, 1)",
        kernel.grid,
        "0",
        "9.0",
    ]
    return head + values


def write_run(
    path: Path,
    kernels: list[Kernel],
    rng: np.random.Generator,
    device: tuple[str, float] = (H100_NAME, H100_DRAM_BPS),
) -> None:
    """Write one profiled decode step (LAYERS launches per kernel) as a raw-page CSV.

    ``device``: the name the report prints and the card's HBM bandwidth.
    """
    slow = rng.random() < 0.07  # a night with a clock dip or a noisy neighbour
    with path.open("w", newline="", encoding="ascii") as handle:
        handle.write("==PROF== Connected to process 4242 (/usr/bin/python3)\n")
        out = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        out.writerow(HEAD + [name for name, _ in METRICS])
        out.writerow([""] * len(HEAD) + [unit for _, unit in METRICS])
        launch = 0
        for _layer in range(LAYERS):
            for kernel in kernels:
                noise = rng.lognormal(0.0, 0.015) * (rng.uniform(1.06, 1.10) if slow else 1.0)
                roof_s = kernel.roof_time_s(device[1])
                duration = roof_s / (kernel.percent_of_roof / 100.0) * noise
                out.writerow(_row(launch, kernel, duration, device[0]))
                launch += 1
        handle.write("==PROF== Disconnected from process 4242\n")


def generate(out_dir: Path = DATA_DIR, seed: int = 20261130) -> list[Path]:
    """Write nightly-01..30, the pull request's run and the H200's; the paths written."""
    rng = np.random.default_rng(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for night in range(1, NIGHTS + 1):
        path = out_dir / f"nightly-{night:02d}.csv"
        write_run(path, decode_step(), rng)
        paths.append(path)
    pr_path = out_dir / "pr-1234.csv"
    write_run(pr_path, broken_step(), rng)
    moved_path = out_dir / MOVED_RUN
    write_run(moved_path, moved_step(), rng, (H200_NAME, H200_DRAM_BPS))
    return [*paths, pr_path, moved_path]


if __name__ == "__main__":
    written = generate(Path(sys.argv[1]) if len(sys.argv) > 1 else DATA_DIR)
    print(f"wrote {len(written)} files to {written[0].parent}")
