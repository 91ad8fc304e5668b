"""The verdict model: typed statuses and regimes, published as the strings they always were."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from rules.verdict import Finding, KernelStatus, KernelVerdict, Severity


def kernel(**changes: object) -> KernelVerdict:
    fields: dict[str, object] = {
        "key": "gemv",
        "name": "gemv",
        "time_s": 1e-3,
        "time_share": 1.0,
        "percent_of_roof": 80.0,
        "regime": "memory-bound",
        "binding": "dram",
    }
    return KernelVerdict.model_validate({**fields, **changes})


def test_a_status_is_the_enum_in_python_and_its_string_in_json() -> None:
    suspect = kernel(status="suspect")
    assert suspect.status is KernelStatus.SUSPECT
    assert json.loads(suspect.model_dump_json())["status"] == "suspect"
    assert KernelVerdict.model_validate_json(suspect.model_dump_json()) == suspect
    assert kernel().status is KernelStatus.UNCHANGED


def test_an_unknown_status_or_regime_is_refused_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="status"):
        kernel(status="worse")
    with pytest.raises(ValidationError, match="regime"):
        kernel(regime="latency-bound")


def test_the_json_schema_still_says_string() -> None:
    # The OpenAPI document is a contract: typing the fields did not change what it publishes.
    properties = KernelVerdict.model_json_schema()["properties"]
    assert properties["status"] == {"default": "unchanged", "title": "Status", "type": "string"}
    assert properties["regime"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "title": "Regime",
    }


def finding(numbers: dict[str, float | str | None]) -> Finding:
    return Finding(rule="r", kernel="k", severity=Severity.WARN, message="m", numbers=numbers)


def test_a_finding_reads_its_status_from_its_figures() -> None:
    assert finding({"status": "regressed"}).status is KernelStatus.REGRESSED
    assert finding({"z": 3.0}).status is None
    # A plugin's own "status" figure that is no kernel status sets none, as before.
    assert finding({"status": "ok"}).status is None
    assert finding({"status": 1.0}).status is None
