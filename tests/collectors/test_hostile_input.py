"""Each hostile input issue 14 names, as its own test: one clear error naming file, entry, field."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from ncu_files import write_raw

import collectors
from collectors.errors import MalformedReport, UnknownFormat, UnsupportedEncoding

GBENCH = "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json"
PYTEST = "pytest-benchmark/benchmark-action_github-action-benchmark__pytest_output.json"
NVBENCH = "nvbench/NVIDIA_nvbench__examples_outputs_throughput.json"
KINETO = "other/xytpai_nvbench__test_kineto_trace.json"


def edited(corpus: Path, name: str, tmp: Path, edit: Any) -> Path:
    """A corpus JSON file with ``edit(root)`` applied, written as JSON text."""
    root = json.loads((corpus / name).read_text(encoding="utf-8"))
    text = edit(root)
    path = tmp / Path(name).name
    path.write_text(text if isinstance(text, str) else json.dumps(root), encoding="utf-8")
    return path


def malformed(path: Path, fmt: str | None = None) -> MalformedReport:
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path, fmt)
    assert info.value.path == str(path)
    return info.value


def test_pytest_benchmark_extra_info_as_a_list(corpus_dir: Path, tmp_path: Path) -> None:
    path = edited(corpus_dir, PYTEST, tmp_path, lambda r: r["benchmarks"][0].update(extra_info=[1]))
    error = malformed(path)
    assert (error.row, error.field) == (
        "benchmarks[0] (test_fib_10)",
        "extra_info",
    ), error
    assert "expected an object, got a list" in error.reason


def test_gbench_real_time_too_big_for_a_float(corpus_dir: Path, tmp_path: Path) -> None:
    def edit(root: Any) -> str:
        root["benchmarks"][1]["real_time"] = "<big>"
        return json.dumps(root).replace('"<big>"', "1e400")

    error = malformed(edited(corpus_dir, GBENCH, tmp_path, edit))
    assert (error.row, error.field) == ("benchmarks[1] (BM_2xFaster)", "real_time")
    assert "finite" in error.reason


@pytest.mark.parametrize("name", ["", "   "])
def test_an_empty_benchmark_name(corpus_dir: Path, tmp_path: Path, name: str) -> None:
    path = edited(corpus_dir, GBENCH, tmp_path, lambda r: r["benchmarks"][2].update(name=name))
    error = malformed(path)
    assert (error.row, error.field, error.reason) == ("benchmarks[2]", "name", "must not be empty")


def test_a_non_utf8_byte_in_an_ncu_csv(tmp_path: Path) -> None:
    metrics = [("gpu__time_duration.sum", "nsecond")]
    path = write_raw(tmp_path / "raw.csv", metrics, [(0, "k", ["1000"]), (1, "k", ["2000"])])
    data = path.read_bytes()
    at = data.rindex(b'"k"')  # the kernel name of the last launch
    path.write_bytes(data[:at] + b'"k\xff"' + data[at + 3 :])
    error = malformed(path)
    assert error.row == "5"  # the prelude line, header, units, launch 0, then launch 1
    assert "byte 0xff" in error.reason


def test_a_200000_deep_json_array(corpus_dir: Path, tmp_path: Path) -> None:
    def edit(root: Any) -> str:
        root["benchmarks"][0]["label"] = "<deep>"
        return json.dumps(root).replace('"<deep>"', "[" * 200_000 + "]" * 200_000)

    error = malformed(edited(corpus_dir, GBENCH, tmp_path, edit))
    assert "nested too deeply" in error.reason


def test_nvbench_device_ids_as_strings(corpus_dir: Path, tmp_path: Path) -> None:
    path = edited(corpus_dir, NVBENCH, tmp_path, lambda r: r["devices"][0].update(id="0"))
    error = malformed(path)
    assert (error.row, error.field) == ("devices[0]", "id")
    state_device = edited(
        corpus_dir,
        NVBENCH,
        tmp_path,
        lambda r: next(iter(r["benchmarks"][0]["states"].values())).update(device="0"),
    )
    assert malformed(state_device).field == "device"


@pytest.mark.parametrize("args", [[1, 2], "text", 7])
def test_kineto_args_that_are_not_objects(corpus_dir: Path, tmp_path: Path, args: Any) -> None:
    path = edited(corpus_dir, KINETO, tmp_path, lambda r: r["traceEvents"][0].update(args=args))
    error = malformed(path)
    assert (error.row, error.field) == ("traceEvents[0]", "args")


def test_unpaired_surrogates_in_names_are_replaced(corpus_dir: Path, tmp_path: Path) -> None:
    def edit(root: Any) -> str:
        root["benchmarks"][0]["name"] = "<s>"
        return json.dumps(root).replace('"<s>"', '"BM_\\ud800bad"')

    record = collectors.collect(edited(corpus_dir, GBENCH, tmp_path, edit))
    assert record.kernels[0].name == "BM_\ufffdbad"
    json.loads(record.model_dump_json())  # the record serialises
    paired = json.dumps("BM_\U0001f600")  # a proper pair, written as two escapes, is kept
    assert paired == '"BM_\\ud83d\\ude00"'

    def keep(root: Any) -> str:
        root["benchmarks"][0]["name"] = "<s>"
        return json.dumps(root).replace('"<s>"', paired)

    again = collectors.collect(edited(corpus_dir, GBENCH, tmp_path, keep))
    assert again.kernels[0].name == "BM_\U0001f600"


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"\xef\xbb\xbf", "UTF-8 text with a byte-order mark"),
        ("\ufeff".encode("utf-16-le"), "UTF-16 text"),
        (b"", "UTF-16LE text"),
    ],
)
def test_bom_and_utf16_files_get_an_encoding_error(
    corpus_dir: Path, tmp_path: Path, data: bytes, says: str
) -> None:
    text = (corpus_dir / GBENCH).read_text(encoding="utf-8")
    body = text.encode("utf-8") if data.startswith(b"\xef") else text.encode("utf-16-le")
    path = tmp_path / "report.json"
    path.write_bytes(data + body)
    with pytest.raises(UnsupportedEncoding) as info:
        collectors.collect(path)
    assert str(info.value).startswith(f"{path}: the file is {says}")
    assert "not a format" not in str(info.value)
    assert isinstance(info.value, UnknownFormat)  # still exit 2 / 422 where formats are


def test_a_nul_byte_in_a_name_names_its_entry(corpus_dir: Path, tmp_path: Path) -> None:
    path = edited(corpus_dir, GBENCH, tmp_path, lambda r: r["benchmarks"][2].update(name="B\0M"))
    error = malformed(path)
    assert (error.row, error.field) == ("benchmarks[2]", "name")
    assert error.reason == "contains a NUL byte"
    assert "\0" not in str(error)  # the message prints, the byte does not


@pytest.mark.parametrize("seconds", [0, 1e-300, 5e-324])
def test_zero_and_subnormal_durations(corpus_dir: Path, tmp_path: Path, seconds: float) -> None:
    def edit(root: Any) -> None:
        root["benchmarks"][3].update(real_time=seconds, time_unit="s")

    error = malformed(edited(corpus_dir, GBENCH, tmp_path, edit))
    assert (error.row, error.field) == ("benchmarks[3]", "real_time")
    assert "no timer measures" in error.reason


def test_a_pytest_benchmark_median_of_zero(corpus_dir: Path, tmp_path: Path) -> None:
    path = edited(
        corpus_dir, PYTEST, tmp_path, lambda r: r["benchmarks"][0]["stats"].update(median=0)
    )
    error = malformed(path)
    assert (error.row, error.field) == ("benchmarks[0] (test_fib_10)", "stats.median")


def test_a_zero_duration_kineto_event_is_an_untimed_launch(tmp_path: Path) -> None:
    events = [
        {"ph": "X", "cat": "kernel", "name": "k", "dur": dur, "args": {"device": 0}}
        for dur in (0, 4, 0)
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    (kernel,) = collectors.collect(path).kernels
    assert (kernel.launches, kernel.failed_launches, kernel.duration_s) == (1, 2, 4e-6)
    assert any("dur 0" in text for text in kernel.missing)


def test_a_value_the_record_refuses_names_the_entry(corpus_dir: Path, tmp_path: Path) -> None:
    def edit(root: Any) -> None:
        root["benchmarks"][1]["extra_info"] = {"flops_fp32": -5}

    error = malformed(edited(corpus_dir, PYTEST, tmp_path, edit))
    assert error.row is not None and error.row.startswith("benchmarks[1]")
    assert (error.field, error.reason) == ("extra_info.flops_fp32", "must not be negative (got -5)")


@pytest.mark.parametrize("suffix", [".ncu-rep", ".csv", ".json"])
def test_a_file_of_zero_bytes_is_said_to_be_all_zeros(tmp_path: Path, suffix: str) -> None:
    # It read as "UTF-16LE text" (a NUL in every other byte) and advised iconv.
    path = tmp_path / f"report{suffix}"
    path.write_bytes(b"\x00" * 200_000)
    with pytest.raises(UnknownFormat) as info:
        collectors.collect(path)
    assert str(info.value).endswith(
        "the file is all zero bytes (200,000): truncated or never written, not a report"
    )
    assert not isinstance(info.value, UnsupportedEncoding)


def test_figures_no_device_measures_are_refused(corpus_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    header = "# device: NVIDIA H100 80GB HBM3\nname,duration_s,flops_fp32,bytes_dram,launches\n"
    for row, field, words in (
        ("k,1e308,1e9,1e6,1", "duration_s", "longer than a day"),
        ("k,0.001,1e300,1e6,1", "flops.fp32", "no device comes near 1e+18 FLOP/s"),
        ("k,0.001,1e9,1e300,1", "bytes.dram", "no device comes near 1e+16 B/s"),
    ):
        path.write_text(header + row + "\n", encoding="utf-8")
        with pytest.raises(MalformedReport) as info:
            collectors.collect(path)
        assert (info.value.row, info.value.field) == ("3", field) and words in str(info.value)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_pipe_or_a_device_is_refused_without_reading_it(tmp_path: Path, kind: str) -> None:
    """``<(cat report.csv)`` read as empty the second time; ``/dev/zero`` never returned."""
    if kind == "fifo":
        path = tmp_path / "report.csv"
        os.mkfifo(path)  # no writer: opening it would block, so it must not be opened
    else:
        path = Path("/dev/zero")
    with pytest.raises(UnknownFormat, match="not a regular file \\(a pipe or a device\\)"):
        collectors.collect(path)
