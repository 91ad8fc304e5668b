"""``roofguard compare BASE_FILES... --against PR_FILES...``: two runs' reports, no database.

On real reports from the corpus (an Nsight Compute CSV of a copy kernel on a CC 7.5 card and
its copy 1.5x slower; two nvbench results) and on the demo's ncu exports, where the verify GEMM
falls off the tensor cores between the last night and the pull request.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from device_fleet import datasheet, nights

from service.cli import expand_greedy, run
from service.cli.compare_cmd import compare_files
from service.compare.runs_render import render_text as runs_text
from service.config import RoofguardConfig
from service.demo.generate import DATA_DIR

COPY = "ncu-csv/brycelelbach_nsightful__copy_blocked.csv"
NVBENCH = ("nvbench/NVIDIA_nvbench__examples_outputs_throughput.json",)
NVBENCH_OTHER = "nvbench/NVIDIA_nvbench__python_scripts_test_ref.json"
VERIFY = "verify_gemm_bf16<512, 14336, 4096>"


def _slower_copy(corpus_dir: Path, tmp_path: Path, factor: float) -> Path:
    """The corpus report with its kernel's Duration multiplied by ``factor`` (a slower PR)."""
    text = (corpus_dir / COPY).read_text(encoding="utf-8")

    def slower(match: re.Match[str]) -> str:
        value = float(match.group(1).replace(",", "")) * factor
        return f'"Duration","ns","{value:,.0f}"'

    mutated, count = re.subn(r'"Duration","ns","([0-9,]+)"', slower, text)
    assert count == 1
    path = tmp_path / "copy_blocked_pr.csv"
    path.write_text(mutated, encoding="utf-8")
    return path


def _json(capsys, *args: str) -> dict:
    assert run(["compare", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_real_ncu_report_against_its_slower_copy(corpus_dir, tmp_path, capsys) -> None:
    pr = _slower_copy(corpus_dir, tmp_path, 1.5)
    args = [str(corpus_dir / COPY), "--against", str(pr), "--device", "T4"]
    data = _json(capsys, *args)
    (copy,) = data["kernels"]
    assert copy["status"] == "slower" and copy["time_ratio"] == pytest.approx(1.5, rel=1e-6)
    # The details page's bytes come from its throughput over the duration: the same binding,
    # so the like-for-like figure is the kernel's own.
    assert copy["base_binding"] == copy["binding"] == "dram"
    assert copy["percent_of_baseline_roof"] == copy["percent_of_roof"] is not None
    assert data["headline"].startswith("1 slower, 0 new, 0 missing")
    assert run(["compare", *args]) == 0
    text = capsys.readouterr().out
    assert "(1.50×)" in text and "slower" in text and "T4 (datasheet)" in text


def test_the_demo_gemm_that_fell_off_the_tensor_cores_reads_like_for_like(capsys) -> None:
    base, pr = DATA_DIR / "nightly-30.csv", DATA_DIR / "pr-1234.csv"
    data = _json(capsys, str(base), "--against", str(pr))
    verify = next(k for k in data["kernels"] if k["name"] == VERIFY)
    assert verify["status"] == "slower" and verify["time_ratio"] == pytest.approx(15.0, rel=0.02)
    assert (verify["base_binding"], verify["binding"]) == ("tensor_bf16", "fp32")
    assert verify["percent_of_baseline_roof"] == pytest.approx(4.8, abs=0.05)
    assert verify["percent_of_roof"] == pytest.approx(70.5, abs=0.1)
    assert data["kernels"][0]["name"] == VERIFY, "the slowest change first"
    assert [k["status"] for k in data["kernels"]].count("new") == 2
    assert run(["compare", str(base), "--against", str(pr), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "4.8% of tensor_bf16 (70.5% of fp32)" in md.replace("\\", "")
    assert "| Kernel | Time (base → now) |" in md


def test_the_gemm_back_on_the_tensor_cores_reads_each_roof_its_own(capsys) -> None:
    """The demo's pair reversed: 15× faster off fp32, no like-for-like figure at fp32."""
    base, pr = DATA_DIR / "pr-1234.csv", DATA_DIR / "nightly-30.csv"
    data = _json(capsys, str(base), "--against", str(pr))
    verify = next(k for k in data["kernels"] if k["name"] == VERIFY)
    assert verify["status"] == "faster"
    assert (verify["base_binding"], verify["binding"]) == ("fp32", "tensor_bf16")
    assert verify["percent_of_baseline_roof"] == verify["percent_of_roof"]
    assert run(["compare", str(base), "--against", str(pr)]) == 0
    text = capsys.readouterr().out
    line = next(row for row in text.splitlines() if row.startswith("verify_gemm"))
    assert re.search(r"70\.5% of fp32 → 7\d\.\d% of tensor_bf16 ", line), line


def test_several_files_per_side_and_two_nvbench_results(corpus_dir, capsys) -> None:
    base = [str(corpus_dir / p) for p in NVBENCH]
    data = _json(capsys, *base, "--against", str(corpus_dir / NVBENCH_OTHER))
    statuses = {k["status"] for k in data["kernels"]}
    assert statuses == {"new", "missing"}, "different benchmarks: nothing to compare"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repo", "a/b", "x.csv", "--against", "y.csv"], "not both"),
        ([], "BASE_FILES... --against PR_FILES..."),
        (["--against", "y.csv"], "base run's report files"),
        (["x.csv"], "--against PR_FILES"),
        (["x.csv", "--against", "y.csv", "--forecast", "H100-SXM5"], "need --repo"),
    ],
)
def test_file_mode_or_store_mode_is_one_clear_error(args, message, capsys) -> None:
    assert run(["compare", *args]) == 2
    assert message in capsys.readouterr().err


def test_a_missing_file_names_it(tmp_path, capsys) -> None:
    assert run(["compare", str(tmp_path / "nope.csv"), "--against", str(tmp_path)]) == 2
    assert "nope.csv" in capsys.readouterr().err


def test_against_takes_every_word_up_to_the_next_option() -> None:
    args = ["compare", "a", "b", "--against", "c", "d", "--format", "json"]
    assert expand_greedy(args) == [
        "compare",
        "a",
        "b",
        "--against",
        "c",
        "--against",
        "d",
        "--format",
        "json",
    ]
    assert expand_greedy(["check", "a", "--against", "b"]) == ["check", "a", "--against", "b"]


def test_a_slower_fusion_reads_at_the_bases_bytes_in_its_time(tmp_path, capsys) -> None:
    """The base's MLP is unfused (memory-bound); the PR fuses it, 1/200 of the bytes, 1.2x slower.

    At its own bytes it read 0.7% of the dram roof; at the base's it reads the base's / 1.2.
    """
    header = "name,duration_s,flops_fp32,bytes_dram,launches\n"
    base, pr = tmp_path / "base.csv", tmp_path / "pr.csv"
    base.write_text(header + "mlp,0.307,1e12,5e11,1\n", encoding="utf-8")
    pr.write_text(header + f"mlp,{0.307 * 1.2},1e12,5e9,1\n", encoding="utf-8")
    data = _json(capsys, str(base), "--against", str(pr), "--device", "A100-SXM4-80GB")
    (mlp,) = data["kernels"]
    assert (mlp["base_binding"], mlp["binding"], mlp["status"]) == ("dram", "fp32", "slower")
    assert mlp["percent_of_baseline_roof"] == pytest.approx(mlp["base_percent_of_roof"] / 1.2)


def test_a_renamed_kernel_is_compared_with_the_one_whose_work_it_does(tmp_path, capsys) -> None:
    """softmax became softmax_v2 and 1.25x slower; two GEMMs of one shape got new names too.

    The rename is one row, slower; the GEMMs (each does the other's work) stay new and missing.
    """
    header = "name,duration_s,flops_fp32,bytes_dram,launches\n"
    gemms = "{0}_q,1e-3,1e12,1e8,1\n{0}_k,1e-3,1e12,1e8,1\n"
    base, pr = tmp_path / "base.csv", tmp_path / "pr.csv"
    base.write_text(header + "softmax,4e-4,2.5e7,2e8,1\n" + gemms.format("gemm"))
    pr.write_text(header + "softmax_v2,5e-4,2.5e7,2e8,1\n" + gemms.format("proj"))
    data = _json(capsys, str(base), "--against", str(pr), "--device", "A100-SXM4-80GB")
    rows = {k["key"]: k for k in data["kernels"]}
    assert rows["softmax_v2"]["renamed_from"] == "softmax" and "softmax" not in rows
    assert rows["softmax_v2"]["status"] == "slower"
    assert rows["softmax_v2"]["time_ratio"] == pytest.approx(1.25)
    assert {k: rows[k]["status"] for k in ("gemm_q", "proj_q")} == {
        "gemm_q": "missing",
        "proj_q": "new",
    }
    assert run(["compare", str(base), "--against", str(pr), "--device", "A100-SXM4-80GB"]) == 0
    text = capsys.readouterr().out
    assert "slower, likely renamed" in text
    assert "likely renamed (the same FLOPs and DRAM bytes): softmax → softmax_v2" in text


def test_half_the_suite_missing_reads_at_the_kernels_in_both(tmp_path, capsys) -> None:
    """The PR ran 10 of the base's 20 GEMMs: its GPU time halved, the kernels' did not."""
    header = "name,duration_s,flops_fp32,bytes_dram,launches\n"
    base, pr = tmp_path / "base.csv", tmp_path / "pr.csv"
    base.write_text(header + "".join(f"gemm_{i},1e-3,1e10,1e8,1\n" for i in range(20)))
    pr.write_text(header + "".join(f"gemm_{i},1e-3,1e10,1e8,1\n" for i in range(10)))
    assert run(["compare", str(base), "--against", str(pr), "--device", "H100-SXM5"]) == 0
    assert (
        "GPU time 20.0 → 10.0 ms (0.50×); 1.00× over the 10 kernels in both"
        in capsys.readouterr().out
    )


def test_a_kernel_whose_every_launch_failed_is_missing_not_unchanged(tmp_path, capsys) -> None:
    """Its replay failed in the PR's profile: it read "unchanged" beside a 0 s GPU time share."""
    header = "name,duration_s,flops_fp32,bytes_dram,launches\n"
    base, pr = tmp_path / "base.csv", tmp_path / "pr.csv"
    base.write_text(header + "gemm,1e-3,1e10,1e8,1\nnorm,2e-4,1e6,1e8,1\n")
    pr.write_text(header + "gemm,1e-3,1e10,1e8,1\nnorm,0,,,0\n")
    data = _json(capsys, str(base), "--against", str(pr), "--device", "H100-SXM5")
    assert {k["key"]: k["status"] for k in data["kernels"]} == {
        "gemm": "unchanged",
        "norm": "missing",
    }


def test_two_cards_are_read_against_what_their_roofs_predict(tmp_path, capsys) -> None:
    """An A100 night against an H100 one: every kernel read "faster" (0.61× is no news)."""
    a100, h100 = "A100-SXM4-80GB", "H100-SXM5"
    base, head = tmp_path / "a100.json", tmp_path / "h100.json"
    base.write_text(nights(a100, 1)[0].model_dump_json())
    head.write_text(nights(h100, 1, start=1)[0].model_dump_json())
    data = _json(capsys, str(base), "--against", str(head))
    by = {k["key"]: k for k in data["kernels"]}
    bandwidths = [datasheet(c).bandwidth_byte_per_s["dram"] for c in (a100, h100)]
    assert by["gemv"]["expected_time_ratio"] == pytest.approx(bandwidths[0] / bandwidths[1])
    assert (by["gemv"]["status"], by["gemm"]["status"]) == ("unchanged", "slower")  # 80% -> 50%
    assert run(["compare", str(base), "--against", str(head)]) == 0
    text = capsys.readouterr().out
    assert "(than the roofs predict, percent of roof beyond ±15%)" in text
    assert "roofs predict 0.32×)" in text  # the bf16 peaks: 312 / 989.4


@pytest.mark.parametrize("width", [None, 90, 120])
def test_the_table_fits_a_terminal_and_a_pipe_gets_one_line_a_kernel(corpus_dir, width):
    report = corpus_dir / "ncu-csv/wangzy0327_cuda-roofline__output_V100.csv"
    found = compare_files([report], [report], device=None, cfg=RoofguardConfig(), threshold=0.05)
    lines = runs_text(found, width).splitlines()
    table = lines[lines.index("") + 1 :]
    rows = [line for line in table if line.startswith(("Initialize", "cutlass"))]
    if width is None:
        assert len(rows) == 4 and all(row.endswith("unchanged") for row in rows)
    else:
        assert max(map(len, table)) <= width and len(rows) == 4
        assert sum(line.split()[-1:] == ["unchanged"] for line in table) == 4


def test_device_names_the_card_of_roofguard_json_that_names_none(tmp_path, capsys) -> None:
    """`--device` was read into the run but not into the roof's choice: "names no device"."""
    from factories import make_kernel, make_run

    report = tmp_path / "nodev.json"
    run_record = make_run(kernels=[make_kernel("gemv")], device="unknown")
    report.write_text(run_record.model_dump_json())
    found = _json(capsys, str(report), "--against", str(report), "--device", "H100-SXM5")
    assert found["base_roof"] == found["roof"] == "H100-SXM5 (datasheet)"


@pytest.mark.parametrize("threshold", ["nan", "inf"])
def test_a_threshold_that_is_no_number_is_refused(tmp_path, capsys, threshold: str) -> None:
    """nan was taken: every kernel at 1.00x read as faster (time beyond ±nan%)."""
    from factories import make_kernel, make_run

    report = tmp_path / "run.json"
    report.write_text(make_run(kernels=[make_kernel("gemv")]).model_dump_json())
    assert run(["compare", str(report), "--against", str(report), "--threshold", threshold]) == 2
    assert "--threshold: must be a number above 0" in capsys.readouterr().err


def test_rows_of_kernels_alike_in_name_are_told_apart(tmp_path, capsys) -> None:
    """Two CUTLASS tiles cut in the middle, and two kernels of one name, read the same."""
    from factories import make_kernel, make_run

    tile = "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_{}_32x3_nn_align8>"
    names = [tile.format("256x128"), tile.format("128x256")]
    kernels = [make_kernel(n, time_s=1e-3) for n in names]
    kernels += [make_kernel("softmax", key=f"softmax[n={n}]", time_s=1e-3) for n in (1024, 4096)]
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    base.write_text(make_run(kernels=kernels).model_dump_json())
    slower = [k.model_copy(update={"duration_s": 1.5e-3}) for k in kernels[::2]]
    head.write_text(make_run(kernels=[*slower, *kernels[1::2]]).model_dump_json())
    for fmt in ("text", "markdown"):
        assert run(["compare", str(base), "--against", str(head), "--format", fmt]) == 0
        out = capsys.readouterr().out
        lines = [line for line in out.splitlines() if "cutlass" in line or "softmax" in line]
        assert len(lines) == 4 and all("slower" in x or "unchanged" in x for x in lines), out
        assert any("256x128" in x for x in lines) and any("128x256" in x for x in lines), out
        assert any("softmax[n=1024]" in x for x in lines), out


def test_a_kernel_whose_replay_failed_is_not_measured_rather_than_missing(tmp_path, capsys):
    """Every launch of it failed in the PR's run: it read "5.00 ms → missing", no word why."""
    from factories import make_kernel, make_run

    flash = make_kernel("flash_fwd", time_s=5e-3)
    failed = flash.model_copy(update={"launches": 0, "failed_launches": 4, "duration_s": 0.0})
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    base.write_text(make_run(kernels=[flash, make_kernel("gemv")]).model_dump_json())
    head.write_text(make_run(kernels=[failed, make_kernel("gemv")]).model_dump_json())
    found = _json(capsys, str(base), "--against", str(head))
    (row,) = [k for k in found["kernels"] if k["key"] == "flash_fwd"]
    assert (row["status"], row["failed_on_other_side"]) == ("missing", True)
    assert run(["compare", str(base), "--against", str(head)]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "flash_fwd" in x]
    assert "→ not measured" in line and "not measured now" in line
    back = _json(capsys, str(head), "--against", str(base))
    assert [k["status"] for k in back["kernels"] if k["key"] == "flash_fwd"] == ["new"]
