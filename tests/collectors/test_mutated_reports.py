"""Reports mutated past each reader's limits: one bad-input error naming file, place and fault.

Issue 31's four (5,000-digit integers, integers beyond a float, fields over the csv limit, a
cut markdown table) in every format they reached, and the places with the same weakness.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mutated import BEYOND_FLOAT, CASES, DIGITS, LONG_CELL
from ncu_files import write_raw

import collectors
from collectors.errors import MalformedReport

DATA = Path(__file__).parent / "data"
KINETO = "other/xytpai_nvbench__test_kineto_trace.json"
PYTEST = "pytest-benchmark/benchmark-action_github-action-benchmark__pytest_output.json"
NVBENCH_2021 = DATA / "micro/nvbench_2021_03.json"
NVBENCH_NEW = "nvbench/NVIDIA_nvbench__examples_outputs_throughput.json"
NVBENCH_MD = "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.md"


def malformed(path: Path, fmt: str | None = None) -> MalformedReport:
    """The error reading ``path``: it names the file and is one line a person can read."""
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path, fmt)
    error = info.value
    assert error.path == str(path) and str(error).startswith(f"{path}, ")
    assert "\n" not in str(error) and len(str(error)) < len(str(path)) + 300, str(error)
    return error


def substituted(source: Path, pattern: str, new: str, out: Path) -> Path:
    """``source`` with the first match of ``pattern``'s group 1 replaced by ``new``."""
    text = source.read_text(encoding="utf-8")
    match = re.search(pattern, text)
    assert match, f"{source.name} has no {pattern!r}"
    out.write_text(text[: match.start(1)] + new + text[match.end(1) :], encoding="utf-8")
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_mutation_of_issue_31_names_where_and_what(
    case: str, corpus_dir: Path, tmp_path: Path
) -> None:
    write, row, field, words = CASES[case]
    error = malformed(write(corpus_dir, tmp_path))
    assert (error.row, error.field) == (row, field)
    assert words in error.reason


@pytest.mark.parametrize(
    ("source", "pattern", "row", "field"),
    [
        (KINETO, r'"dur": (\d+)', "traceEvents[0]", "dur"),
        (PYTEST, r'"rounds": (\d+)', "benchmarks[0].stats", "rounds"),
        (  # deep in the 2021-03 schema's summaries
            NVBENCH_2021,
            r'"Cold Trials"\},\s*\{[^}]*"value": (\d+)',
            "benchmarks[0].states[0].summaries[0].values[1]",
            "value",
        ),
        ("gbench/donar337_numa-pmr__bench.json", r'"num_cpus": (\d+)', "context", "num_cpus"),
    ],
)
def test_a_5000_digit_integer_names_its_json_path(
    source: str | Path, pattern: str, row: str, field: str, corpus_dir: Path, tmp_path: Path
) -> None:
    path = substituted(corpus_dir / source, pattern, DIGITS, tmp_path / "digits.json")
    error = malformed(path)
    assert (error.row, error.field) == (row, field)
    assert error.reason.startswith("an integer of 5,000 digits")


def test_a_long_integer_before_broken_json_is_the_json_error(tmp_path: Path) -> None:
    path = tmp_path / "both.json"
    path.write_text('{"benchmarks": [' + DIGITS + ', "\x01"]}', encoding="utf-8")
    error = malformed(path, "gbench-json")
    assert error.row.startswith("line 1, column ") and "not valid JSON" in error.reason


def test_an_nvbench_summary_beyond_a_float_names_the_state(tmp_path: Path) -> None:
    pattern = r'"Cold Trials"\},\s*\{[^}]*"value": (\d+)'
    path = substituted(NVBENCH_2021, pattern, BEYOND_FLOAT, tmp_path / "huge.json")
    error = malformed(path)
    assert (error.row, error.field) == ("copy [Device=0 Elements=2^20]", "Cold Trials")
    assert error.reason.startswith("an integer of 401 digits, too large for a number")


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("sm_version", '"abc"', "not a number: 'abc'"),
        ("sm_version", "[7]", "not a number: [7]"),
        ("sm_version", "1e300", "not an SM version"),
        ("sm_version", "true", "not a number: True"),
        ("global_memory_bus_bandwidth", BEYOND_FLOAT, "an integer of 401 digits"),
        ("sm_default_clock_rate", "-5", "must not be negative"),
    ],
)
def test_an_nvbench_device_figure_that_is_no_number(
    key: str, value: str, words: str, corpus_dir: Path, tmp_path: Path
) -> None:
    pattern = rf'"{key}": ([^,\n]+)'
    path = substituted(corpus_dir / NVBENCH_NEW, pattern, value, tmp_path / "device.json")
    error = malformed(path)
    assert (error.row, error.field) == ("device 0", key)
    assert words in error.reason


def test_a_roofguard_csv_field_over_the_limit_names_its_file_line(tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    body = f"# device: H100\n\n# commit: abc\nname,duration_s\nk1,0.001\n{LONG_CELL},0.002\n"
    path.write_text(body, encoding="utf-8")
    error = malformed(path)
    assert (error.row, error.field) == ("6", None)
    assert error.reason.startswith("a field longer than 131,072 characters")


def test_an_ncu_raw_metric_beyond_a_float_names_its_cell(tmp_path: Path) -> None:
    # the last column is read as text by the fast path: pandas made it a Python int
    metrics = [("gpu__time_duration.sum", "nsecond"), ("dram__bytes.sum", "byte")]
    rows = [(0, "k", ["1000", "64"]), (1, "k", ["1000", BEYOND_FLOAT])]
    error = malformed(write_raw(tmp_path / "raw.csv", metrics, rows))
    assert error.row is not None and error.row.endswith("(launch ID 1)")
    assert error.field == "dram__bytes.sum" and "finite" in error.reason


def _md_without_log(corpus: Path) -> str:
    text = (corpus / NVBENCH_MD).read_text(encoding="utf-8")
    return re.sub(r"(?ms)^# Log$.*?(?=^# Benchmark Results$)", "", text)


def test_a_markdown_row_cut_in_its_last_cell_is_refused(corpus_dir: Path, tmp_path: Path) -> None:
    text = _md_without_log(corpus_dir)
    end = text.index("|\n", text.index("|     2^1 = 2 |"))  # the first row, cut before its "|"
    path = tmp_path / "cut.md"
    path.write_text(text[: end - 4], encoding="utf-8")
    error = malformed(path)
    assert (error.row, error.field) == ("24", None)
    assert "lacks the closing '|'" in error.reason


def test_a_markdown_device_index_of_5000_digits(corpus_dir: Path, tmp_path: Path) -> None:
    text = (corpus_dir / NVBENCH_MD).read_text(encoding="utf-8")
    path = tmp_path / "index.md"
    path.write_text(text.replace("### [0]", f"### [{DIGITS}]", 1), encoding="utf-8")
    error = malformed(path)
    assert error.row is not None and "device index of 5,000 digits" in error.reason


def test_a_long_markdown_cell_is_quoted_cut(corpus_dir: Path, tmp_path: Path) -> None:
    text = _md_without_log(corpus_dir)
    path = tmp_path / "long.md"
    path.write_text(text.replace("68116x", LONG_CELL, 1), encoding="utf-8")
    error = malformed(path)
    assert (error.row, error.field) == ("24", "Samples")
    assert error.reason.endswith("... (140,000 characters)")


@pytest.mark.parametrize("power", ["2^1024", "2^99999999999"])
def test_a_power_of_two_axis_past_a_float_stays_text(
    power: str, corpus_dir: Path, tmp_path: Path
) -> None:
    # the exponent is bounded before use: 2 ** 99999999999 would take the worker's memory
    source = corpus_dir / "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.csv"
    text = source.read_text(encoding="utf-8")
    path = tmp_path / "pow.csv"
    path.write_text(text.replace(",2^1,2,", f",2^1,{power},", 1), encoding="utf-8")
    record = collectors.collect(path)
    assert record.kernels[0].params["Axis Size"] == power


def test_a_count_past_the_stores_integers_names_its_kernel(
    corpus_dir: Path, tmp_path: Path
) -> None:
    # the database refused it at ingest (a traceback); the record refuses it by name
    run = collectors.collect(corpus_dir / "gbench/donar337_numa-pmr__bench.json")
    path = tmp_path / "run.json"
    text = run.model_dump_json(indent=1).replace('"launches": 1', f'"launches": {10**30}', 1)
    path.write_text(text, encoding="utf-8")
    error = malformed(path)
    assert (error.row, error.field) == ("kernels[0]", "launches")
    assert "less than or equal to 2147483647" in error.reason
