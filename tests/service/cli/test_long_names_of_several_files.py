"""A kernel name past the store's limit, in a run of several files: named in its own file.

The error named every file and an index into the merged run ("a.json, b.json:
kernels.3.name: 84,014 bytes"), so which file, and which entry of it, was left to guess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import run


def _gbench(path: Path, *names: str) -> Path:
    entries = [
        {"name": name, "run_type": "iteration", "iterations": 10, "real_time": 1.0 + i}
        | {"cpu_time": 1.0, "time_unit": "us"}
        for i, name in enumerate(names)
    ]
    path.write_text(
        json.dumps({"context": {"library_build_type": "release"}, "benchmarks": entries})
    )
    return path


@pytest.mark.parametrize("command", ["check", "ingest"])
def test_the_long_name_is_named_by_its_file_and_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    short = _gbench(tmp_path / "short.json", "BM_a", "BM_b", "BM_c")
    long = _gbench(tmp_path / "long.json", "BM_d", "BM_copy<" + "float, " * 12_000 + "float>")
    argv = [command, str(short), str(long), "--repo", "acme/k", "--commit", "c1"]
    argv += ["--db", f"sqlite:///{tmp_path / 'h.db'}", "--device", "H100-SXM5"]
    argv += ["--branch", "main"] if command == "ingest" else ["--format", "text"]
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert f"{long}, row benchmarks[1], field 'name': 84,014 bytes, longer than the 65,536" in err
    assert str(short) not in err and "kernels." not in err
