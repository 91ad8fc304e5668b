"""pytest-benchmark tests of one name in two modules read apart, by their ``fullname``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import collectors
from collectors.errors import MalformedReport


def _bench(path: Path, *fullnames: str, params: dict[str, int] | None = None) -> Path:
    entries = [
        {
            "name": full.rpartition("::")[2],
            "fullname": full,
            "params": params,
            "extra_info": {},
            "stats": {"median": 1e-3 * (i + 1), "rounds": 3, "data": [1e-3 * (i + 1)] * 3},
        }
        for i, full in enumerate(fullnames)
    ]
    path.write_text(json.dumps({"machine_info": {"node": "n"}, "benchmarks": entries}))
    return path


def test_one_test_name_in_two_modules_reads_as_two_benchmarks(tmp_path: Path) -> None:
    """Refused before as a duplicate: the key ignored ``fullname``."""
    fulls = ["tests/test_attention.py::test_forward", "tests/test_mlp.py::test_forward"]
    record = collectors.collect(_bench(tmp_path / "pb.json", *fulls))
    assert [(k.name, k.key, k.duration_s) for k in record.kernels] == [
        (fulls[0], fulls[0], 1e-3),
        (fulls[1], fulls[1], 2e-3),
    ]


def test_parameters_stay_in_the_key_of_a_test_told_apart(tmp_path: Path) -> None:
    fulls = ["tests/a.py::test_mm[1024]", "tests/b.py::test_mm[1024]"]
    record = collectors.collect(_bench(tmp_path / "pb.json", *fulls, params={"n": 1024}))
    assert [(k.name, k.key) for k in record.kernels] == [
        ("tests/a.py::test_mm", "tests/a.py::test_mm[n=1024]"),
        ("tests/b.py::test_mm", "tests/b.py::test_mm[n=1024]"),
    ]


def test_a_test_alone_keeps_its_key(tmp_path: Path) -> None:
    """Stored histories are keyed by the test's name: a file with no clash keys as before."""
    fulls = ["tests/test_attention.py::test_forward", "tests/test_mlp.py::test_backward"]
    record = collectors.collect(_bench(tmp_path / "pb.json", *fulls))
    assert [(k.name, k.key) for k in record.kernels] == [
        ("test_forward", "test_forward"),
        ("test_backward", "test_backward"),
    ]


def test_one_test_twice_is_still_a_duplicate(tmp_path: Path) -> None:
    path = _bench(tmp_path / "pb.json", "tests/a.py::test_x", "tests/a.py::test_x")
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert str(info.value) == (
        f"{path}, row benchmarks[1] (test_x), field 'name': duplicate benchmark "
        "'tests/a.py::test_x' (also at benchmarks[0] (test_x))"
    )
