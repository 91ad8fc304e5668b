"""The column reader of huge runs (``collectors.collect_columns``, issue 29).

Each kernel's JSON written from columns is its record's; files the column path cannot vouch
for are left to the record path (``NotBatchable``), which reads them or names the entry and
field that is wrong, so bad input reads the same whichever path a file would take.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from collectors import CollectorError, NotBatchable, RunRecord, collect, collect_columns
from collectors.base import CollectOptions
from collectors.errors import TooManyKernels
from collectors.ncu import frames
from service.store.ids import identity

CONTEXT = {"date": "2026-11-30T01:00:00+00:00", "executable": "./bench", "gpu_name": "H100"}


def _entry(index: int, **extra: Any) -> dict[str, Any]:
    name = f"BM_copy/{index}"
    base = {"name": name, "run_name": name, "run_type": "iteration", "iterations": 10}
    base |= {"real_time": 10.0 + index, "cpu_time": 9.0, "time_unit": "us"}
    return base | {"flops_fp32": 1e6, "bytes_dram": 4e3} | extra


def _gbench(tmp_path: Path, entries: list[dict[str, Any]]) -> Path:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"context": CONTEXT, "benchmarks": entries}))
    return path


def _texts(path: Path, fmt: str | None = None) -> list[str]:
    return [t for c in collect_columns(path, fmt).chunks for t in c.texts(str(path))]


def _dumped(path: Path, fmt: str | None = None) -> list[str]:
    return [
        json.dumps(k.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        for k in collect(path, fmt).kernels
    ]


def test_kernel_json_is_the_records(tmp_path: Path) -> None:
    entries = [_entry(i) for i in range(5)]
    entries[2] |= {"bytes_per_second": 3e9, "label": "x"}
    del entries[3]["flops_fp32"]  # no FLOP figure: another shape
    entries[4]["name"] = entries[4]["run_name"] = "BM_copy/size:64/kind:\u00e9t\u00e9/real_time"
    path = _gbench(tmp_path, entries)
    assert _texts(path) == _dumped(path)
    assert len(collect_columns(path).chunks) == 4


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        (_entry(1, real_time=-3.0), "real_time"),
        (_entry(1, real_time="fast"), "real_time"),
        (_entry(1, flops_fp32="many"), "flops_fp32"),
        (_entry(1, time_unit="fortnights"), "time_unit"),
        (_entry(1, flops_fp32=1e30), "flops.fp32"),  # faster than any device
        (_entry(1, flops_fp32=-1e9), "'flops_fp32': must not be negative"),
        (_entry(1, bytes_per_second=-1.0), "'bytes_per_second': must not be negative"),
    ],
)
def test_bad_entries_are_named_by_the_record_path(
    tmp_path: Path, entry: dict[str, Any], field: str
) -> None:
    path = _gbench(tmp_path, [_entry(0), entry])
    with pytest.raises(NotBatchable):
        collect_columns(path)
    with pytest.raises(CollectorError) as error:
        collect(path)
    assert field in str(error.value) and "benchmarks[1]" in str(error.value)


def test_repetitions_aggregates_and_duplicates_take_the_record_path(tmp_path: Path) -> None:
    twice = [_entry(0, repetition_index=0), _entry(0, repetition_index=1)]
    aggregate = [_entry(0), _entry(0, run_type="aggregate", aggregate_name="mean")]
    for entries in (twice, aggregate):
        path = _gbench(tmp_path, entries)
        with pytest.raises(NotBatchable):
            collect_columns(path)
        assert len(collect(path).kernels) == 1


def test_not_plain_json_takes_the_record_path(tmp_path: Path) -> None:
    path = _gbench(tmp_path, [_entry(0)])
    path.write_text(path.read_text() + " trailing")
    with pytest.raises(NotBatchable):
        collect_columns(path)
    with pytest.raises(CollectorError, match="not valid JSON"):
        collect(path)


def test_too_many_kernels_is_refused_by_columns_too(tmp_path: Path) -> None:
    path = _gbench(tmp_path, [_entry(i) for i in range(3)])
    with pytest.raises(TooManyKernels):
        collect_columns(path, options=CollectOptions(max_kernels=2))


RAW = "ncu-csv-raw"


def _ncu(tmp_path: Path, rows: list[list[str]]) -> Path:
    header = ["ID", "Process ID", "Kernel Name", "Grid Size", "Block Size", "Device", "CC"]
    header += ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"]
    units = ["", "", "", "", "", "", "", "nsecond", "byte", "byte"]
    lines = [header, units, *rows]
    path = tmp_path / "run.csv"
    path.write_text("".join(",".join(f'"{c}"' for c in line) + "\n" for line in lines))
    return path


def _launch(launch: int, name: str, time_ns: str = "1500") -> list[str]:
    fixed = [str(launch), "42", name, "(8, 1, 1)", "(128, 1, 1)", "0", "9.0"]
    return [*fixed, time_ns, "4096", "2048"]


def test_ncu_kernel_json_is_the_records(tmp_path: Path) -> None:
    path = _ncu(tmp_path, [_launch(i, f"void k{i}(float *)") for i in range(4)])
    assert _texts(path, RAW) == _dumped(path, RAW)


@pytest.mark.parametrize(
    "rows",
    [
        [_launch(0, "void k(float *)"), _launch(1, "void k(float *)")],  # one kernel, 2 launches
        [_launch(0, "void a()"), _launch(0, "void b()")],  # a launch ID twice
    ],
)
def test_ncu_files_the_columns_cannot_vouch_for(tmp_path: Path, rows: list[list[str]]) -> None:
    path = _ncu(tmp_path, rows)
    with pytest.raises(NotBatchable):
        collect_columns(path, RAW)
    try:
        collect(path, RAW)
    except CollectorError as error:  # the record path names the launch
        assert "launch ID" in str(error)


def test_ncu_launches_with_na_cells_are_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed replay or a counter not collected keeps a huge run on the column path."""
    monkeypatch.setattr(frames, "CHUNK_ROWS", 4)  # gaps in three chunks: read in their order
    rows = [_launch(i, f"void k{i}(float *)") for i in range(11)]
    rows[1][-3:] = ["n/a"] * 3  # a failed replay: not measured
    rows[2][-1] = rows[3][-1] = "n/a"  # a counter not collected: a plan without it
    rows[5][-3] = "n/a"  # no duration
    rows[8][-2] = ""
    rows[10][-1] = "n/a"  # the last cell: pandas 3 reads no "nan" text
    rows[9][-3:] = ["n/a"] * 3
    path = _ncu(tmp_path, rows)
    columns, run = collect_columns(path, RAW), collect(path, RAW)
    assert _texts(path, RAW) == _dumped(path, RAW)
    assert columns.head.notes == run.notes
    assert "3 of 11 launches failed or had no duration" in run.notes
    assert columns.unmeasured_count == 3 == sum(not k.measured for k in run.kernels)


@pytest.mark.parametrize("column", [-2, -1])  # a middle cell, the last (read as text)
def test_ncu_nan_beside_a_duration_is_named_by_the_record_path(tmp_path: Path, column: int) -> None:
    """pandas read ``nan`` as ``n/a``: the launch's figure went absent, on every path."""
    rows = [_launch(i, f"void k{i}()") for i in range(4)]
    rows[2][column] = "nan"
    path = _ncu(tmp_path, rows)
    with pytest.raises(NotBatchable):
        collect_columns(path, RAW)
    with pytest.raises(CollectorError) as error:
        collect(path, RAW)
    field = "dram__bytes_read.sum" if column == -2 else "dram__bytes_write.sum"
    assert str(error.value) == (
        f"{path}, row 5 (launch ID 2), field '{field}': expected a finite, non-negative number, "
        "got 'nan' beside a measured duration"
    )


def test_ncu_failed_replay_written_nan_reads_as_written_n_a(tmp_path: Path) -> None:
    rows = [_launch(i, f"void k{i}()") for i in range(4)]
    rows[1][-3:] = ["nan"] * 3
    path = _ncu(tmp_path, rows)
    rows[1][-3:] = ["n/a"] * 3
    (tmp_path / "na").mkdir()
    written_na = _dumped(_ncu(tmp_path / "na", rows), RAW)
    assert _dumped(path, RAW) == [k.replace("/na/run.csv", "/run.csv") for k in written_na]
    assert "1 of 4 launches failed or had no duration" in collect(path, RAW).notes


def test_ncu_run_of_failed_launches_is_named_by_the_record_path(tmp_path: Path) -> None:
    path = _ncu(tmp_path, [_launch(i, f"void k{i}()", "n/a") for i in range(3)])
    with pytest.raises(NotBatchable):
        collect_columns(path, RAW)
    with pytest.raises(CollectorError, match="none of its 3 launches has a duration"):
        collect(path, RAW)


def test_ncu_run_past_the_cap_is_refused_before_it_is_read_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(frames, "CHUNK_ROWS", 4)
    rows = [_launch(i, f"void k{i}()") for i in range(10)]
    rows[9][-1] = "-1"  # read, this row would send the file to the record path
    path = _ncu(tmp_path, rows)
    with pytest.raises(TooManyKernels):
        collect_columns(path, RAW, options=CollectOptions(max_kernels=3))


def test_na_cells_read_alike_by_the_fast_and_the_careful_reader(tmp_path: Path) -> None:
    """A thousands separator elsewhere sends a file to the careful reader: n/a reads the same.

    The careful reader took an n/a duration for an absent one (a launch timed from its cycles
    there, failed on the fast path) and wrote other notes: a launch's record depended on how
    an unrelated cell was written.
    """
    rows = [_launch(i, f"void k{i}()") for i in range(6)]
    rows[1][-3] = "n/a"  # no duration
    rows[3][-2] = ""  # a counter not collected
    (tmp_path / "fast").mkdir()
    (tmp_path / "careful").mkdir()
    fast_path = _ncu(tmp_path / "fast", rows)
    rows[5][-1] = "2,048"  # the same number, written as the careful reader alone reads it
    careful_path = _ncu(tmp_path / "careful", rows)
    assert collect_columns(fast_path, RAW).kernel_count == 6  # pandas reads it: the fast reader
    with pytest.raises(NotBatchable):  # pandas reads no separator: the careful reader
        collect_columns(careful_path, RAW)
    fast, careful = collect(fast_path, RAW), collect(careful_path, RAW)
    assert careful.notes == fast.notes
    assert _dumped_kernels(careful) == _dumped_kernels(fast)  # in the same order
    assert identity(careful)[1] == identity(fast)[1]


@pytest.mark.parametrize("gap", [None, 2])
def test_a_kernels_launches_add_up_alike_in_both_readers(tmp_path: Path, gap: int | None) -> None:
    """Eight launches of one kernel: the fast reader added them as a batch, numpy's pairwise
    sum, and put a launch with an n/a cell after the others; the careful reader adds them one
    by one in file order. Totals a last digit apart, two content hashes for one file (a real
    B200 page of the corpus among them)."""
    rows = [_launch(i, "void k()", time_ns=str(6 + i)) for i in range(8)]
    if gap is not None:
        rows[gap][-1] = "n/a"  # a counter not collected on one launch
    (tmp_path / "fast").mkdir()
    (tmp_path / "careful").mkdir()
    fast_path = _ncu(tmp_path / "fast", rows)
    rows[-1][-2] = "4,096"  # the same number, written as the careful reader alone reads it
    careful_path = _ncu(tmp_path / "careful", rows)
    fast, careful = collect(fast_path, RAW), collect(careful_path, RAW)
    assert _dumped_kernels(careful) == _dumped_kernels(fast)
    assert identity(careful)[1] == identity(fast)[1]


def _dumped_kernels(run: RunRecord) -> list[dict[str, Any]]:
    return [k.model_dump(mode="json", exclude={"source": {"path"}}) for k in run.kernels]
