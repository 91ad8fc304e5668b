"""A launch, repetition or round of 0 s among others: refused, named, never averaged in.

Kept, one zero launch of two halved a kernel's time (the wangzy V100 page's
``InitializeMatrix_kernel<float>``: 5.717 ms read as 2.858 ms, "130.4% above roof").
Kineto's ``dur`` 0 is the one documented "not timed" (a failed launch), and stays so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import collectors
from collectors.errors import MalformedReport

WANGZY = "ncu-csv/wangzy0327_cuda-roofline__output_V100.csv"
RAW_B200 = "ncu-csv/meinie0826_Roofline-Analysis__torch_sdpa_flash__gqa_bf16_b32_ctx8k_p64.ncu.csv"
PYTEST = "pytest-benchmark/benchmark-action_github-action-benchmark__pytest_output.json"
GBENCH_REPS = Path(__file__).parent / "data" / "micro" / "gbench_gemm_gpu.json"
NEVER = "no timer measures under 1e-12 s"


def refused(path: Path) -> MalformedReport:
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert info.value.path == str(path)
    return info.value


def test_a_zero_launch_of_a_details_page_is_refused(corpus_dir: Path, tmp_path: Path) -> None:
    lines = (corpus_dir / WANGZY).read_text().splitlines(keepends=True)
    kernel = "InitializeMatrix_kernel<float, (bool)1>"
    before = next(k for k in collectors.collect(corpus_dir / WANGZY).kernels if kernel in k.name)
    assert (before.launches, round(before.duration_s * 1e3, 3)) == (2, 5.717)
    cycles = '"sm__cycles_elapsed.avg","cycle","3,529,786.75"'
    (line,) = [n for n, text in enumerate(lines) if kernel in text and cycles in text]
    lines[line] = lines[line].replace(cycles, '"sm__cycles_elapsed.avg","cycle","0"')
    path = tmp_path / "zero.csv"
    path.write_text("".join(lines))
    error = refused(path)
    first = next(n for n, text in enumerate(lines) if text.startswith('"3",'))
    assert str(error) == (
        f"{path}, row {first + 1} (launch ID 3), field 'sm__cycles_elapsed.avg': "
        f"duration of 0.0 s for a launch: {NEVER}"
    )


def test_a_zero_launch_of_a_raw_page_is_refused(corpus_dir: Path, tmp_path: Path) -> None:
    """Found by the pandas reader, it is named with its line by the careful one."""
    lines = (corpus_dir / RAW_B200).read_text().splitlines(keepends=True)
    header = next(n for n, line in enumerate(lines) if line.startswith('"ID","Process ID"'))
    column = lines[header].rstrip("\n").split('","').index("gpu__time_duration.sum")
    row = header + 5  # launch ID 3 (the units row, then launches 0, 1, 2)
    cells = lines[row].rstrip("\n").split('","')
    assert cells[0] == '"3' and float(cells[column]) > 0
    cells[column] = "0"
    lines[row] = '","'.join(cells) + "\n"
    path = tmp_path / "zero.csv"
    path.write_text("".join(lines))
    assert str(refused(path)) == (
        f"{path}, row {row + 1} (launch ID 3), field 'gpu__time_duration.sum': "
        f"duration of 0.0 s for a launch: {NEVER}"
    )


def test_a_zero_gbench_repetition_is_refused(tmp_path: Path) -> None:
    root = json.loads(GBENCH_REPS.read_text())
    assert collectors.collect(GBENCH_REPS).kernels[0].duration_s == pytest.approx(0.2291e-3)
    root["benchmarks"][1]["real_time"] = 0
    path = tmp_path / "gb.json"
    path.write_text(json.dumps(root))
    assert str(refused(path)) == (
        f"{path}, row benchmarks[1] (BM_gemm/4096/4096/4096/manual_time), field 'real_time': "
        f"duration of 0.0 s for one of 3 repetitions: {NEVER}"
    )


def test_a_zero_pytest_benchmark_round_is_refused(corpus_dir: Path, tmp_path: Path) -> None:
    root = json.loads((corpus_dir / PYTEST).read_text())
    rounds = root["benchmarks"][1]["stats"]["data"]
    assert rounds[-1] == "... omitted to keep this file small"  # no samples kept with it
    root["benchmarks"][1]["stats"]["data"] = [*rounds[:2], 0.0, *rounds[2:-1]]
    path = tmp_path / "pt.json"
    path.write_text(json.dumps(root))
    assert str(refused(path)) == (
        f"{path}, row benchmarks[1] (test_fib_20), field 'stats.data[2]': "
        f"duration of 0.0 s for one of 5 rounds: {NEVER}"
    )


def test_a_zero_sample_of_a_flat_csv_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "flat.csv"
    path.write_text("name,duration_s,launches,samples\ngemm,0.000229,2,0.000229 0\n")
    assert str(refused(path)) == (
        f"{path}, row 2, field 'samples': duration of 0.0 s for one of 2 samples: {NEVER}"
    )


def test_a_zero_sample_of_a_roofguard_json_record_is_refused(
    corpus_dir: Path, tmp_path: Path
) -> None:
    """The record's own rule (``collectors.schema``), as an uploaded record's."""
    record = collectors.collect(corpus_dir / PYTEST)
    kernel = record.kernels[0].model_copy(update={"samples_s": (2e-6, 0.0)})
    path = tmp_path / "run.json"
    path.write_text(record.model_copy(update={"kernels": (kernel,)}).model_dump_json())
    error = refused(path)
    assert (error.row, error.field) == ("kernels[0]", "samples_s.1")
    assert error.reason == f"Value error, duration of 0.0 s for a sample: {NEVER}"


def test_kineto_dur_0_stays_an_untimed_launch_and_under_a_picosecond_is_refused(
    tmp_path: Path,
) -> None:
    def trace(*durations: float) -> Path:
        events = [
            {"ph": "X", "cat": "kernel", "name": "k", "dur": dur, "args": {"device": 0}}
            for dur in durations
        ]
        path = tmp_path / "trace.json"
        path.write_text(json.dumps({"traceEvents": events}))
        return path

    (kernel,) = collectors.collect(trace(0, 4)).kernels
    assert (kernel.launches, kernel.failed_launches, kernel.samples_s) == (1, 1, (4e-6,))
    path = trace(4, 1e-300)
    assert str(refused(path)) == (
        f"{path}, row traceEvents[1], field 'dur': duration of 1e-306 s for a launch: {NEVER}"
    )
