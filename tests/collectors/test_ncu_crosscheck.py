"""FLOP and byte figures against an independent computation from the raw metric values.

Each test reads the cells itself (csv module for CSVs, ``ncu_report`` for .ncu-rep) and redoes
the arithmetic by hand, without the collectors' recipe.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path

import pytest

import collectors

pytestmark = pytest.mark.corpus


def details_cells(path: Path) -> dict[str, dict[str, float]]:
    """{launch ID: {metric name: value}} read straight from a details-page CSV."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID","Process ID"'))
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for row in csv.DictReader(lines[start:]):
        value = row["Metric Value"].replace(",", "")
        try:
            out[row["ID"]][row["Metric Name"]] = float(value)
        except ValueError:
            continue
    return out


def by_kernel(path: Path) -> dict[str, list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID","Process ID"'))
    ids: dict[str, list[str]] = defaultdict(list)
    for row in csv.DictReader(lines[start:]):
        if row["ID"] not in ids[row["Kernel Name"]]:
            ids[row["Kernel Name"]].append(row["ID"])
    return ids


def test_nersc_metric_list_v100(corpus_dir: Path) -> None:
    """wangzy0327 V100: dram/lts/l1tex raw counts, fadd+fmul+2ffma, 512 x HMMA instructions."""
    path = corpus_dir / "ncu-csv/wangzy0327_cuda-roofline__output_V100.csv"
    cells, kernels = details_cells(path), by_kernel(path)
    record = collectors.collect(path)
    assert len(record.kernels) == 4
    op = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
    for kernel in record.kernels:
        ids = kernels[kernel.name]
        total = lambda metric, ids=ids: sum(cells[i][metric] for i in ids)  # noqa: E731
        assert kernel.bytes["dram"] == pytest.approx(total("dram__bytes.sum"))
        assert kernel.bytes["l2"] == pytest.approx(total("lts__t_bytes.sum"))
        assert kernel.bytes["l1"] == pytest.approx(total("l1tex__t_bytes.sum"))
        fp32 = total(op.format("fadd")) + total(op.format("fmul")) + 2 * total(op.format("ffma"))
        fp16 = (
            2 * total(op.format("hadd"))
            + 2 * total(op.format("hmul"))
            + 4 * total(op.format("hfma"))
        )
        assert kernel.flops["fp32"] == pytest.approx(fp32)
        assert kernel.flops["fp16"] == pytest.approx(fp16)
        assert kernel.flops["tensor_fp16"] == pytest.approx(
            512 * total("sm__inst_executed_pipe_tensor.sum")
        )
        seconds = sum(
            cells[i]["sm__cycles_elapsed.avg"] / cells[i]["sm__cycles_elapsed.avg.per_second"]
            for i in ids
        )
        assert kernel.duration_s == pytest.approx(seconds)
        assert kernel.provenance["flops.tensor_fp16"].kind == "proxy"
        assert kernel.provenance["duration"].kind == "rate"
    gemm = next(k for k in record.kernels if "s884gemm" in k.name)
    assert gemm.flops["tensor_fp16"] == pytest.approx(2 * 20480**3)  # the GEMM's 2*M*N*K


@pytest.mark.parametrize(
    "name",
    [
        "Gardenia-Tian_LearningNote4Dev__gemm_output_sgemm.csv",
        "leleucas_Actual-Parameter-Collection__interpolate_nsight_virtual.csv",
        "leleucas_Actual-Parameter-Collection__bert_flashattn_nsight.csv",
    ],
)
def test_explicit_metric_details_pages(corpus_dir: Path, name: str) -> None:
    path = corpus_dir / "ncu-csv" / name
    cells, kernels = details_cells(path), by_kernel(path)
    record = collectors.collect(path)
    for kernel in record.kernels:
        ids = kernels[kernel.name]
        any_id = cells[ids[0]]
        unit = "smsp" if "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in any_id else "sm"
        op = unit + "__sass_thread_inst_executed_op_{}_pred_on.sum"
        total = lambda metric, ids=ids: sum(cells[i][metric] for i in ids)  # noqa: E731
        fp64 = total(op.format("dadd")) + total(op.format("dmul")) + 2 * total(op.format("dfma"))
        assert kernel.flops["fp64"] == pytest.approx(fp64)
        assert kernel.bytes["dram"] == pytest.approx(total("dram__bytes.sum"))
        assert kernel.bytes["l2"] == pytest.approx(total("lts__t_bytes.sum"))
        assert {kernel.provenance[f"bytes.{t}"].kind for t in ("dram", "l2", "l1")} == {"raw"}


def test_details_page_dram_rate_times_duration(corpus_dir: Path) -> None:
    """copy_blocked (layout E): Memory Workload Analysis 'Memory Throughput' x 'Duration'."""
    path = corpus_dir / "ncu-csv/brycelelbach_nsightful__copy_blocked.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = list(csv.DictReader(lines))
    cell = lambda section, metric: next(  # noqa: E731
        float(r["Metric Value"].replace(",", ""))
        for r in rows
        if r["Section Name"] == section and r["Metric Name"] == metric
    )
    seconds = cell("GPU Speed Of Light Throughput", "Duration") * 1e-9  # unit "ns"
    rate = cell("Memory Workload Analysis", "Memory Throughput")  # unit "byte/s"
    (kernel,) = collectors.collect(path).kernels
    assert kernel.duration_s == pytest.approx(seconds)
    assert kernel.bytes["dram"] == pytest.approx(rate * seconds)
    assert kernel.provenance["bytes.dram"].kind == "rate"


def test_text_output_agrees_with_csv_of_same_kernel(corpus_dir: Path) -> None:
    """The auto-scaled text output (ms, Gbyte/s) gives what the base-unit CSV gives, to 3 digits."""
    text = collectors.collect(
        corpus_dir / "other/brycelelbach_nsightful__copy_blocked.txt"
    ).kernels[0]
    assert text.duration_s == pytest.approx(20.85e-3)  # "Duration  ms  20.85"
    assert text.bytes["dram"] == pytest.approx(
        197.74e9 * 20.85e-3
    )  # "Memory Throughput Gbyte/s 197.74"


def test_raw_page_durations(corpus_dir: Path) -> None:
    path = (
        corpus_dir
        / "ncu-csv/meinie0826_Roofline-Analysis__torch_sdpa_flash__gqa_bf16_b32_ctx8k_p64.ncu.csv"
    )
    lines = path.read_text(encoding="utf-8").splitlines()
    reader = csv.reader(lines[2:])
    header, units = next(reader), next(reader)
    col = header.index("gpu__time_duration.sum")
    assert units[col] == "ns"
    expected: dict[str, float] = defaultdict(float)
    for row in reader:
        expected[row[header.index("Kernel Name")]] += float(row[col]) * 1e-9
    record = collectors.collect(path)
    assert record.device.name == "NVIDIA B200"
    assert record.device.sm_count == 148
    assert {k.name: k.duration_s for k in record.kernels} == pytest.approx(dict(expected))


ncu_report = pytest.importorskip("ncu_report")


def rep_actions(path: Path) -> list:
    ctx = ncu_report.load_report(str(path))
    rng = ctx.range_by_idx(0)
    return [rng.action_by_idx(i) for i in range(rng.num_actions())]


def value(action, name: str) -> float:
    return float(action.metric_by_name(name).value())


def test_averyclapp_sgemm_flops_are_2_n_cubed(corpus_dir: Path) -> None:
    """--set roofline (rates only): FP32 FLOPs rebuilt from per-cycle rates are 2*1024^3."""
    path = corpus_dir / "ncu-rep/AveryClapp_ESMM-Research__profile_output.ncu-rep"
    record = collectors.collect(path)
    assert len(record.kernels) == 4
    pre = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"
    for action, kernel in zip(rep_actions(path), record.kernels, strict=True):
        seconds = value(action, "gpu__time_duration.sum") * 1e-9
        cycles = value(action, "smsp__cycles_elapsed.avg.per_second") * seconds
        rates = (
            value(action, pre.format("fadd"))
            + value(action, pre.format("fmul"))
            + 2 * value(action, pre.format("ffma"))
        )
        assert kernel.flops["fp32"] == pytest.approx(rates * cycles)
        assert kernel.flops["fp32"] == pytest.approx(2 * 1024**3, rel=1e-6)
        assert kernel.bytes["dram"] == pytest.approx(
            value(action, "dram__bytes.sum.per_second") * seconds
        )
        assert kernel.provenance["flops.fp32"].kind == "rate"
        assert kernel.provenance["bytes.l2"].kind == "proxy"


def test_tanvisharma_sgemm(corpus_dir: Path) -> None:
    path = (
        corpus_dir / "ncu-rep/tanvisharma_nsight-compute-files__3136_64_64_rtx2080ti_sgemm.ncu-rep"
    )
    (action,) = rep_actions(path)
    (kernel,) = collectors.collect(path).kernels
    seconds = value(action, "gpu__time_duration.sum") * 1e-9
    pre = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"
    per_cycle = sum(
        w * value(action, pre.format(op)) for op, w in (("fadd", 1), ("fmul", 1), ("ffma", 2))
    )
    cycles = value(action, "smsp__cycles_elapsed.avg.per_second") * seconds
    assert kernel.flops["fp32"] == pytest.approx(per_cycle * cycles)
    # corpus notes: 2.64e7 ~ 2*3136*64*64 (cuBLAS tiles round M up, so a few percent over)
    assert kernel.flops["fp32"] == pytest.approx(2 * 3136 * 64 * 64, rel=0.03)
    assert kernel.bytes["l2"] == pytest.approx(
        value(action, "lts__t_bytes.sum.per_second") * seconds
    )
    assert kernel.bytes["l1"] == pytest.approx(
        value(action, "l1tex__t_bytes.sum.per_second") * seconds
    )
    reads, writes = value(action, "dram__bytes_read.sum"), value(action, "dram__bytes_write.sum")
    assert kernel.bytes["dram"] == pytest.approx(reads + writes)


def test_full_set_reports_use_read_write_and_sectors(corpus_dir: Path) -> None:
    path = corpus_dir / "ncu-rep/flyinglandlord_sglang__profile.ncu-rep"
    actions = rep_actions(path)
    record = collectors.collect(path)
    good = [a for a in actions if not math.isnan(value(a, "gpu__time_duration.sum"))]
    assert len(good) == 4 and len(actions) == 5
    kernel = record.kernels[0]
    assert kernel.launches == 4
    assert kernel.bytes["dram"] == pytest.approx(
        sum(value(a, "dram__bytes_read.sum") + value(a, "dram__bytes_write.sum") for a in good)
    )
    assert kernel.bytes["l2"] == pytest.approx(
        32 * sum(value(a, "lts__t_sectors.sum") for a in good)
    )
    assert kernel.samples_s == pytest.approx(
        [value(a, "gpu__time_duration.sum") * 1e-9 for a in good]
    )
    failed = record.kernels[1]
    assert (failed.launches, failed.failed_launches, failed.duration_s) == (0, 1, 0.0)
    assert any("NaN" in m for m in failed.missing)


def test_report_derived_peaks(corpus_dir: Path) -> None:
    path = corpus_dir / "ncu-rep/flyinglandlord_sglang__profile.ncu-rep"
    action = rep_actions(path)[0]
    device = collectors.collect(path).device
    clock = value(action, "sm__cycles_elapsed.avg.per_second")
    ffma = value(action, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained")
    assert device.peak_flop_per_s["fp32"] == pytest.approx(2 * ffma * clock)
    dram = value(action, "dram__bytes.sum.peak_sustained") * value(
        action, "dram__cycles_elapsed.avg.per_second"
    )
    assert device.bandwidth_byte_per_s["dram"] == pytest.approx(dram)
    assert device.bandwidth_byte_per_s["dram"] == pytest.approx(
        3341e9, rel=0.01
    )  # corpus notes: H800 3341 GB/s


def test_tensor_counts_one_level_and_dense_peaks(corpus_dir: Path) -> None:
    path = corpus_dir / "ncu-rep/AlpriElse_cs599k__silu-2025-04-18-v7.ncu-rep"
    action = rep_actions(path)[0]
    record = collectors.collect(path)
    kernel = record.kernels[0]
    assert kernel.provenance["flops.tensor_fp16"].metrics == ("sm__ops_path_tensor_src_fp16.sum",)
    assert set(kernel.provenance["flops.tensor_fp8"].metrics) == {
        "sm__ops_path_tensor_src_fp8_sparsity_off.sum",
        "sm__ops_path_tensor_src_fp8_sparsity_on.sum",
    }
    clock = value(action, "sm__cycles_elapsed.avg.per_second")
    dense = value(action, "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained")
    assert record.device.peak_flop_per_s["tensor_fp16"] == pytest.approx(dense * clock)
    assert record.profiler.version == "2025.1.0.0"


def test_command_line_and_clock_control(corpus_dir: Path) -> None:
    record = collectors.collect(corpus_dir / "ncu-rep/panjd123_cutlass__report-s4.ncu-rep")
    assert record.profiler.command_line.startswith("/opt/nvidia/nsight-compute/2024.1.1/")
    assert "--set full" in record.profiler.command_line
    assert (record.profiler.clock_control, record.profiler.cache_control) == ("base", "all")
    assert record.kernels[0].nvtx_range == "NCUTEST"
    assert record.kernels[0].grid == "(3, 4, 1)"
