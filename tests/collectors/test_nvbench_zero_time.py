"""A zero nvbench GPU time is named by the file's own field, never by an internal tag.

It named 'nv/cold/time/gpu/mean' in every output, a tag a --csv, markdown or 2021-12
JSON file does not hold.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import collectors
from collectors.errors import MalformedReport

NVB = "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060"
JSON_2021_12 = "nvbench/NVIDIA_nvbench__examples_outputs_throughput.json"
JSON_1_0_0 = "nvbench/NVIDIA_nvbench__python_scripts_test_ref.json"
NEVER = "duration of 0.0 s for a kernel that ran (1 launch(es)): no timer measures under 1e-12 s"


def refused(path: Path) -> MalformedReport:
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert info.value.path == str(path)
    return info.value


def test_csv_names_its_column(corpus_dir: Path, tmp_path: Path) -> None:
    lines = (corpus_dir / f"{NVB}.csv").read_text().splitlines(keepends=True)
    column = lines[0].split(",").index("GPU Time (sec)")
    cells = lines[1].split(",")
    cells[column] = "0"
    path = tmp_path / "nvb.csv"
    path.write_text("".join([lines[0], ",".join(cells), *lines[2:]]))
    error = refused(path)
    assert (error.field, error.reason) == ("GPU Time (sec)", NEVER)


def test_markdown_names_its_column(corpus_dir: Path, tmp_path: Path) -> None:
    text = (corpus_dir / f"{NVB}.md").read_text()
    first = "|   7.341 us | 17.85% |"
    assert text.count(first) == 1
    path = tmp_path / "nvb.md"
    path.write_text(text.replace(first, "|   0.000 us | 17.85% |"))
    error = refused(path)
    assert (error.field, error.reason) == ("GPU Time", NEVER)


def _set_2021_12(root: Any) -> None:
    state = root["benchmarks"][0]["states"]["Device=0"]
    state["summaries"]["Average GPU Time (Cold)"]["value"]["value"] = "0"


def _set_1_0_0(root: Any) -> None:
    state = root["benchmarks"][0]["states"][0]
    (gpu,) = [s for s in state["summaries"] if s["tag"] == "nv/cold/time/gpu/mean"]
    gpu["data"][0]["value"] = "0"


@pytest.mark.parametrize(
    ("name", "edit", "field"),
    [
        (JSON_2021_12, _set_2021_12, "summaries[Average GPU Time (Cold)]"),
        (JSON_1_0_0, _set_1_0_0, "summaries[nv/cold/time/gpu/mean]"),
    ],
)
def test_json_names_its_summary(
    corpus_dir: Path, tmp_path: Path, name: str, edit: Callable[[Any], None], field: str
) -> None:
    root = json.loads((corpus_dir / name).read_text())
    edit(root)
    path = tmp_path / "nvb.json"
    path.write_text(json.dumps(root))
    error = refused(path)
    assert (error.field, error.reason) == (field, NEVER)
