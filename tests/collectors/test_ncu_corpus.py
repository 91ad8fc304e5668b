"""Every ncu file of the real corpus parses into its golden RunRecord (or its one clear error)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import collectors
from collectors.errors import MalformedReport

GOLDEN = Path(__file__).parent / "golden"
ERR_FILE = "ncu-csv/Gardenia-Tian_LearningNote4Dev__gemm_profile_ERR_NVGPUCTRPERM.csv"
#: Custom metrics only: not one of its 240 launches has a duration.
UNTIMED_FILE = "ncu-csv/leleucas_Actual-Parameter-Collection__pooling_nsight16.csv"
FILES = [
    *(
        f"ncu-rep/{n}"
        for n in (
            "2388612861_GPU-DEMO__ncu_report_optimized.ncu-rep",
            "AlpriElse_cs599k__silu-2025-04-18-v7.ncu-rep",
            "AveryClapp_ESMM-Research__profile_output.ncu-rep",
            "NVIDIA_nsight-training__sample_report.ncu-rep",
            "armleth_cuda-mlp-inference__report_v4_8_per_thread.ncu-rep",
            "bwd29_self-join-MiSTIC__profileSUSYBIN3.out.ncu-rep",
            "eschnett_IndexSpaces.jl__profile.ncu-rep",
            "flyinglandlord_sglang__profile.ncu-rep",
            "iamcoleman_monte-carlo-pi__profile.ncu-rep",
            "kulnaman_lammps__output.ncu-rep",
            "panjd123_cutlass__report-s4.ncu-rep",
            "spymaster2h_spyinfer__report.ncu-rep",
            "tanvisharma_nsight-compute-files__3136_64_64_rtx2080ti_sgemm.ncu-rep",
            "victor-lvsy_seq_align__profile.ncu-rep",
        )
    ),
    *(
        f"ncu-csv/{n}"
        for n in (
            "AndrewXu22_optimal_unified_memory__lassen_nsight_cfd_097K.log",
            "Gardenia-Tian_LearningNote4Dev__gemm_output_sgemm.csv",
            "Lashi0812_CudaProgramming__ncu_reduceInteger.csv",
            "brycelelbach_nsightful__copy_blocked.csv",
            "leleucas_Actual-Parameter-Collection__bert_flashattn_nsight.csv",
            "leleucas_Actual-Parameter-Collection__interpolate_nsight_virtual.csv",
            "meinie0826_Roofline-Analysis__torch_sdpa_flash__gqa_bf16_b32_ctx8k_p64.ncu.csv",
            "wangzy0327_cuda-roofline__output_V100.csv",
        )
    ),
    "other/brycelelbach_nsightful__copy_blocked.txt",
]
FORMATS = {"ncu-rep": "ncu-rep", "ncu-csv": None, "other": "ncu-text"}


def record_json(record: collectors.RunRecord, corpus: Path) -> str:
    """The record as stable JSON: no timestamp, corpus paths made relative."""
    data = _rounded(json.loads(record.model_dump_json(exclude={"timestamp"})))
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    return text.replace(str(corpus) + "/", "<corpus>/")


def _rounded(data: object) -> object:
    """Floats to 12 significant digits: goldens must not pin the order of float additions."""
    if isinstance(data, float):
        return float(f"{data:.12g}")
    if isinstance(data, dict):
        return {k: _rounded(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_rounded(v) for v in data]
    return data


@pytest.mark.corpus
@pytest.mark.parametrize("name", FILES)
def test_corpus_file_matches_golden(name: str, corpus_dir: Path, golden) -> None:
    path = corpus_dir / name
    record = collectors.collect(path)
    assert record.kernels, "every corpus file has at least one kernel"
    assert record.profiler.tool == "ncu"
    expected = FORMATS[name.split("/")[0]]
    if expected:
        assert record.sources[0].format == expected
    golden(GOLDEN / f"{Path(name).name}.expected.json", record_json(record, corpus_dir))


@pytest.mark.corpus
def test_failed_run_gives_one_explained_error(corpus_dir: Path) -> None:
    with pytest.raises(MalformedReport) as info:
        collectors.collect(corpus_dir / ERR_FILE)
    message = str(info.value)
    assert "ERR_NVGPUCTRPERM" in message
    assert "permission" in message
    assert info.value.row == "2"  # the ==ERROR== line


@pytest.mark.corpus
def test_a_report_without_a_duration_gives_one_explained_error(corpus_dir: Path) -> None:
    """Read, it was a run of two kernels at 0 s: stored, it judged nothing, then a 0 s baseline."""
    with pytest.raises(MalformedReport) as info:
        collectors.collect(corpus_dir / UNTIMED_FILE)
    assert info.value.field == "gpu__time_duration.sum" and info.value.row is None
    assert "none of its 240 launches has a duration" in str(info.value)
    assert "--set roofline" in str(info.value)


@pytest.mark.corpus
def test_details_csv_is_sniffed_apart_from_raw(corpus_dir: Path) -> None:
    raw = collectors.detect(corpus_dir / FILES[-3])
    details = collectors.detect(corpus_dir / "ncu-csv/brycelelbach_nsightful__copy_blocked.csv")
    text = collectors.detect(corpus_dir / "other/brycelelbach_nsightful__copy_blocked.txt")
    assert (raw.name, details.name, text.name) == ("ncu-csv-raw", "ncu-csv-details", "ncu-text")


@pytest.mark.corpus
def test_device_option_fills_in_when_the_file_names_none(corpus_dir: Path) -> None:
    path = corpus_dir / "ncu-csv/Lashi0812_CudaProgramming__ncu_reduceInteger.csv"
    plain = collectors.collect(path)
    named = collectors.collect(
        path, options=collectors.CollectOptions(device="NVIDIA GeForce RTX 4090")
    )
    assert plain.device.name == "unknown GPU (CC 8.9)"
    assert named.device.name == "NVIDIA GeForce RTX 4090"
    assert named.device.compute_capability == "8.9"


@pytest.mark.corpus
def test_device_from_program_stdout_in_2020_logs(corpus_dir: Path) -> None:
    record = collectors.collect(corpus_dir / FILES[14])
    assert record.device.name == "Tesla V100-SXM2-16GB"
    assert sum(k.launches for k in record.kernels) == 100


@pytest.mark.corpus
def test_report_device_wins_over_option(corpus_dir: Path) -> None:
    opts = collectors.CollectOptions(device="something else")
    record = collectors.collect(corpus_dir / FILES[2], options=opts)
    assert record.device.name == "NVIDIA A10G"
