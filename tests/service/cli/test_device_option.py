"""``--device`` says what it does: the device of reports that name none, in every command.

Its help read "Catalog device whose datasheet roof to use (default: the report's device)"
(inspect) and "Device (default: the run's)" (plot run, ingest), yet a device other than the
one a report names is refused. ``plot run RUN_ID --device X`` failed naming a CSV file and
"the report names device ...", though the argument was a stored run.
"""

from __future__ import annotations

import pytest
import typer
from factories import make_kernel, make_run

from service.cli import build_app, run

#: Commands whose ``--device`` names the device of the reports they read.
READS_REPORTS = [
    ("check",),
    ("inspect",),
    ("ingest",),
    ("upload",),
    ("artifact", "pack"),
    ("plot", "run"),
]


def _device_help(path: tuple[str, ...]) -> str:
    command = typer.main.get_command(build_app())
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    (param,) = [p for p in command.params if "--device" in getattr(p, "opts", ())]
    return " ".join((param.help or "").split())  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", READS_REPORTS, ids=" ".join)
def test_device_help_says_it_names_reports_that_name_none(path):
    text = _device_help(path)
    assert "name none" in text and "naming another is an error" in text, text
    assert "default: the" not in text, text


def test_plot_runs_device_help_says_a_stored_run_keeps_its_own():
    assert "a stored run keeps its own" in _device_help(("plot", "run"))


@pytest.fixture
def stored(tmp_path):
    """A store of one run, of a report that names its H100."""
    db = f"sqlite:///{tmp_path}/h.db"
    record = make_run(kernels=[make_kernel("gemv", flops={"fp32": 2e9}, dram_bytes=4e9)])
    path = tmp_path / "night.json"
    path.write_text(record.model_dump_json())
    argv = ["--commit", "n1", "--branch", "main", "--kind", "nightly"]
    assert run(["ingest", str(path), "--repo", "acme/k", "--db", db, *argv]) == 0
    return db


def test_plot_run_of_a_stored_run_on_another_device_names_the_run(stored, tmp_path, capsys):
    capsys.readouterr()
    out = tmp_path / "run.svg"
    argv = ["--db", stored, "--output", str(out)]
    assert run(["plot", "run", "1", "--device", "A100-SXM4-80GB", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("roofguard: error: --device: run 1 is stored as a run on H100-SXM5"), err
    assert "drop it" in err and "night.json" not in err and "the report names" not in err
    assert not out.exists()
    assert run(["plot", "run", "1", "--device", "NVIDIA H100 80GB HBM3", *argv]) == 0
    assert out.exists(), "the stored run's own card, by another name, is no conflict"


def test_device_for_a_report_file_does_not_move_a_stored_baseline(stored, tmp_path, capsys):
    """``--device`` names the file's card; the stored baseline keeps its own."""
    unnamed = make_run(
        kernels=[make_kernel("gemv", flops={"fp32": 2e9}, dram_bytes=4e9, time_s=3e-3)],
        device="unknown",
    )
    path = tmp_path / "gbench.json"
    path.write_text(unnamed.model_dump_json())
    out = tmp_path / "run.svg"
    argv = [str(path), "--baseline", "1", "--db", stored, "--output", str(out)]
    assert run(["plot", "run", *argv, "--device", "H100-SXM5"]) == 0
    assert 'id="arrow:gemv"' in out.read_text()
    capsys.readouterr()
    assert run(["plot", "run", *argv, "--device", "A100-SXM4-80GB"]) == 2
    err = capsys.readouterr().err
    assert f"--baseline: run 1 ran on H100-SXM5, {path} on A100-SXM4-80GB" in err, err
