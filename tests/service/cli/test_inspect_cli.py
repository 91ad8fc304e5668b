"""``roofguard inspect``: every format, work models from config, roofs, bad input (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from collectors import collect
from collectors.schema import RunRecord
from service.cli import run
from service.cli.inspect_cmd import shorten, si
from service.config.workmodels import load_work_models
from service.errors import ConfigError
from tests.factories import make_kernel, make_run

ROOT = Path(__file__).resolve().parents[3]
GEMM = Path("tests/collectors/data/micro/gbench_gemm_gpu.json")
GOLDEN = Path(__file__).parents[1] / "golden"
WORK_MODELS = """
[[work_models]]
pattern = "BM_gemm*"
flops = { tensor_bf16 = "2*arg0*arg1*arg2" }
bytes = { dram = "2*(arg0*arg2 + arg2*arg1 + arg0*arg1)" }

[[work_models]]
pattern = "BM_rmsnorm*"
flops = { fp32 = "4*M*N" }
"""


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "roofguard.toml"
    path.write_text(WORK_MODELS, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # relative paths in the output, so goldens do not depend on the box


def test_entry_point_places_declared_gemm_on_the_datasheet_roof(config):
    proc = subprocess.run(
        [sys.executable, "-m", "service", "inspect", str(GEMM), "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "roof: H100-SXM5 (datasheet)" in proc.stdout
    gemm_row = next(line for line in proc.stdout.splitlines() if line.startswith("BM_gemm"))
    assert "tensor_bf16 137.4G" in gemm_row and "compute-bound" in gemm_row
    assert "* declared work model" in proc.stdout


def test_human_report_is_golden(config, capsys, golden):
    assert run(["inspect", str(GEMM), "--config", str(config)]) == 0
    golden(GOLDEN / "inspect_gbench_gemm.txt", capsys.readouterr().out)


def test_json_of_one_file_is_exactly_the_run_record(capsys):
    assert run(["inspect", str(GEMM), "--json"]) == 0
    assert RunRecord.model_validate_json(capsys.readouterr().out) == collect(GEMM)


def test_json_of_several_files_is_a_list_in_order(corpus_dir, capsys):
    trace = corpus_dir / "other/xytpai_nvbench__test_kineto_trace.json"
    assert run(["inspect", str(GEMM), str(trace), "--json"]) == 0
    records = [RunRecord.model_validate(r) for r in json.loads(capsys.readouterr().out)]
    assert [r.profiler.tool for r in records] == ["gbench", "kineto"]
    long_name = next(k.name for k in records[1].kernels if "cutlass" in k.name)
    assert len(long_name) > 44  # full names in JSON, shortened in the table only


@pytest.mark.parametrize(
    "name",
    [
        "nvbench/NVIDIA_nvbench__python_scripts_test_ref.json",
        "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.csv",
        "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.md",
        "gbench/donar337_numa-pmr__bench.json",
        "pytest-benchmark/benchmark-action_github-action-benchmark__pytest_output.json",
        "other/xytpai_nvbench__test_kineto_trace.json",
    ],
)
def test_reads_every_micro_format(name, corpus_dir, capsys):
    assert run(["inspect", str(corpus_dir / name)]) == 0
    out = capsys.readouterr().out
    record = collect(corpus_dir / name)
    rows = [line for line in out.splitlines() if line.split(" ")[0] and "kernel(s)" not in line]
    assert f"{len(record.kernels)} kernel(s)" in out
    assert len(rows) >= len(record.kernels)


def test_roofs_datasheet_report_and_unplaced(corpus_dir, capsys):
    md = corpus_dir / "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.md"
    assert run(["inspect", str(md)]) == 0
    out = capsys.readouterr().out
    assert "roof: NVIDIA GeForce RTX 2060 (report)" in out
    assert "'NVIDIA GeForce RTX 2060' is not in the hardware catalog" in out  # the note says so
    # The device a report names wins: --device naming another card is an error, as in check.
    assert run(["inspect", str(md), "--device", "T4"]) == 2
    err = capsys.readouterr().err
    assert "names device 'NVIDIA GeForce RTX 2060', but --device gives 'T4'" in err
    old = corpus_dir / "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json"
    assert run(["inspect", str(old)]) == 0
    out = capsys.readouterr().out
    last_kernel = next(line for line in out.splitlines() if line.startswith("BM_hasLabel"))
    assert "roof: unplaced" in out and "unplaced" in last_kernel
    assert run(["inspect", str(old), "--device", "T4"]) == 0  # it names none: --device does
    assert "roof: T4 (datasheet)" in capsys.readouterr().out


def test_long_names_are_shortened_in_the_table(corpus_dir, capsys):
    assert run(["inspect", str(corpus_dir / "other/xytpai_nvbench__test_kineto_trace.json")]) == 0
    out = capsys.readouterr().out
    assert "cutlass::Kernel<cutla…256x128_8x4_nn_align1>" in out
    assert shorten("x" * 10) == "x" * 10 and len(shorten("y" * 500)) == 44


def _error(argv, capsys):
    code = run(argv)
    return code, capsys.readouterr().err


def test_bad_report_is_exit_2_naming_file_entry_field(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "context": {"library_build_type": "r"},
                "benchmarks": [{"name": "BM_x", "real_time": -1, "cpu_time": 1, "time_unit": "ns"}],
            }
        )
    )
    code, err = _error(["inspect", str(bad)], capsys)
    assert code == 2
    assert f"{bad}, row benchmarks[0] (BM_x), field 'real_time': must not be negative" in err


def test_empty_file_is_exit_2(tmp_path, capsys):
    empty = tmp_path / "empty.json"
    empty.write_text("")
    code, err = _error(["inspect", str(empty)], capsys)
    assert code == 2 and "the file is empty" in err and str(empty) in err


def test_unknown_device_is_exit_2(capsys):
    code, err = _error(["inspect", str(GEMM), "--device", "Z9000"], capsys)
    assert code == 2 and "unknown device 'Z9000'" in err


def test_expression_with_unknown_parameter_is_exit_2(tmp_path, capsys):
    cfg = tmp_path / "roofguard.toml"
    cfg.write_text('[[work_models]]\npattern = "BM_gemm*"\nflops = { fp32 = "2*M*N*K" }\n')
    code, err = _error(["inspect", str(GEMM), "--config", str(cfg)], capsys)
    assert code == 2
    assert (
        f"{cfg}, row BM_gemm[arg0=4096,arg1=4096,arg2=4096], field 'work_models[0].flops.fp32'"
        in err
    )
    assert "unknown parameter 'K'" in err


@pytest.mark.parametrize("where", ["roofguard.toml", "pyproject.toml"])
def test_a_config_found_here_is_named_in_an_expressions_error(tmp_path, capsys, monkeypatch, where):
    """Found in the working directory, not given, it was named 'roofguard config'."""
    table = "tool.roofguard.work_models" if where == "pyproject.toml" else "work_models"
    text = f'[[{table}]]\npattern = "BM_gemm*"\nflops = {{ fp32 = "2*M*N*K" }}\n'
    (tmp_path / where).write_text(text)
    report = GEMM.resolve()
    monkeypatch.chdir(tmp_path)
    code, err = _error(["inspect", str(report)], capsys)
    table = " [tool.roofguard]" if where == "pyproject.toml" else ""
    assert code == 2 and f"{tmp_path / where}{table}, row BM_gemm" in err


def test_config_errors_name_file_and_key(tmp_path, capsys):
    cfg = tmp_path / "roofguard.toml"
    cfg.write_text('[[work_models]]\npattern = "x"\nbytes = { dram = "().__class__" }\n')
    code, err = _error(["inspect", str(GEMM), "--config", str(cfg)], capsys)
    assert code == 2
    assert f"{cfg}: work_models[0].bytes.dram: expression '().__class__'" in err


def test_loader_reads_pyproject_tool_table(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\n\n[[tool.roofguard.work_models]]\n'
        'pattern = "BM_*"\nflops = { tensor_bf16 = "2*M*N*K" }\n'
    )
    (model,) = load_work_models(pyproject)
    assert model.flops == {"tensor_bf16": "2*M*N*K"}
    assert load_work_models(tmp_path / "pyproject.toml") == [model]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("work_models = 3\n", "work_models"),
        ("[[work_models]]\nflops = {}\n", "work_models[0].pattern"),
        ('[[work_models]]\npattern = "x"\nflops = { fp33 = "1" }\n', "work_models[0].flops.fp33"),
        ('[[work_models]]\npattern = "x"\ncolour = "red"\n', "work_models[0].colour"),
        ("[[work_models]\n", "config"),  # not TOML: the file, not a key, is wrong
    ],
)
def test_loader_errors_name_the_key(tmp_path, text, key):
    """The work-model loader is the config loader: the same keys, the same errors."""
    cfg = tmp_path / "roofguard.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_work_models(cfg)
    assert err.value.key == key and err.value.path == str(cfg)


def test_inspect_validates_the_config_as_check_does(tmp_path, capsys, corpus_dir):
    """A top-level typo was ignored by inspect and caught by check: one loader now."""
    cfg = tmp_path / "roofguard.toml"
    cfg.write_text('devce = "A10G"\n')
    report = str(corpus_dir / "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json")
    for argv in (["inspect", report], ["check", report, "--repo", "o/r", "--commit", "c"]):
        code, err = _error([*argv, "--config", str(cfg)], capsys)
        assert code == 2 and f"{cfg}: devce: unknown key" in err
    code, err = _error(["inspect", report, "--config", str(tmp_path / "missing.toml")], capsys)
    assert code == 2 and f"{tmp_path / 'missing.toml'}: config file: does not exist" in err


def test_inspect_finds_the_config_in_the_working_directory(
    tmp_path, capsys, corpus_dir, monkeypatch
):
    (tmp_path / "roofguard.toml").write_text('device = "A10G"\n')
    monkeypatch.chdir(tmp_path)
    report = corpus_dir / "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json"
    assert run(["inspect", str(report)]) == 0
    assert "roof: A10G (datasheet)" in capsys.readouterr().out


def test_table_hides_zero_precisions_says_why_unplaced_and_flags_above_roof(tmp_path, capsys):
    kernels = [
        # 1 GFLOP fp32 and zero fp16: only fp32 is shown.
        make_kernel("gemm_fp32", flops={"fp32": 1e9, "fp16": 0.0}, dram_bytes=1e6, time_s=1e-3),
        # Memory-bound on L2 (40 GB at 12 TB/s > 4 MB of DRAM): the intensity shown is L2's.
        make_kernel("l2_bound", flops={"fp32": 1e6}, dram_bytes=4e6, l2_bytes=4e10, time_s=5e-3),
        # 1 GB of DRAM in 0.1 ms is 10 TB/s: above the 3.35 TB/s roof.
        make_kernel("too_fast", flops={"fp32": 1e6}, dram_bytes=1e9, time_s=1e-4),
        make_kernel("no_flops", flops={}, dram_bytes=None, time_s=1e-3),
    ]
    report = tmp_path / "run.json"
    report.write_text(make_run(kernels=kernels).model_dump_json(), encoding="utf-8")
    assert run(["inspect", str(report), "--device", "H100-SXM5"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line}
    assert "fp32 1G" in rows["gemm_fp32"] and "fp16" not in rows["gemm_fp32"]
    assert "(l2)" in rows["l2_bound"] and "memory-bound" in rows["l2_bound"]
    assert "above roof!" in rows["too_fast"]
    assert "unplaced: FLOP counts (no FLOP counters or declared work)" in rows["no_flops"]


def test_counts_past_tera_keep_their_prefix() -> None:
    """1e18 FLOPs printed ``1e+06T``, 1e15 bytes ``1000T``."""
    assert (si(1e18), si(1e15), si(2.5e12), si(999.0)) == ("1E", "1P", "2.5T", "999")
