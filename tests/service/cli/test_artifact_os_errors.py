"""A file the system refuses (disk full, a folder in its place) is one error line naming it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.cli import run
from tests.factories import make_kernel, make_run

ROOT = Path(__file__).resolve().parents[3]
SHA = "c" * 40
FULL = pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full (a full disk)")


def roofguard(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The real command line in a process of its own (the way CI runs it)."""
    environ = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **env}
    cmd = [sys.executable, "-m", "service", *args]
    return subprocess.run(cmd, env=environ, cwd=ROOT, capture_output=True, text=True, timeout=120)


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    """Exit 2 and a single ``roofguard: error:`` line, no traceback, not "unexpected"."""
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("roofguard: error: ") and "unexpected" not in lines[0], lines
    return lines[0]


@pytest.fixture
def packed(tmp_path: Path) -> Path:
    """Two reports packed for PR #5 at SHA, and the workflow_run event that goes with them."""
    (tmp_path / "a.csv").write_text("kernel,duration\ngemm,1\n")
    (tmp_path / "b.json").write_text("{}")
    reports = [str(tmp_path / "a.csv"), str(tmp_path / "b.json")]
    args = ["--output", str(tmp_path / "pk"), "--pr", "5", "--sha", SHA]
    proc = roofguard("artifact", "pack", *reports, *args)
    assert proc.returncode == 0, proc.stderr
    run_event = {"event": "pull_request", "head_sha": SHA, "pull_requests": []}
    (tmp_path / "event.json").write_text(json.dumps({"workflow_run": run_event}))
    return tmp_path / "pk"


def unpack(packed: Path, out: Path, **env: str) -> subprocess.CompletedProcess[str]:
    event = str(packed.parent / "event.json")
    args = ["artifact", "unpack", str(packed), "--output", str(out), "--repo", "acme/kernels"]
    return roofguard(*args, "--event", event, "--no-verify-pr", **env)


@FULL
def test_unpack_on_a_full_disk_names_the_report_it_could_not_write(packed: Path) -> None:
    """Was "unexpected OSError: [Errno 28] No space left on device", naming no file."""
    out = packed.parent / "out"
    out.mkdir()
    os.symlink("/dev/full", out / "b.json")
    error = one_error(unpack(packed, out))
    assert error.endswith(f"{out / 'b.json'}: cannot write: No space left on device"), error
    assert list(out.iterdir()) == []


def test_unpack_into_a_file_names_the_folder_it_could_not_make(packed: Path) -> None:
    """Was "unexpected FileExistsError: [Errno 17] File exists: '...'"."""
    out = packed.parent / "out"
    out.write_text("")
    error = one_error(unpack(packed, out))
    assert error.endswith(f"{out}: cannot create the folder: File exists"), error


def test_unpack_names_a_step_output_file_it_cannot_write(packed: Path) -> None:
    """Was "unexpected IsADirectoryError: [Errno 21] Is a directory: '...'"."""
    folder = packed.parent / "outputs"
    folder.mkdir()
    error = one_error(unpack(packed, packed.parent / "out", GITHUB_OUTPUT=str(folder)))
    assert error.endswith(f"GITHUB_OUTPUT: {folder}: cannot write: Is a directory"), error


@FULL
def test_pack_on_a_full_disk_names_the_manifest_it_could_not_write(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("kernel,duration\ngemm,1\n")
    folder = tmp_path / "pk"
    folder.mkdir()
    os.symlink("/dev/full", folder / "roofguard-artifact.json")
    args = ["artifact", "pack", str(tmp_path / "a.csv"), "--output", str(folder)]
    error = one_error(roofguard(*args, "--pr", "5", "--sha", SHA))
    expected = f"{folder / 'roofguard-artifact.json'}: cannot write: No space left on device"
    assert error.endswith(expected), error


def test_pack_into_a_file_names_the_folder_it_could_not_make(tmp_path: Path) -> None:
    """Was "unexpected NotADirectoryError: [Errno 20] Not a directory: '.../reports'"."""
    (tmp_path / "a.csv").write_text("kernel,duration\ngemm,1\n")
    (tmp_path / "pk").write_text("")
    args = ["artifact", "pack", str(tmp_path / "a.csv"), "--output", str(tmp_path / "pk")]
    error = one_error(roofguard(*args, "--pr", "5", "--sha", SHA))
    assert error.endswith(
        f"{tmp_path / 'pk' / 'reports'}: cannot create the folder: Not a directory"
    ), error


def test_check_charts_into_a_file_names_the_flag_and_the_file(tmp_path: Path, capsys) -> None:
    """Was "unexpected FileExistsError: [Errno 17] File exists: '...'"."""
    kernels = [make_kernel("gemv", flops={"tensor_bf16": 2e10}, dram_bytes=4e9, time_s=1.5e-3)]
    report = tmp_path / "run.json"
    report.write_text(make_run(kernels=kernels, commit="f00d").model_dump_json())
    charts = tmp_path / "charts"
    charts.write_text("")
    args = ["check", str(report), "--repo", "acme/kernels", "--commit", "f00d"]
    args += ["--db", f"sqlite:///{tmp_path / 'h.db'}", "--format", "json"]
    args += ["--output", str(tmp_path / "v.json"), "--charts", str(charts)]
    assert run(args) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error == f"roofguard: error: --charts: {charts}: cannot write: File exists", error
