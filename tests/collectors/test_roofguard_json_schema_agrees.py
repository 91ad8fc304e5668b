"""`roofguard schema` and the roofguard-json reader agree on which records are valid.

The schema users validate their files against left out every bound of a measured figure: a
file of ``"duration_s": -1`` passed ``jsonschema`` and was then refused by ``inspect``. And a
record that lacks ``device`` was "not a format roofguard reads", not named by the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

import collectors
from collectors.errors import CollectorError, MalformedReport, UnknownFormat
from service.cli import run

GOLDEN_DIGEST = Path(__file__).resolve().parents[1] / "service" / "golden" / "digest.json"


def _base() -> dict[str, Any]:
    kernel = {"name": "k", "key": "k", "launches": 2, "duration_s": 2e-3}
    kernel |= {"samples_s": [1e-3, 1e-3], "flops": {"fp32": 1e9}, "bytes": {"dram": 1e8}}
    return {
        "schema_version": 1,
        "device": {"name": "H100-SXM5", "sm_count": 132},
        "profiler": {"tool": "custom"},
        "kernels": [kernel],
    }


def _changed(path: str, value: object) -> dict[str, Any]:
    """The base record with the value at dotted ``path`` (``kernels.0.flops.fp32``) set."""
    record = _base()
    *parents, last = path.split(".")
    node: Any = record
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[last] = value
    return record


#: (dotted path, value, whether the reader reads it): each bound of one field, both sides.
CASES: list[tuple[str, object, bool]] = [
    ("schema_version", 1, True),
    ("schema_version", 99, False),
    ("kernels.0.duration_s", -1, False),
    ("kernels.0.samples_s", [-1e-3, 3e-3], False),
    ("kernels.0.samples_s", [0.0, 2e-3], False),
    ("kernels.0.samples_s", [1e-12, 2e-3], True),
    ("kernels.0.flops", {"fp32": -5.0}, False),
    ("kernels.0.flops", {"fp32": 0}, True),
    ("kernels.0.bytes", {"dram": -1.0}, False),
    ("kernels.0.declared_flops", {"tensor_fp16": -1.0}, False),
    ("kernels.0.declared_bytes", {"l2": -1.0}, False),
    ("kernels.0.sm_clock_hz", -1.0, False),
    ("kernels.0.profile", {"sm__throughput.avg.pct_of_peak_sustained_elapsed": -1.0}, False),
    ("kernels.0.launches", -1, False),
    # failed launches are counted beside ``launches``: 2 timed and 5 failed is 7 profiled
    ("kernels.0.failed_launches", 5, True),
    ("kernels.0.failed_launches", -1, False),
    ("device.peak_flop_per_s", {"fp32": -1.0}, False),
    ("device.peak_flop_per_s", {"fp32": 6.7e13}, True),
    ("device.bandwidth_byte_per_s", {"dram": -1.0}, False),
    ("device.memory_clock_hz", -1.0, False),
    ("device.sm_count", -1, False),
]


@pytest.fixture
def printed_schema(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """What `roofguard schema` prints, as users save and validate against it."""
    assert run(["schema"]) == 0
    schema: dict[str, Any] = json.loads(capsys.readouterr().out)
    return schema


def _reads(path: Path) -> bool:
    try:
        collectors.collect(path)
    except CollectorError:
        return False
    return True


@pytest.mark.parametrize(("path", "value", "read"), CASES)
def test_the_schema_and_the_reader_agree(
    printed_schema: dict[str, Any], tmp_path: Path, path: str, value: object, read: bool
) -> None:
    record = _changed(path, value)
    file = tmp_path / "run.json"
    file.write_text(json.dumps(record), encoding="utf-8")
    assert _reads(file) is read
    assert jsonschema_rs.validator_for(printed_schema).is_valid(record) is read


def test_the_schema_states_the_bounds_the_reader_enforces(printed_schema: dict[str, Any]) -> None:
    kernel = printed_schema["$defs"]["KernelRecord"]["properties"]
    assert kernel["duration_s"]["minimum"] == 0
    assert kernel["samples_s"]["items"]["minimum"] == 1e-12
    assert kernel["flops"]["additionalProperties"]["minimum"] == 0
    assert printed_schema["properties"]["schema_version"]["enum"] == [1]


@pytest.mark.parametrize("field", ["device", "profiler"])
def test_a_record_lacking_a_required_field_is_refused_naming_it(tmp_path: Path, field: str) -> None:
    record = _base()
    del record[field]
    file = tmp_path / "run.json"
    file.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(MalformedReport) as info:
        collectors.collect(file)
    assert (info.value.row, info.value.field) == (None, field)
    assert info.value.reason == "Field required"


def test_a_digest_is_still_no_record(tmp_path: Path) -> None:
    """A digest's JSON has ``device`` and ``kernels`` keys too, but none of a RunRecord's own."""
    file = tmp_path / "digest.json"
    file.write_bytes(GOLDEN_DIGEST.read_bytes())
    with pytest.raises(UnknownFormat):
        collectors.collect(file)
