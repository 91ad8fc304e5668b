"""Every microbenchmark file of the corpus parses, against a golden record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors import CollectOptions, collect, detect
from collectors.errors import MalformedReport
from collectors.formats import _nvbench
from collectors.formats.roofguard_csv import to_csv
from collectors.identity import KeyOptions
from collectors.schema import RunRecord

GOLDEN = Path(__file__).parent / "golden"
PYTEST_DIR, PYTEST_FMT = "pytest-benchmark", "pytest-benchmark-json"
#: corpus file -> the collector that must recognise it by content.
MICRO_FILES = {
    "nvbench/NVIDIA_nvbench__examples_outputs_throughput.json": "nvbench-json",
    "nvbench/NVIDIA_nvbench__python_scripts_test_ref.json": "nvbench-json",
    "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.csv": "nvbench-csv",
    "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.md": "nvbench-md",
    "gbench/donar337_numa-pmr__bench.json": "gbench-json",
    "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json": "gbench-json",
    f"{PYTEST_DIR}/benchmark-action_github-action-benchmark__pytest_output.json": PYTEST_FMT,
    f"{PYTEST_DIR}/benchmark-action_github-action-benchmark__pytest_several_units.json": PYTEST_FMT,
    "other/xytpai_nvbench__test_kineto_trace.json": "kineto-trace",
}
#: Formats whose files carry no timestamp: the record gets the collection time.
NO_TIMESTAMP = {"nvbench-json", "nvbench-csv", "nvbench-md", "kineto-trace"}


def golden_text(record: RunRecord, corpus: Path, fmt: str) -> str:
    data = record.model_dump(mode="json")
    if fmt in NO_TIMESTAMP:
        data["timestamp"] = "<collection time>"
    return json.dumps(data, indent=1, sort_keys=True).replace(str(corpus), "<corpus>") + "\n"


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(MICRO_FILES))
def test_corpus_file_parses_as_golden(name, corpus_dir, golden):
    path = corpus_dir / name
    fmt = MICRO_FILES[name]
    assert detect(path).name == fmt
    record = collect(path)
    assert record.kernels, "every corpus file holds at least one benchmark"
    golden(GOLDEN / f"{Path(name).name}.expected.json", golden_text(record, corpus_dir, fmt))


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(MICRO_FILES))
def test_own_json_round_trip(name, corpus_dir, tmp_path):
    record = collect(corpus_dir / name)
    out = tmp_path / "run.json"
    out.write_text(record.model_dump_json(indent=2), encoding="utf-8")
    assert detect(out).name == "roofguard-json"
    assert collect(out) == record


def test_a_run_record_without_its_defaulted_keys_is_read(tmp_path):
    """``schema_version`` has a default: a hand-written record without it is one."""
    out = tmp_path / "run.json"
    record = {
        "device": {"name": "NVIDIA H100 80GB HBM3"},
        "profiler": {"tool": "ncu"},
        "timestamp": "2026-11-20T02:00:00Z",
        "kernels": [{"name": "k", "key": "k", "duration_s": 1e-3, "bytes": {"dram": 1e9}}],
    }
    out.write_text(json.dumps(record), encoding="utf-8")
    assert detect(out).name == "roofguard-json"
    assert collect(out) == RunRecord.model_validate(record)


def test_a_list_of_run_records_is_refused_with_the_way_to_write_one(tmp_path):
    """``inspect --json`` of several reports writes a list, read back as "not a format"."""
    record = {
        "device": {"name": "NVIDIA H100 80GB HBM3"},
        "profiler": {"tool": "ncu"},
        "kernels": [{"name": "k", "key": "k", "duration_s": 1e-3}],
    }
    out = tmp_path / "two.json"
    out.write_text(json.dumps([record, record], indent=2), encoding="utf-8")
    assert detect(out).name == "roofguard-json"
    with pytest.raises(MalformedReport) as refused:
        collect(out)
    assert str(refused.value).startswith(f"{out}: a JSON list of runs (`roofguard inspect")


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(MICRO_FILES))
def test_flat_csv_round_trip(name, corpus_dir, tmp_path):
    record = collect(corpus_dir / name)
    out = tmp_path / "run.csv"
    out.write_text(to_csv(record), encoding="utf-8")
    assert detect(out).name == "roofguard-csv"
    back = collect(out)
    assert back.device.name == record.device.name
    fields = ("name", "key", "launches", "duration_s", "samples_s", "flops", "bytes", "params")
    for kernel, again in zip(record.kernels, back.kernels, strict=True):
        assert {f: getattr(again, f) for f in fields} == {f: getattr(kernel, f) for f in fields}


@pytest.mark.corpus
@pytest.mark.parametrize("name", [n for n, fmt in MICRO_FILES.items() if fmt.startswith("nvbench")])
def test_nvbench_states_of_a_sweep_are_told_apart_by_name(name, corpus_dir):
    """Nine rows named copy_sweep_grid_shape, one per state, read alike in a PR comment."""
    kernels = collect(corpus_dir / name).kernels
    assert len({k.name for k in kernels}) == len(kernels)
    assert all(k.name == k.key for k in kernels if k.params)


@pytest.mark.corpus
def test_nvbench_csv_and_markdown_of_one_run_agree(corpus_dir):
    stem = corpus_dir / "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060"
    from_csv, from_md = collect(stem.with_suffix(".csv")), collect(stem.with_suffix(".md"))
    assert [k.key for k in from_csv.kernels] == [k.key for k in from_md.kernels]
    for a, b in zip(from_csv.kernels, from_md.kernels, strict=True):
        assert a.bytes == b.bytes  # exact: both from the named read/write sizes
        assert b.duration_s == pytest.approx(a.duration_s, rel=1e-3)  # md rounds to 4 digits
    assert from_md.device.bandwidth_byte_per_s == {"dram": 336e9}
    assert from_md.device.sm_count == 30
    # --csv prints no device section: its roof is the rows' GlobalMem BW / BWUtil, the same
    # bus peak (192-bit at 7001 MHz DDR: 336.05 GB/s; the markdown prints it rounded)
    implied = from_csv.device.bandwidth_byte_per_s["dram"]
    assert implied == pytest.approx(192 / 8 * 7001e6 * 2, rel=1e-4)
    assert any("implied by the rows' GlobalMem BW / BWUtil" in n for n in from_csv.notes)


def test_nvbench_rows_that_disagree_on_their_peak_imply_no_roof():
    def state(bw: float, util: float) -> _nvbench.State:
        made = _nvbench.State(bench="b", name="s", device=0, params={})
        made.summaries |= {_nvbench.GLOBAL_BW: bw, _nvbench.GLOBAL_UTILIZATION: util}
        return made

    assert _nvbench.implied_bus_bandwidth([state(1e11, 0.5), state(2e11, 1.0)]) == 2e11
    assert _nvbench.implied_bus_bandwidth([state(1e11, 0.5), state(1e11, 0.25)]) is None
    assert _nvbench.implied_bus_bandwidth([state(1e11, 0.0)]) is None


@pytest.mark.corpus
def test_nvbench_state_is_one_record_and_skips_are_notes(corpus_dir):
    record = collect(corpus_dir / "nvbench/NVIDIA_nvbench__python_scripts_test_ref.json")
    conversion = record.kernel("copy_type_conversion_sweep[In=F32,Out=F64]")
    assert conversion.params == {"In": "F32", "Out": "F64"}
    assert conversion.bytes == {"dram": 64 * 2**20 + 128 * 2**20}  # InSize + OutSize
    assert conversion.provenance["bytes.dram"].kind == "reported"
    assert "mean" in conversion.provenance["duration"].note
    skipped = [n for n in record.notes if n.startswith("skipped state")]
    assert len(skipped) == 38 and "Not a conversion" in skipped[0]
    assert not any("In=I8,Out=I8" in k.key for k in record.kernels)
    assert record.device.name == "Quadro GV100"
    assert record.device.bandwidth_byte_per_s == {"dram": 870.4e9}


@pytest.mark.corpus
def test_nvbench_bytes_recovered_when_names_miss_unnamed_writes(corpus_dir):
    # throughput example: only the reads are named (64 MiB); writes add another 64 MiB.
    record = collect(corpus_dir / "nvbench/NVIDIA_nvbench__examples_outputs_throughput.json")
    (kernel,) = record.kernels
    assert kernel.counters["DataSize"] == 64 * 2**20
    assert kernel.bytes == {"dram": 128 * 2**20}


@pytest.mark.corpus
def test_nvbench_other_device_chosen_by_name(corpus_dir):
    path = corpus_dir / "nvbench/NVIDIA_nvbench__python_scripts_test_ref.json"
    record = collect(path, options=CollectOptions(device="Quadro GP100"))
    assert record.device.name == "Quadro GP100"
    assert record.device.sm_count == 56
    assert record.kernel("simple").duration_s != collect(path).kernel("simple").duration_s


NV_REF = "nvbench/NVIDIA_nvbench__python_scripts_test_ref.json"


def _edited_nvbench(corpus_dir, tmp_path, edit):
    root = json.loads((corpus_dir / NV_REF).read_text())
    edit(root)
    path = tmp_path / "nv.json"
    path.write_text(json.dumps(root))
    return path


def _drop_gpu_time(state):
    state["summaries"] = [x for x in state["summaries"] if x["tag"] != _nvbench.GPU_MEAN]


@pytest.mark.corpus
def test_nvbench_a_skipped_first_state_does_not_change_the_device(corpus_dir, tmp_path):
    """Skipping benchmarks[0].states[0] read the whole run as the second GPU (GP100)."""

    def skip_first(root):
        root["benchmarks"][0]["states"][0] |= {"is_skipped": True, "skip_reason": "no memory"}

    record = collect(_edited_nvbench(corpus_dir, tmp_path, skip_first))
    assert (record.device.name, record.device.sm_count) == ("Quadro GV100", 80)
    assert "skipped state simple [Device=0]: no memory" in record.notes
    assert not any(k.name == "simple" for k in record.kernels)
    assert len(record.kernels) == len(collect(corpus_dir / NV_REF).kernels) - 1


@pytest.mark.corpus
def test_nvbench_md_a_run_line_s_device_of_5000_digits_is_no_index(corpus_dir, tmp_path):
    """int() of it raised Python's digit limit: "a roofguard bug, please report it"."""
    md = corpus_dir / "nvbench" / "R100001_PMPP__image_to_grayscale_BenchResults2060.md"
    path = tmp_path / "huge-device.md"
    path.write_text(md.read_text().replace("[Device=0 Axis", f"[Device={'9' * 5000} Axis", 1))
    assert len(collect(path).kernels) == len(collect(md).kernels)


def test_nvbench_csv_a_skipped_first_row_does_not_change_the_device(tmp_path):
    path = tmp_path / "nv.csv"
    path.write_text(
        "Benchmark,Device,Device Name,Skipped,Samples,GPU Time (sec),Noise\n"
        "copy,0,GPU A,Yes,,,\n"
        "copy,1,GPU B,No,100,1e-05,0.01\n"
        "scan,0,GPU A,No,100,2e-05,0.01\n"
    )
    record = collect(path)
    assert record.device.name == "GPU A" and [k.name for k in record.kernels] == ["scan"]


@pytest.mark.corpus
def test_nvbench_a_state_without_gpu_time_is_no_cpu_time(corpus_dir, tmp_path):
    """It was read as its CPU time among GPU times, the note only in --json."""
    path = _edited_nvbench(
        corpus_dir, tmp_path, lambda root: _drop_gpu_time(root["benchmarks"][0]["states"][0])
    )
    record = collect(path)
    assert not any(k.name == "simple" for k in record.kernels)
    assert record.notes[0].startswith(  # first: the text report shows the first notes
        "state simple [Device=0] not ingested: no GPU time (nv/cold/time/gpu/mean)"
    )
    cut = path.read_text().replace('"nv/cold/time/gpu/mean"', '"nv/cold/time/gpu/other"')
    path.write_text(cut)  # no state has GPU time: a CPU-only file reads as CPU time
    kernel = collect(path).kernel("simple")
    assert kernel.provenance["duration"].metrics == (_nvbench.CPU_MEAN,)


@pytest.mark.corpus
def test_gbench_rate_counters_become_bytes_per_iteration(corpus_dir):
    record = collect(corpus_dir / "gbench/donar337_numa-pmr__bench.json")
    kernel = record.kernel("BM_ImmediateAllocateFree[backend=0,size=1024]")
    assert kernel.params == {"size": 1024.0, "backend": 0.0}
    assert kernel.bytes["dram"] == pytest.approx(1024, rel=1e-9)
    assert kernel.duration_s == pytest.approx(10.1755757354927e-9)


@pytest.mark.corpus
def test_gbench_2016_schema_skips_complexity_aggregates(corpus_dir):
    record = collect(corpus_dir / "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json")
    assert len(record.kernels) == 14
    assert not any("MyComplexityTest" in k.key for k in record.kernels)
    assert record.kernel("BM_NotBadTimeUnit").duration_s == 0.4  # time_unit "s"
    assert record.kernel("BM_NotBadTimeUnit").counters["cpu_time_s"] == 0.5


@pytest.mark.corpus
def test_pytest_benchmark_median_and_commit(corpus_dir):
    path = "pytest-benchmark/benchmark-action_github-action-benchmark__pytest_several_units.json"
    record = collect(corpus_dir / path)
    sleep = record.kernel("test_sleep_2")
    assert sleep.duration_s == pytest.approx(2.005124842999999)
    assert len(sleep.samples_s) == 5  # complete data kept; elided lists are dropped with a note
    assert record.commit == "b8e9e2af2493a1ee2f3fa758a9572cd9972e6db7"
    assert any("non-numeric" in n for n in record.notes)


@pytest.mark.corpus
def test_kineto_kernels_and_device_copies(corpus_dir):
    record = collect(corpus_dir / "other/xytpai_nvbench__test_kineto_trace.json")
    gemm = next(k for k in record.kernels if "sgemm" in k.name)
    assert (gemm.launches, gemm.duration_s, gemm.grid) == (1, pytest.approx(313e-6), "(128, 1, 4)")
    copy = next(k for k in record.kernels if k.name.startswith("Memcpy DtoD"))
    assert copy.bytes == {"dram": 2 * 16777216}
    assert record.device.name == "NVIDIA GeForce RTX 4090"


def test_kineto_groups_launches_by_key(tmp_path):
    events = [
        {
            "ph": "X",
            "cat": "kernel",
            "name": "void k<float>(float*)",
            "dur": d,
            "args": {"device": 0, "grid": [8, 1, 1], "block": [128, 1, 1]},
        }
        for d in (10, 12, 11)
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    (kernel,) = collect(path).kernels
    assert (kernel.launches, kernel.samples_s) == (3, (10e-6, 12e-6, 11e-6))
    assert kernel.duration_s == pytest.approx(33e-6)
    keyed = collect(path, options=CollectOptions(keys=KeyOptions(include_launch_config=True)))
    assert keyed.kernels[0].key == "k<float> grid(8, 1, 1) block(128, 1, 1)"


def test_nvbench_2021_03_schema():
    record = collect(Path(__file__).parent / "data/micro/nvbench_2021_03.json")
    assert record.tools["nvbench-json-schema"] == "2021-03"
    (kernel,) = record.kernels
    assert kernel.key == "copy[Elements=1048576]"
    assert kernel.duration_s == 2.5e-05
    assert kernel.bytes == {"dram": 8 * 2**20}  # 335.54432 GB/s x 25 us
    assert kernel.counters["samples"] == 2000
    assert record.notes == ("skipped state copy [Device=0 Elements=2^30]: Not enough memory.",)


def test_nvbench_sample_times_file_beside_the_json(tmp_path):
    import struct

    samples = [1.0e-5, 1.5e-5, 1.25e-5]
    (tmp_path / "copy-0.bin").write_bytes(struct.pack("<3f", *samples))
    summaries = [
        {
            "tag": "nv/cold/time/gpu/mean",
            "name": "GPU Time",
            "hint": "duration",
            "data": [{"name": "value", "type": "float64", "value": "1.25e-05"}],
        },
        {
            "tag": "nv/cold/sample_times",
            "name": "Samples Times File",
            "hide": "x",
            "data": [
                {"name": "filename", "type": "string", "value": "copy-0.bin"},
                {"name": "size", "type": "int64", "value": "3"},
            ],
        },
    ]
    root = {
        "meta": {"version": {"json": {"string": "1.0.0"}}, "argv": ["bench", "--json"]},
        "devices": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "sm_version": 900}],
        "benchmarks": [
            {
                "name": "copy",
                "states": [
                    {
                        "name": "Device=0",
                        "device": 0,
                        "axis_values": None,
                        "summaries": summaries,
                        "is_skipped": False,
                    }
                ],
            }
        ],
    }
    path = tmp_path / "run.json"
    path.write_text(json.dumps(root))
    (kernel,) = collect(path).kernels
    assert kernel.samples_s == pytest.approx(samples, rel=1e-6)
    assert kernel.duration_s == 1.25e-05


def test_gbench_aggregates_only_uses_the_median(tmp_path):
    agg = {
        "run_name": "BM_k/64",
        "run_type": "aggregate",
        "repetitions": 5,
        "threads": 1,
        "iterations": 5,
        "cpu_time": 2.0,
        "time_unit": "us",
    }
    entries = [
        {**agg, "name": "BM_k/64_mean", "aggregate_name": "mean", "real_time": 3.0},
        {**agg, "name": "BM_k/64_median", "aggregate_name": "median", "real_time": 2.5},
        {**agg, "name": "BM_k/64_stddev", "aggregate_name": "stddev", "real_time": 0.4},
    ]
    path = tmp_path / "agg.json"
    path.write_text(
        json.dumps({"context": {"library_build_type": "release"}, "benchmarks": entries})
    )
    record = collect(path)
    (kernel,) = record.kernels
    assert (kernel.key, kernel.duration_s) == ("BM_k[arg0=64]", 2.5e-6)
    assert any("median aggregate" in note for note in record.notes)
    # there are no repetitions: no note may say they are kept
    assert not any("repetitions" in note and "kept" in note for note in record.notes)
    assert "3 aggregate entries of 1 run(s) with no repetition entries: 1 used" in record.notes[0]


@pytest.mark.corpus
def test_gbench_aggregates_with_no_time_are_said_not_ingested(corpus_dir):
    record = collect(corpus_dir / "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json")
    assert "MyComplexityTest not ingested: only aggregates (BigO, RMS), none a time" in record.notes
    assert not any("repetitions are kept" in note for note in record.notes)


def test_pytest_benchmark_params_and_extra_info_work(tmp_path):
    entry = {
        "name": "test_gemm[1024-bf16]",
        "params": {"n": 1024, "dtype": "bf16"},
        "extra_info": {"flops_tensor_bf16": 2 * 1024**3, "bytes_dram": 6 * 1024**2, "M": 1024},
        "stats": {"median": 2e-5, "mean": 2.1e-5, "rounds": 3, "data": [2e-5, 2.2e-5, 1.9e-5]},
    }
    path = tmp_path / "pb.json"
    path.write_text(
        json.dumps(
            {
                "machine_info": {"gpu": "NVIDIA H100 80GB HBM3"},
                "commit_info": {"id": "abc", "branch": "main"},
                "benchmarks": [entry],
            }
        )
    )
    record = collect(path)
    (kernel,) = record.kernels
    assert kernel.key == "test_gemm[dtype=bf16,n=1024]"
    assert kernel.flops == {"tensor_bf16": 2 * 1024**3}
    assert kernel.bytes == {"dram": 6 * 1024**2}
    assert kernel.counters["M"] == 1024 and kernel.samples_s == (2e-5, 2.2e-5, 1.9e-5)
    assert (record.device.name, record.commit, record.branch) == (
        "NVIDIA H100 80GB HBM3",
        "abc",
        "main",
    )
