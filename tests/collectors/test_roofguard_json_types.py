"""roofguard JSON: a value of the wrong JSON type is refused, naming the entry and field.

Lax validation read ``"duration_s": true`` as 1 s, ``"0.001"`` as 1 ms and ``"3"`` or ``3.0``
as 3 launches; the schema (``roofguard schema``) says a number or an integer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import collectors
from collectors.errors import MalformedReport

GBENCH = "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json"


def run_json() -> dict[str, Any]:
    """A RunRecord as ``roofguard inspect --json`` writes one: one kernel."""
    kernel = {
        "name": "gemm_a",
        "key": "gemm_a",
        "launches": 1,
        "duration_s": 0.000229,
        "samples_s": [0.000229],
        "flops": {"tensor_bf16": 137438953472.0},
        "bytes": {"dram": 100663296.0},
        "provenance": {"bytes.dram": {"kind": "reported", "metrics": ["bytes_dram"]}},
        "params": {"M": 4096.0, "layout": "nt"},
        "source": {"path": "good.csv", "row": "3", "format": "roofguard-csv"},
    }
    return {
        "schema_version": 1,
        "kind": "nightly",
        "timestamp": "2026-12-07T13:55:00.146424Z",
        "device": {"name": "NVIDIA H100 80GB HBM3", "sm_count": 132},
        "profiler": {"tool": "roofguard-csv"},
        "kernels": [kernel],
        "sources": [{"path": "good.csv", "format": "roofguard-csv"}],
    }


def written(tmp_path: Path, edit: Callable[[dict[str, Any]], object]) -> Path:
    root = run_json()
    edit(root)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(root), encoding="utf-8")
    return path


def kernel_edit(**values: Any) -> Callable[[dict[str, Any]], object]:
    return lambda root: root["kernels"][0].update(values)


WRONG = {
    "duration true": (kernel_edit(duration_s=True), "kernels[0]", "duration_s", "got true"),
    "duration text": (
        kernel_edit(duration_s="0.001"),
        "kernels[0]",
        "duration_s",
        "got the string '0.001'",
    ),
    "launches text": (kernel_edit(launches="3"), "kernels[0]", "launches", "got the string '3'"),
    "launches float": (kernel_edit(launches=3.0), "kernels[0]", "launches", "got 3.0"),
    "flops text": (
        kernel_edit(flops={"tensor_bf16": "137438953472"}),
        "kernels[0]",
        "flops.tensor_bf16",
        "got the string",
    ),
    "sample false": (kernel_edit(samples_s=[False]), "kernels[0]", "samples_s.0", "got false"),
    "sm_count text": (
        lambda root: root["device"].update(sm_count="132"),
        None,
        "device.sm_count",
        "got the string '132'",
    ),
    "pull request true": (lambda root: root.update(pull_request=True), None, "pull_request", ""),
    "timestamp number": (lambda root: root.update(timestamp=1_700_000_000), None, "timestamp", ""),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_a_value_of_the_wrong_type_is_refused(tmp_path: Path, case: str) -> None:
    edit, row, field, words = WRONG[case]
    path = written(tmp_path, edit)
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert (info.value.path, info.value.row, info.value.field) == (str(path), row, field)
    assert words in info.value.reason
    assert str(info.value).startswith(f"{path}, ")


def test_what_the_schema_writes_still_reads(tmp_path: Path) -> None:
    """An integer for a number, enums, timestamps and lists read as lax validation read them."""
    path = written(tmp_path, kernel_edit(duration_s=1, samples_s=[1, 0.5], flops={"fp32": 10}))
    run = collectors.collect(path)
    (kernel,) = run.kernels
    assert (kernel.duration_s, kernel.samples_s, kernel.flops) == (1.0, (1.0, 0.5), {"fp32": 10.0})
    assert isinstance(kernel.duration_s, float) and kernel.params == {"M": 4096.0, "layout": "nt"}
    assert (run.kind, run.timestamp.isoformat()) == ("nightly", "2026-12-07T13:55:00.146424+00:00")
    assert kernel.provenance["bytes.dram"].metrics == ("bytes_dram",)


def test_inspect_json_of_a_corpus_file_reads_back(corpus_dir: Path, tmp_path: Path) -> None:
    record = collectors.collect(corpus_dir / GBENCH)
    path = tmp_path / "run.json"
    path.write_text(record.model_dump_json(), encoding="utf-8")
    assert collectors.collect(path) == record
