"""Bad microbenchmark input: one MalformedReport naming the file, the entry and the field."""

from __future__ import annotations

import json

import pytest

from collectors import collect, detect
from collectors.errors import MalformedReport, UnknownFormat


def gbench(*entries):
    return json.dumps({"context": {"library_build_type": "release"}, "benchmarks": list(entries)})


def bm(name="BM_x", real_time=1.0, unit="ns", **extra):
    return {
        "name": name,
        "iterations": 10,
        "real_time": real_time,
        "cpu_time": 1.0,
        "time_unit": unit,
        **extra,
    }


def pytest_bench(*entries):
    return json.dumps({"machine_info": {"node": "n"}, "benchmarks": list(entries)})


def pb(name="test_x", median=1e-3):
    return {"name": name, "params": None, "extra_info": {}, "stats": {"median": median}}


def nvbench(value):
    summary = {
        "tag": "nv/cold/time/gpu/mean",
        "name": "GPU Time",
        "hint": "duration",
        "data": [{"name": "value", "type": "float64", "value": value}],
    }
    state = {"name": "Device=0", "device": 0, "axis_values": None, "summaries": [summary]}
    return json.dumps(
        {
            "meta": {"version": {"json": {"string": "1.0.0"}}},
            "devices": [{"id": 0, "name": "GPU", "sm_version": 900}],
            "benchmarks": [{"name": "copy", "states": [state]}],
        }
    )


NV_CSV = (
    "Benchmark,Device,Device Name,Size,Skipped,Samples,GPU Time (sec),Noise\n"
    "copy,0,GPU,1024,No,100,1e-05,0.01\n"
    "copy,0,GPU,2048,No,100\n"
)
NV_MD = (
    "# Devices\n\n## [0] `GPU`\n* Number of SMs: 10\n\n# Benchmark Results\n\n## copy\n\n"
    "### [0] GPU\n\n| Size | Samples | GPU Time |\n|------|---------|----------|\n"
    "| 1024 | 100x | fast |\n"
)
KINETO = json.dumps(
    {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "dur": -3, "args": {"device": 0}}]}
)

CASES = {
    "gbench-truncated": ("b.json", gbench(bm())[:60], "gbench-json", "line 1", None),
    "gbench-wrong-schema": (
        "b.json",
        json.dumps({"context": {"date": "x"}, "benchmarks": {}, "library_build_type": "release"}),
        "gbench-json",
        None,
        "benchmarks",
    ),
    "gbench-non-numeric": (
        "b.json",
        gbench(bm(real_time="fast")),
        "gbench-json",
        "benchmarks[0]",
        "real_time",
    ),
    "gbench-negative": (
        "b.json",
        gbench(bm(real_time=-2.0)),
        "gbench-json",
        "benchmarks[0]",
        "real_time",
    ),
    "gbench-time-unit": (
        "b.json",
        gbench(bm(unit="fortnight")),
        "gbench-json",
        "benchmarks[0]",
        "time_unit",
    ),
    "gbench-duplicate": ("b.json", gbench(bm(), bm()), "gbench-json", "benchmarks[1]", "name"),
    "gbench-bad-counter": (
        "b.json",
        gbench(bm(bytes_per_second="many")),
        "gbench-json",
        "benchmarks[0]",
        "bytes_per_second",
    ),
    "pytest-non-numeric": (
        "p.json",
        pytest_bench(pb(median="x")),
        "pytest-benchmark-json",
        "benchmarks[0]",
        "median",
    ),
    "pytest-duplicate": (
        "p.json",
        pytest_bench(pb(), pb()),
        "pytest-benchmark-json",
        "benchmarks[1]",
        "name",
    ),
    "nvbench-non-numeric": (
        "n.json",
        nvbench("abc"),
        "nvbench-json",
        "copy [Device=0]",
        "GPU Time",
    ),
    "nvbench-negative": ("n.json", nvbench("-1e-3"), "nvbench-json", "copy [Device=0]", "GPU Time"),
    "nvbench-csv-truncated": ("n.csv", NV_CSV, "nvbench-csv", "3", None),
    "nvbench-md-non-numeric": ("n.md", NV_MD, "nvbench-md", "14", "GPU Time"),
    "kineto-negative": ("t.json", KINETO, "kineto-trace", "traceEvents[0]", "dur"),
    "csv-unknown-column": (
        "r.csv",
        "name,duration_s,flops_fp33\nk,1e-3,5\n",
        "roofguard-csv",
        "1",
        "flops_fp33",
    ),
    "csv-unquoted-template": (
        "r.csv",
        "name,duration_s\nvoid k<float, 128>(float*),1e-3\n",
        "roofguard-csv",
        "2",
        None,
    ),
    "csv-negative": ("r.csv", "name,duration_s\nk,-1\n", "roofguard-csv", "2", "duration_s"),
    "csv-duplicate": ("r.csv", "name,duration_s\nk,1\nk,2\n", "roofguard-csv", "3", "name"),
    "csv-non-numeric": (
        "r.csv",
        "name,duration_s,bytes_dram\nk,1,lots\n",
        "roofguard-csv",
        "2",
        "bytes_dram",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_names_file_entry_and_field(case, tmp_path):
    filename, content, fmt, row, field = CASES[case]
    path = tmp_path / filename
    path.write_text(content, encoding="utf-8")
    assert detect(path).name == fmt
    with pytest.raises(MalformedReport) as err:
        collect(path)  # detected by content, as the CLI does
    assert err.value.path == str(path)
    assert (err.value.row or "").startswith(row or "")
    assert (err.value.row is None) == (row is None)
    if field is not None:
        assert field in (err.value.field or "")
    assert str(err.value).startswith(str(path))


def test_a_template_name_with_commas_is_told_to_be_quoted(tmp_path):
    """A C++ signature's commas split the row: the error says to quote it, not "truncated?"."""
    path = tmp_path / "r.csv"
    path.write_text("name,duration_s\nvoid k<float, 128>(float*),1e-3\n")
    with pytest.raises(MalformedReport, match=r"got 3: quote a name that holds commas"):
        collect(path)
    path.write_text('name,duration_s\n"void k<float, 128>(float*)",1e-3\n')
    assert collect(path).kernels[0].name == "void k<float, 128>(float*)"


@pytest.mark.parametrize(
    "fmt",
    [
        "nvbench-json",
        "nvbench-csv",
        "nvbench-md",
        "gbench-json",
        "pytest-benchmark-json",
        "kineto-trace",
        "roofguard-csv",
    ],
)
def test_empty_file_is_one_clear_error(fmt, tmp_path):
    path = tmp_path / "empty.json"
    path.write_text("  \n", encoding="utf-8")
    with pytest.raises(MalformedReport, match="the file is empty"):
        collect(path, fmt=fmt)
    with pytest.raises(UnknownFormat, match="the file is empty"):
        collect(path)


def test_truncated_real_nvbench_file(corpus_dir, tmp_path):
    real = corpus_dir / "nvbench/NVIDIA_nvbench__python_scripts_test_ref.json"
    path = tmp_path / "cut.json"
    path.write_bytes(real.read_bytes()[:200_000])
    with pytest.raises(MalformedReport, match=r"not valid JSON \(truncated\?\)") as err:
        collect(path)
    assert err.value.row is not None and err.value.row.startswith("line ")


def test_broken_json_mid_file_names_line_and_column_not_truncation(tmp_path):
    """A syntax error at line 3 of 4 read "row line 3: not valid JSON (truncated?)"."""
    path = tmp_path / "mid.json"
    path.write_text('{"benchmarks": [\n {"name": "a"},\n {"name": "b" "x": 1},\n]}\n')
    with pytest.raises(MalformedReport) as err:
        collect(path, fmt="gbench-json")
    assert str(err.value).startswith(f"{path}, line 3, column 15: not valid JSON: Expecting")


GBENCH_CORPUS = "gbench/donar337_numa-pmr__bench.json"


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("field", "value"), [("bytes_per_second", -1.0), ("flops_fp32", -1e9), ("bytes_l2", -64)]
)
def test_negative_gbench_work_counter_is_refused(field, value, corpus_dir, tmp_path):
    """-1 bytes/s was stored as 0 bytes "reported"; -1e9 FLOPs read as "no flops counter"."""
    root = json.loads((corpus_dir / GBENCH_CORPUS).read_text())
    root["benchmarks"][2][field] = value
    name = root["benchmarks"][2]["name"]
    path = tmp_path / "neg.json"
    path.write_text(json.dumps(root))
    with pytest.raises(MalformedReport) as err:
        collect(path)
    assert (err.value.path, err.value.row, err.value.field) == (
        str(path),
        f"benchmarks[2] ({name})",
        field,
    )
    assert f"field '{field}': must not be negative" in str(err.value)


def test_negative_gbench_counter_that_is_no_work_is_kept(tmp_path):
    path = tmp_path / "b.json"
    path.write_text(gbench(bm(delta_ns=-3.5, flops_bf16=-1.0)))
    (kernel,) = collect(path).kernels
    assert kernel.counters["delta_ns"] == -3.5 and kernel.counters["flops_bf16"] == -1.0


PYTEST_CORPUS = "pytest-benchmark/benchmark-action_github-action-benchmark__pytest_output.json"


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("extra", "field", "reason"),
    [
        ({"flops_fp32": "lots", "bytes_dram": -5}, "extra_info.flops_fp32", "not a number: 'lots'"),
        ({"flops_fp32": 1e6, "bytes_dram": -5}, "extra_info.bytes_dram", "must not be negative"),
        ({"bytes_l2": True}, "extra_info.bytes_l2", "not a number: True"),
    ],
)
def test_bad_pytest_benchmark_work_names_its_extra_info_field(
    extra, field, reason, corpus_dir, tmp_path
):
    """An error named the record's field (``bytes.dram``) and said nothing of 'lots'."""
    root = json.loads((corpus_dir / PYTEST_CORPUS).read_text())
    root["benchmarks"][0]["extra_info"] = extra
    name = root["benchmarks"][0]["name"]
    path = tmp_path / "pb.json"
    path.write_text(json.dumps(root))
    with pytest.raises(MalformedReport) as err:
        collect(path)
    assert (err.value.path, err.value.row, err.value.field) == (
        str(path),
        f"benchmarks[0] ({name})",
        field,
    )
    assert reason in str(err.value)


def test_pytest_benchmark_extra_info_that_is_no_work_may_be_text_or_negative(tmp_path):
    extra = {"bytes_layout": "row-major", "delta": -2, "flops_bf16": -1, "flops_fp32": None}
    path = tmp_path / "p.json"
    path.write_text(pytest_bench({**pb(), "extra_info": extra}))
    (kernel,) = collect(path).kernels
    assert kernel.counters["delta"] == -2 and "bytes_layout" not in kernel.counters
    assert kernel.flops == {}


def test_flat_csv_samples_that_do_not_add_up_to_the_duration_are_refused(tmp_path):
    """``samples`` are per launch and ``duration_s`` the total: a run's time given as each of
    10 launches' samples read every sample's percent of roof 10x too low (a false PR fail)."""
    path = tmp_path / "run.csv"
    header = "name,duration_s,flops_tensor_bf16,launches,samples\n"
    path.write_text(header + "gemm,0.0002,4e10,10,0.000199 0.000201\n", encoding="utf-8")
    with pytest.raises(MalformedReport) as refused:
        collect(path)
    message = str(refused.value)
    assert "row 2" in message and "'samples'" in message and "10 launch(es)" in message
    path.write_text(header + "gemm,0.002,4e10,10,0.000199 0.000201\n", encoding="utf-8")
    (kernel,) = collect(path).kernels
    assert kernel.launches == 10 and kernel.samples_s == (0.000199, 0.000201)


def test_flat_csv_samples_around_a_median_duration_are_kept(tmp_path):
    """One call timed by its median: a cold first iteration 10x slower is no per-run sample."""
    path = tmp_path / "run.csv"
    header = "name,duration_s,flops_tensor_bf16,launches,samples\n"
    path.write_text(header + "gemm,0.0002,4e10,1,0.002 0.0002 0.000201\n", encoding="utf-8")
    (kernel,) = collect(path).kernels
    assert kernel.samples_s == (0.002, 0.0002, 0.000201)
