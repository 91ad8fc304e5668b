"""Bad input: one clear error naming the file, the row (or launch ID) and the field."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest
from ncu_files import DETAILS, write_details, write_raw

import collectors
from collectors.errors import MalformedReport, MissingExtra, UnknownFormat

METRICS = [("gpu__time_duration.sum", "nsecond"), ("dram__bytes.sum", "byte")]
NCU_FORMATS = ["ncu-csv-raw", "ncu-csv-details", "ncu-rep", "ncu-text"]


def good_raw(path: Path) -> Path:
    return write_raw(path, METRICS, [(0, "k", ["1000", "64"]), (1, "k", ["2000", "128"])])


def raises(path: Path, fmt: str | None = None) -> MalformedReport:
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path, fmt)
    assert str(path) in str(info.value)
    return info.value


@pytest.mark.parametrize("fmt", NCU_FORMATS)
def test_empty_file(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    with pytest.raises(UnknownFormat, match="empty"):
        collectors.collect(path)
    error = raises(path, fmt)
    assert error.row is None


def test_truncated_raw_page(tmp_path: Path) -> None:
    path = good_raw(tmp_path / "raw.csv")
    text = path.read_text()
    path.write_text(text[: text.rindex(",")])  # cut inside the last launch row
    error = raises(path)
    assert error.row == "5 (launch ID 1)"
    assert "truncated" in error.reason


def test_truncated_details_page(tmp_path: Path) -> None:
    path = write_details(
        tmp_path / "d.csv", [(0, "k", "S", "gpu__time_duration.sum", "nsecond", "5")] * 2
    )
    text = path.read_text()
    path.write_text(text[: text.rindex('"S"')])
    error = raises(path)
    assert error.row == "3 (launch ID 0)"
    assert "truncated" in error.reason


def test_short_details_row_in_the_middle(tmp_path: Path) -> None:
    row = (0, "k", "S", "gpu__time_duration.sum", "nsecond", "5")
    path = write_details(tmp_path / "d.csv", [row] * 3)
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2][: lines[2].rindex(",")] + "\n"
    path.write_text("".join(lines))
    error = raises(path)
    assert error.row == "3 (launch ID 0)"
    assert "fields" in error.reason and "truncated" not in error.reason


def test_binary_garbage(tmp_path: Path) -> None:
    path = tmp_path / "garbage.bin"
    path.write_bytes(os.urandom(4096).replace(b"NVR", b"xxx"))
    with pytest.raises(UnknownFormat):
        collectors.collect(path)
    for fmt in ("ncu-csv-raw", "ncu-csv-details", "ncu-rep"):
        raises(path, fmt)


def test_garbage_behind_the_report_magic(tmp_path: Path) -> None:
    pytest.importorskip("ncu_report")
    path = tmp_path / "x.ncu-rep"
    path.write_bytes(b"NVR\x00" + os.urandom(2048))
    error = raises(path)
    assert "no range" in error.reason


def test_truncated_report(tmp_path: Path, corpus_dir: Path) -> None:
    pytest.importorskip("ncu_report")
    data = (corpus_dir / "ncu-rep/flyinglandlord_sglang__profile.ncu-rep").read_bytes()
    for fraction in (0.1, 0.5, 0.9):
        path = tmp_path / f"cut{fraction}.ncu-rep"
        path.write_bytes(data[: int(len(data) * fraction)])
        error = raises(path)
        assert "truncated" in error.reason


@pytest.mark.parametrize("column", ["Metric Unit", "Metric Value", "Metric Name"])
def test_wrong_header(tmp_path: Path, column: str) -> None:
    """A details page with one column renamed ("Metric Value" read as a raw page before)."""
    path = tmp_path / "d.csv"
    write_details(
        path,
        [(0, "k", "S", "gpu__time_duration.sum", "nsecond", "5")],
        header=[h if h != column else "Renamed" for h in DETAILS],
    )
    error = raises(path)
    assert (error.row, error.field) == ("1", column)
    assert error.reason == f"the details-page header lacks {column!r}"
    other = tmp_path / "other.csv"
    other.write_text('"ID","Process ID","Name"\n"0","1","x"\n')
    with pytest.raises(UnknownFormat):
        collectors.collect(other)
    assert raises(other, "ncu-csv-raw").field == "Kernel Name"


@pytest.mark.parametrize(
    ("cell", "why"), [("12abc", "not a number"), ("-64", "non-negative"), ("inf", "finite")]
)
def test_bad_cell_in_raw_page(tmp_path: Path, cell: str, why: str) -> None:
    path = write_raw(
        tmp_path / "raw.csv", METRICS, [(0, "k", ["1000", "64"]), (1, "k", ["2000", cell])]
    )
    error = raises(path)
    assert (error.row, error.field) == ("5 (launch ID 1)", "dram__bytes.sum")
    assert why in error.reason


def test_bad_cell_in_details_page(tmp_path: Path) -> None:
    path = write_details(
        tmp_path / "d.csv",
        [
            (0, "k", "GPU Speed Of Light Throughput", "Duration", "nsecond", "5"),
            (1, "k", "GPU Speed Of Light Throughput", "Duration", "nsecond", "five"),
        ],
    )
    error = raises(path)
    assert (error.row, error.field) == ("3 (launch ID 1)", "Duration")


def test_unknown_unit(tmp_path: Path) -> None:
    path = write_raw(tmp_path / "raw.csv", [("dram__bytes.sum", "furlong")], [(0, "k", ["1"])])
    error = raises(path)
    assert (error.row, error.field) == ("3", "dram__bytes.sum")
    assert "furlong" in error.reason
    details = write_details(tmp_path / "d.csv", [(0, "k", "S", "Duration", "fortnight", "1")])
    error = raises(details)
    assert (error.row, error.field) == ("2 (launch ID 0)", "Duration")


LASHI = "ncu-csv/Lashi0812_CudaProgramming__ncu_reduceInteger.csv"


def damaged(corpus_dir: Path, tmp_path: Path, cells: str, new: str) -> Path:
    """The corpus's ``LASHI`` (layout C, launch 0 on lines 4-22) with ``cells`` made ``new``."""
    text = (corpus_dir / LASHI).read_text()
    assert text.count(cells) == 1
    path = tmp_path / "damaged.csv"
    path.write_text(text.replace(cells, new))
    return path


@pytest.mark.parametrize(
    ("metric", "unit", "value", "line", "dimension"),
    [
        ("gpu__time_duration.sum", "cycle", "814.048", 7, "time"),
        ("dram__bytes.sum", "usecond", "104040.704", 5, "byte"),
        ("dram__bytes_read.sum.per_second", "Gbyte", "82.44522190338", 6, "byte rate"),
    ],
)
def test_a_unit_of_another_dimension_is_refused(
    corpus_dir: Path,
    tmp_path: Path,
    metric: str,
    unit: str,
    value: str,
    line: int,
    dimension: str,
) -> None:
    """A duration in cycles was read as 814 s; bytes in a time unit were scaled as time."""
    old = {5: '"byte","104040704"', 6: '"byte/second","82445221903.38"', 7: '"nsecond","814048"'}
    path = damaged(
        corpus_dir, tmp_path, f'"{metric}",{old[line]}', f'"{metric}","{unit}","{value}"'
    )
    error = raises(path)
    assert str(error) == (
        f"{path}, row {line} (launch ID 0), field '{metric}': unit '{unit}' is not a "
        f"{dimension} unit"
    )


@pytest.mark.parametrize(
    ("metric", "unit", "dimension"),
    [
        ("gpu__time_duration.sum", "cycle", "time"),
        ("gpu__time_duration.sum", "", "time"),
        ("dram__bytes.sum", "nsecond", "byte"),
        ("sm__cycles_elapsed.avg.per_second", "byte/second", "frequency"),
        ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "Kbyte", "count"),
    ],
)
def test_a_unit_of_another_dimension_in_the_units_row(
    tmp_path: Path, metric: str, unit: str, dimension: str
) -> None:
    metrics = [*METRICS, (metric, unit)] if metric not in dict(METRICS) else [(metric, unit)]
    path = write_raw(tmp_path / "raw.csv", metrics, [(0, "k", ["1000"] * len(metrics))])
    error = raises(path)
    assert (error.row, error.field) == ("3", metric)
    assert error.reason == f"unit {unit!r} is not a {dimension} unit"


def test_duplicate_launch_ids(tmp_path: Path) -> None:
    raw = write_raw(tmp_path / "raw.csv", METRICS, [(0, "k", ["1", "2"]), (0, "k", ["1", "2"])])
    error = raises(raw)
    assert (error.row, error.field) == ("5 (launch ID 0)", "ID")
    assert ", row 5 (launch ID 0), field 'ID': duplicate launch ID" in str(error)
    details = write_details(
        tmp_path / "d.csv",
        [
            (0, "k", "S", "Duration", "nsecond", "1"),
            (1, "k", "S", "Duration", "nsecond", "1"),
            (0, "k", "S", "Duration", "nsecond", "1"),
        ],
    )
    assert raises(details).row == "4 (launch ID 0)"


SECTION = "Command line profiler metrics"


def lashi_lines(corpus_dir: Path) -> list[str]:
    """The corpus's ``LASHI`` by line (``lines[n - 1]`` is line n): launch 0 on lines 4-22."""
    lines = (corpus_dir / LASHI).read_text().splitlines(keepends=True)
    assert lines[3].startswith('"0",') and lines[22].startswith('"1",')
    assert lines[6].endswith('"gpu__time_duration.sum","nsecond","814048"\n')
    return lines


def test_a_metric_row_printed_twice_is_refused(tmp_path: Path, corpus_dir: Path) -> None:
    """Accepted before, the later value silently winning: 900 us for a launch of 814 us."""
    lines = lashi_lines(corpus_dir)
    path = tmp_path / "twice.csv"
    path.write_text("".join([*lines[:7], lines[6], *lines[7:]]))
    assert str(raises(path)) == (
        f"{path}, row 8 (launch ID 0), field 'gpu__time_duration.sum': printed twice in "
        f"section {SECTION!r} of one launch (first at line 7): a repeated row or launch"
    )
    path.write_text("".join([*lines[:7], lines[6].replace("814048", "900000"), *lines[7:]]))
    assert str(raises(path)) == (
        f"{path}, row 8 (launch ID 0), field 'gpu__time_duration.sum': printed twice in "
        f"section {SECTION!r} of one launch with two values ('814048' at line 7, '900000' here)"
    )


def test_a_launch_printed_twice_is_refused(tmp_path: Path, corpus_dir: Path) -> None:
    """Its rows again right after it (read as one launch) or at the end of the file."""
    lines = lashi_lines(corpus_dir)
    path = tmp_path / "twice.csv"
    path.write_text("".join([*lines[:22], *lines[3:22], *lines[22:]]))
    assert str(raises(path)) == (
        f"{path}, row 23 (launch ID 0), field 'branch_inst_executed': printed twice in "
        f"section {SECTION!r} of one launch (first at line 4): a repeated row or launch"
    )
    path.write_text("".join([*lines, *lines[3:22]]))
    assert str(raises(path)) == (
        f"{path}, row {len(lines) + 1} (launch ID 0), field 'ID': duplicate launch ID"
    )


def test_one_metric_under_two_sections_must_agree(tmp_path: Path, corpus_dir: Path) -> None:
    """Two sections may show one metric (read once); with two values either could be right."""
    lines = lashi_lines(corpus_dir)
    sol = '"GPU Speed Of Light Throughput","Duration","usecond"'
    path = tmp_path / "two.csv"
    again = lines[6].replace(f'"{SECTION}","gpu__time_duration.sum","nsecond"', sol)
    path.write_text("".join([*lines[:7], again.replace("814048", "814.048"), *lines[7:]]))
    assert collectors.collect(path).kernels[0].duration_s == pytest.approx(814.048e-6)
    path.write_text("".join([*lines[:7], again.replace("814048", "900"), *lines[7:]]))
    assert str(raises(path)) == (
        f"{path}, row 8 (launch ID 0), field 'Duration': another section gives "
        "gpu__time_duration.sum another value (0.000814048 at line 7)"
    )


def test_a_metric_column_named_twice_is_refused(tmp_path: Path) -> None:
    """The later column's value won in silence on the careful reader."""
    metrics = [*METRICS, ("dram__bytes.sum", "byte")]
    path = write_raw(tmp_path / "raw.csv", metrics, [(0, "k", ["1000", "64", "128"])])
    assert str(raises(path)) == (
        f"{path}, row 2, field 'dram__bytes.sum': the header names this metric twice "
        "(columns 13 and 14)"
    )


def test_a_launch_refused_after_reading_is_named_by_its_id(tmp_path: Path) -> None:
    """Refused as it is read (a launch of 0 s), it is named by its line and its ID."""
    path = write_raw(
        tmp_path / "raw.csv", METRICS, [(0, "a", ["1000", "64"]), (4, "b", ["0", "64"])]
    )
    error = raises(path)
    assert (error.row, error.field) == ("5 (launch ID 4)", "gpu__time_duration.sum")


def test_mixed_devices(tmp_path: Path) -> None:
    path = write_raw(
        tmp_path / "raw.csv",
        METRICS,
        [(0, "k", ["1", "2"]), (1, "k", ["1", "2"])],
        cc=["8.0", "9.0"],
    )
    error = raises(path)
    assert (error.row, error.field) == ("5 (launch ID 1)", "Device")
    assert "mixed devices" in error.reason


def test_ncu_errors_without_header(tmp_path: Path) -> None:
    path = tmp_path / "failed.csv"
    path.write_text(
        "==PROF== Connected to process 1 (/app)\n==WARNING== No kernels were profiled.\n"
    )
    error = raises(path)
    assert "no kernels" in error.reason


def test_missing_ncu_report_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # makes ``import ncu_report`` fail
    path = tmp_path / "x.ncu-rep"
    path.write_bytes(b"NVR\x00" + b"\x00" * 64)
    with pytest.raises(MissingExtra) as info:
        collectors.collect(path)
    assert "roofguard[ncu]" in str(info.value)
    assert info.value.module == "ncu_report"


def test_short_row_in_the_middle(tmp_path: Path) -> None:
    path = good_raw(tmp_path / "raw.csv")
    lines = path.read_text().splitlines(keepends=True)
    lines[3] = lines[3][: lines[3].rindex(",")] + "\n"  # launch 0 loses its last cell
    path.write_text("".join(lines))
    error = raises(path)
    assert error.row == "4 (launch ID 0)"
    assert "fields" in error.reason
    assert "truncated" not in error.reason  # rows follow it: not a cut file


def _three_launches(tmp_path: Path, kernel: str = "k") -> Path:
    rows = [(0, "k", ["1000", "64"]), (1, kernel, ["2000", "128"]), (2, "k", ["3000", "64"])]
    return write_raw(tmp_path / "raw.csv", METRICS, rows)


@pytest.mark.parametrize("extra", [',"x"', ',""'])
@pytest.mark.parametrize(("launch", "line"), [(1, 5), (2, 6)])
def test_an_extra_cell_is_refused_wherever_the_row_is(
    tmp_path: Path, launch: int, line: int, extra: str
) -> None:
    path = _three_launches(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    lines[line - 1] = lines[line - 1].rstrip("\n") + extra + "\n"
    path.write_text("".join(lines))
    error = raises(path)  # pandas dropped the cell of a middle row; the careful reader not
    assert error.row == f"{line} (launch ID {launch})"
    assert "14 fields, needs 13" in error.reason
    with pytest.raises(collectors.NotBatchable):  # the column reader leaves it to them
        collectors.collect_columns(path)


@pytest.mark.parametrize("line_break", ["\n", "\r"])
@pytest.mark.parametrize("kernel_row", [1, 2])
def test_a_line_break_in_a_cell_is_refused_wherever_the_row_is(
    tmp_path: Path, kernel_row: int, line_break: str
) -> None:
    path = _three_launches(tmp_path, kernel=f"void k{line_break}x(float *)")
    if kernel_row == 2:  # the broken name in the file's last row instead
        lines = path.read_bytes().split(b"\n")  # as written: a lone \r kept in its cell
        path.write_bytes(b"\n".join([*lines[:4], lines[-2], *lines[4:-2], b""]))
    error = raises(path)  # ncu writes a launch per line; pandas read the break as text
    assert error.row is not None and error.row.startswith(("5 ", "6 "))
    assert "fields, needs 13" in error.reason
    with pytest.raises(collectors.NotBatchable):
        collectors.collect_columns(path)


def test_a_sum_past_the_largest_float_names_its_launch(tmp_path: Path) -> None:
    rows = [(3, "k", ["1000", "1e308"]), (4, "k", ["1000", "1e308"]), (5, "j", ["1", "2"])]
    path = write_raw(tmp_path / "raw.csv", METRICS, rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warning was printed beside it
        error = raises(path)
    assert (error.row, error.field) == ("launch ID 3", "bytes.dram")
    assert "past the largest float (1.8e308) over 2 launches of k" in error.reason


@pytest.mark.parametrize("text", ["Done.", "   "])
def test_a_line_of_text_in_the_table_is_not_called_a_launch(tmp_path: Path, text: str) -> None:
    path = _three_launches(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([*lines[:5], text + "\n", *lines[5:]]))
    error = raises(path)
    assert (error.row, error.reason) == ("6", "row has 1 fields, needs 13")


def test_a_figure_missing_from_one_launch_is_said_at_run_level(
    tmp_path: Path, corpus_dir: Path
) -> None:
    """An n/a cell: the kernel's DRAM bytes of both launches went, with no note."""
    lines = (corpus_dir / "ncu-csv/wangzy0327_cuda-roofline__output_V100.csv").read_text()
    rows = lines.splitlines(keepends=True)
    assert '"837,859,712"' in rows[11]  # the first launch's dram__bytes.sum
    rows[11] = rows[11].replace('"837,859,712"', '"n/a"')
    report = tmp_path / "na.csv"
    report.write_text("".join(rows))
    run = collectors.collect(report)
    [kernel] = [k for k in run.kernels if k.name.startswith("void InitializeMatrix_kernel<__half")]
    assert "dram" not in kernel.bytes
    assert "bytes.dram: present in 1 of 2 launches, left out" in kernel.missing
    [note] = [n for n in run.notes if "missing from some launches" in n]
    assert (
        "void InitializeMatrix_kernel<__half" in note and "(bytes.dram, in 1 of 2 launches)" in note
    )


@pytest.mark.parametrize("cell", ["nan", "NaN", "-nan"])
def test_a_nan_counter_beside_a_measured_duration_is_refused(
    tmp_path: Path, corpus_dir: Path, cell: str
) -> None:
    """It read as absent, and the kernel's advice was to collect the metric it had collected.

    ncu writes NaN where a launch's replay failed, and then for its duration too (the only
    NaNs of the corpus); a NaN beside a measured duration is a damaged value.
    """
    path = damaged(
        corpus_dir,
        tmp_path,
        '"dram__bytes.sum","byte","104040704"',
        f'"dram__bytes.sum","byte","{cell}"',
    )
    error = raises(path)
    assert str(error) == (
        f"{path}, row 5 (launch ID 0), field 'dram__bytes.sum': expected a finite, "
        f"non-negative number, got {cell!r} beside a measured duration"
    )
    raw = write_raw(
        tmp_path / "raw.csv", METRICS, [(0, "k", ["1000", "64"]), (1, "k", ["2000", cell])]
    )
    assert str(raises(raw)).endswith(
        ", row 5 (launch ID 1), field 'dram__bytes.sum': expected a finite, non-negative number, "
        f"got {cell!r} beside a measured duration"
    )


def test_a_failed_replay_is_still_a_failed_launch(tmp_path: Path, corpus_dir: Path) -> None:
    """Its duration NaN too: the launch is counted as failed, its NaN counters with it."""
    text = (corpus_dir / LASHI).read_text()
    for cells in ('"byte","104040704"', '"byte/second","82445221903.38"', '"nsecond","814048"'):
        assert text.count(cells) == 1
        text = text.replace(cells, cells.rsplit(",", 1)[0] + ',"nan"')
    path = tmp_path / "failed.csv"
    path.write_text(text)
    run = collectors.collect(path)
    assert run.kernels[0].failed_launches == 1 and run.kernels[0].launches == 0
    assert "1 of 9 launches failed or had no duration" in run.notes


RAW_B200 = "ncu-csv/meinie0826_Roofline-Analysis__torch_sdpa_flash__gqa_bf16_b32_ctx8k_p64.ncu.csv"


@pytest.mark.parametrize("fmt", [None, "ncu-csv-raw"])
def test_a_raw_page_without_its_units_row_is_refused(
    tmp_path: Path, corpus_dir: Path, fmt: str | None
) -> None:
    """Read as seconds before: the B200 page's 5120 ns launch became a kernel of 5120 s."""
    lines = (corpus_dir / RAW_B200).read_text().splitlines(keepends=True)
    header = next(n for n, line in enumerate(lines) if line.startswith('"ID","Process ID"'))
    assert lines[header + 1].startswith('"","",')  # the units row this test drops
    path = tmp_path / "raw.csv"
    path.write_text("".join([*lines[: header + 1], *lines[header + 2 :]]))
    error = raises(path, fmt)
    assert str(error) == (
        f"{path}, row {header + 2} (launch ID 0): the units row is missing: this launch "
        "follows the header where ncu --csv --page raw prints each metric's unit (nsecond, "
        "byte, ...), so no value has a known scale"
    )
    small = tmp_path / "small.csv"
    kept = good_raw(small).read_text().splitlines(keepends=True)
    small.write_text("".join([*kept[:2], *kept[3:]]))  # a prelude line, the header, launches
    assert raises(small, fmt).row == "3 (launch ID 0)"
