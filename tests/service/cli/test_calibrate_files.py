"""``calibrate``'s files: refused before measuring when they cannot be written; the store first.

A GPU calibration takes minutes: an ``--output`` that is a folder or a ``--chart`` under a file
was learnt only after them, and ``--store`` (done after the files) was lost with them.
"""

from __future__ import annotations

import pytest

from service.calibrate.storage import load_ceilings, measured_roof
from service.cli import run
from service.cli.common import store_session

pytest.importorskip("torch")

QUICK_CPU = ["calibrate", "--device", "cpu", "--quick", "--sweep", "eager", "--threads", "1"]


@pytest.mark.parametrize(
    ("flag", "name", "message"),
    [
        ("--output", "afolder", "is a folder; give a file name"),
        ("--output", "afile/ceilings.json", "is a file, not a folder"),
        ("--chart", "afolder.svg", "is a folder; give a file name"),
        ("--chart", "afile/deeper/roof.svg", "is a file, not a folder"),
        ("--health-file", "afolder", "is a folder; give a file name"),
    ],
)
def test_a_file_that_cannot_be_written_is_refused_before_measuring(
    tmp_path, capsys, flag, name, message
):
    (tmp_path / "afolder").mkdir()
    (tmp_path / "afolder.svg").mkdir()
    (tmp_path / "afile").write_text("not a folder\n")
    db = f"sqlite:///{tmp_path}/history.db"
    check = ["--check"] if flag == "--health-file" else ["--store"]
    argv = [*QUICK_CPU, *check, "--db", db, "--runner", "r2", flag, str(tmp_path / name)]
    assert run(argv) == 2
    out, err = capsys.readouterr()
    assert f"{flag} {tmp_path / name}: " in err and message in err
    assert "unexpected" not in err
    assert "sweep" not in out  # nothing was measured
    assert not (tmp_path / "history.db").exists()


def test_a_file_that_fails_after_measuring_does_not_lose_the_store(tmp_path, capsys):
    chart = tmp_path / "roof.svg"
    chart.symlink_to(chart)  # a link to itself: it looks writable, and opening it fails
    db = f"sqlite:///{tmp_path}/history.db"
    output = tmp_path / "ceilings.json"
    argv = [*QUICK_CPU, "--store", "--db", db, "--runner", "r2", "--output", str(output)]
    assert run([*argv, "--chart", str(chart)]) == 2
    err = capsys.readouterr().err
    assert f"--chart {chart}: cannot write" in err and "unexpected" not in err
    device = load_ceilings(output).device  # the CPU's name, as the calibration printed it
    with store_session(db) as session:
        roof = measured_roof(session=session, runner="r2", device=device)
    assert roof is not None and roof.source == "measured"
