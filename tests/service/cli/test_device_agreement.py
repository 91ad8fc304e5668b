"""``plot run``, ``inspect`` and ``check`` read a report with ``--device`` alike.

``plot run`` read the file without ``--device`` and took the CPU a pytest-benchmark file
names for its device: it refused both corpus pytest-benchmark files ("the report names device
'Intel(R) Core(TM) i7-4771 ...', but --device gives 'H100-SXM5'") that check and inspect
judge on the H100.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from rules import builtin_catalog
from service.cli import run
from service.pipeline.roofs import same_card

DEVICE = "H100-SXM5"
#: Every file of the corpus, by folder (``test_the_list_holds_every_corpus_file``).
CORPUS_FILES = {
    "gbench": [
        "donar337_numa-pmr__bench.json",
        "google_benchmark__tools_gbench_Inputs_test1_run1.json",
    ],
    "ncu-csv": [
        "AndrewXu22_optimal_unified_memory__lassen_nsight_cfd_097K.log",
        "Gardenia-Tian_LearningNote4Dev__gemm_output_sgemm.csv",
        "Gardenia-Tian_LearningNote4Dev__gemm_profile_ERR_NVGPUCTRPERM.csv",
        "Lashi0812_CudaProgramming__ncu_reduceInteger.csv",
        "brycelelbach_nsightful__copy_blocked.csv",
        "leleucas_Actual-Parameter-Collection__bert_flashattn_nsight.csv",
        "leleucas_Actual-Parameter-Collection__interpolate_nsight_virtual.csv",
        "leleucas_Actual-Parameter-Collection__pooling_nsight16.csv",
        "meinie0826_Roofline-Analysis__torch_sdpa_flash__gqa_bf16_b32_ctx8k_p64.ncu.csv",
        "wangzy0327_cuda-roofline__output_V100.csv",
    ],
    "ncu-rep": [
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
    ],
    "nvbench": [
        "NVIDIA_nvbench__examples_outputs_throughput.json",
        "NVIDIA_nvbench__python_scripts_test_ref.json",
        "R100001_PMPP__image_to_grayscale_BenchResults2060.csv",
        "R100001_PMPP__image_to_grayscale_BenchResults2060.md",
    ],
    "other": [
        "brycelelbach_nsightful__copy_blocked.txt",
        "xytpai_nvbench__test_kineto_trace.json",
    ],
    "pytest-benchmark": [
        "benchmark-action_github-action-benchmark__pytest_output.json",
        "benchmark-action_github-action-benchmark__pytest_several_units.json",
    ],
}
FILES = [f"{folder}/{name}" for folder, names in CORPUS_FILES.items() for name in names]
#: ``plot run``'s own refusal: a chart needs kernels with bytes (gbench's have time only).
NOTHING_TO_DRAW = "no kernel has both time and byte counts to place on the chart"


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    return next((line for line in lines if line.startswith("roofguard: error:")), "")


def _inspected(report: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = run(["inspect", str(report), "--device", DEVICE, "--json"])
    if rc:
        return rc, _error(capsys)
    record = json.loads(capsys.readouterr().out)
    return rc, record["device"]["name"]


def _checked(report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    verdict = tmp_path / "verdict.json"
    argv = ["check", str(report), "--repo", "o/r", "--commit", "c1", "--device", DEVICE]
    argv += ["--format", "json", "--output", str(verdict), "--db", f"sqlite:///{tmp_path}/h.db"]
    rc = run(argv)
    if rc not in (0, 1):  # 1: a failing verdict, still a verdict
        return rc, _error(capsys)
    capsys.readouterr()
    return 0, json.loads(verdict.read_text())["device"]


def _plotted(report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    chart = tmp_path / "run.svg"
    rc = run(["plot", "run", str(report), "--device", DEVICE, "--output", str(chart)])
    if rc:
        return rc, _error(capsys)
    capsys.readouterr()
    # the title: "H100-SXM5 (datasheet): FILE", the roof's card and source
    titles = re.findall(r"<text[^>]*>([^<]*) \(\w+[^)]*\): ", chart.read_text())
    return rc, html.unescape(titles[0])


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.parametrize("name", FILES)
def test_plot_inspect_and_check_agree_on_the_device(
    name, corpus_dir, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)  # no roofguard.toml but the one each command would find here
    report = corpus_dir / name
    inspected = _inspected(report, capsys)
    checked = _checked(report, tmp_path, capsys)
    plotted = _plotted(report, tmp_path, capsys)
    if inspected[0] or checked[0]:  # refused: alike, with one message
        assert inspected == checked == plotted
        return
    assert inspected == checked, "inspect and check judge the file on one device"
    if plotted[0] and NOTHING_TO_DRAW in plotted[1]:
        return
    assert plotted[0] == 0, plotted[1]
    assert same_card(plotted[1], checked[1], builtin_catalog()), (plotted, checked)


@pytest.mark.corpus
def test_the_list_holds_every_corpus_file(corpus_dir) -> None:
    found = sorted(
        str(p.relative_to(corpus_dir))
        for p in corpus_dir.rglob("*")
        if p.is_file() and p.name != "SOURCES.md"
    )
    assert found == sorted(FILES)
