"""A kernel with no measured launch is kept, not measured, and named in the run's notes.

Only the ncu readers named such a kernel; from a flat CSV or a Kineto trace it left the
verdict and the stored run without a word. A kernel of 0 launches with a time is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import collectors
from collectors.errors import MalformedReport

KINETO = "other/xytpai_nvbench__test_kineto_trace.json"
NOT_MEASURED = "not measured, no launch with a duration: "
HEADER = "# device: H100-SXM5\nname,duration_s,bytes_dram,launches,samples\n"


def flat_csv(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "run.csv"
    path.write_text(HEADER + "".join(f"{row}\n" for row in rows), encoding="utf-8")
    return path


def test_a_flat_csv_kernel_of_no_launch_is_named(tmp_path: Path) -> None:
    run = collectors.collect(flat_csv(tmp_path, "k1,0,1000000000,0,", "k2,0.001,1000,3,"))
    assert [(k.key, k.measured) for k in run.kernels] == [("k1", False), ("k2", True)]
    assert run.notes == (f"{NOT_MEASURED}k1",)


def test_more_than_three_are_counted(tmp_path: Path) -> None:
    rows = [f"k{i},0,,0," for i in range(5)]
    run = collectors.collect(flat_csv(tmp_path, *rows, "k9,0.001,,1,"))
    assert run.notes == (f"{NOT_MEASURED}k0; k1; k2 and 2 more",)


def test_a_kineto_event_shorter_than_the_resolution_is_named(
    corpus_dir: Path, tmp_path: Path
) -> None:
    run = collectors.collect(corpus_dir / KINETO)
    assert f"{NOT_MEASURED}Memset (Device)" in run.notes
    events = [
        {"ph": "X", "cat": "kernel", "name": name, "dur": dur, "args": {"device": 0}}
        for name, dur in (("short", 0), ("long", 4))
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}), encoding="utf-8")
    assert collectors.collect(path).notes == (f"{NOT_MEASURED}short",)


@pytest.mark.parametrize(
    ("row", "words"),
    [("k1,0.001,1000,0,", "a time of 0.001 s"), ("k1,0,1000,0,0.5 0.6", "2 sample(s)")],
)
def test_a_time_without_a_launch_is_refused(tmp_path: Path, row: str, words: str) -> None:
    path = flat_csv(tmp_path, row, "k2,0.001,1000,3,")
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert (info.value.path, info.value.row, info.value.field) == (str(path), "3", "launches")
    assert info.value.reason.startswith(f"0 launches, but {words}: ")


def test_roofguard_json_names_its_entry_and_the_kernel_once(tmp_path: Path) -> None:
    run = collectors.collect(flat_csv(tmp_path, "k1,0,1000,0,", "k2,0.001,1000,3,"))
    path = tmp_path / "run.json"
    path.write_text(run.model_dump_json(), encoding="utf-8")
    assert collectors.collect(path).notes == run.notes  # read back: not noted twice
    path.write_text(run.model_copy(update={"notes": ()}).model_dump_json(), encoding="utf-8")
    assert collectors.collect(path).notes == run.notes
    timed = run.kernels[0].model_copy(update={"duration_s": 0.001})
    path.write_text(run.model_copy(update={"kernels": (timed,)}).model_dump_json())
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert (info.value.row, info.value.field) == ("kernels[0]", "launches")
