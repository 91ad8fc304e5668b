"""The verdict model: typed statuses and regimes, published as the strings they always were."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from pydantic import ValidationError

from rules.figures import GateFigures
from rules.stats import Judgement
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


def test_the_json_schema_publishes_the_statuses_and_regimes() -> None:
    # The OpenAPI document is a contract: still strings, now with the values a client may see.
    schema = KernelVerdict.model_json_schema()
    assert schema["properties"]["status"]["$ref"] == "#/$defs/KernelStatus"
    statuses = schema["$defs"]["KernelStatus"]
    assert statuses["type"] == "string"
    assert statuses["enum"] == [s.value for s in KernelStatus]
    regime = schema["properties"]["regime"]["anyOf"][0]
    assert regime == {"enum": ["memory-bound", "compute-bound"], "type": "string"}


def finding(numbers: dict[str, float | str | None]) -> Finding:
    return Finding(rule="r", kernel="k", severity=Severity.WARN, message="m", numbers=numbers)


def test_a_finding_reads_its_status_from_its_figures() -> None:
    assert finding({"status": "regressed"}).status is KernelStatus.REGRESSED
    assert finding({"z": 3.0}).status is None
    # A plugin's own "status" figure that is no kernel status sets none, as before.
    assert finding({"status": "ok"}).status is None
    assert finding({"status": 1.0}).status is None


def judgement(**changes: object) -> Judgement:
    fields: dict[str, Any] = {
        "regressed": True,
        "suspect": False,
        "improved": False,
        "level": 85.0,
        "relative_change": -0.155,
        "current": 71.9,
        "noise": 0.6,
        "z": -21.8,
        "z_threshold": 6.2,
        "n": 14,
        "segment_start": 3,
        "run": 1,
        "confirm_runs": 1,
        "enough": True,
    }
    return Judgement(**{**fields, **changes})


def test_the_gate_figures_are_written_and_read_back_under_their_keys() -> None:
    j = judgement(remeasured=(72.3, 72.0), remeasured_z=-20.1, confirm_threshold=4.5)
    figures = GateFigures.of(j, (71.9, 72.3, 72.0))
    numbers = figures.numbers()
    assert list(numbers)[:4] == ["current", "level", "baseline_center", "baseline_n"]
    assert numbers["baseline_center"] == numbers["level"] == 85.0
    assert (numbers["remeasured_1"], numbers["remeasured_2"]) == (72.3, 72.0)
    stored = finding({**numbers, "status": "regressed"}).model_dump_json()  # as the store keeps it
    assert Finding.model_validate_json(stored).gate == figures
    assert figures.n == 14 and figures.remeasured == (72.3, 72.0)


def test_untested_remeasurements_leave_out_their_z() -> None:
    figures = GateFigures.of(judgement(), (71.9, 71.5))  # measured again, no suspect to test
    assert figures.remeasured_z is None and "remeasured_z" not in figures.numbers()
    assert finding(figures.numbers()).gate == figures


def test_a_nan_the_store_wrote_as_null_reads_back_as_nan() -> None:
    numbers = GateFigures.of(judgement(z=math.nan), (71.9,)).numbers()
    loaded = Finding.model_validate_json(finding(numbers).model_dump_json())
    assert loaded.numbers["z"] is None and loaded.gate is not None and math.isnan(loaded.gate.z)


def test_findings_stored_before_the_gate_have_no_gate_figures_but_their_measure() -> None:
    # roof-drop's group finding as versions before the gate stored it (compare_to_baseline).
    older = {
        "measure": "mfu",
        "current": 0.05,
        "baseline_center": 0.72,
        "baseline_spread": 0.01,
        "baseline_n": 14.0,
        "noise_used": 0.01,
        "relative_change": -0.93,
        "z": -60.0,
        "z_threshold": 4.0,
        "min_effect": 0.02,
        "current_samples": 1.0,
        "method": "robust z",
        "status": "regressed",
    }
    loaded = Finding.model_validate_json(finding(older).model_dump_json())
    assert loaded.gate is None and loaded.measure == "mfu"
    assert loaded.status is KernelStatus.REGRESSED
    assert finding({"measure": 1.0}).measure is None


def test_an_unbounded_intensity_written_as_null_reads_back_as_inf() -> None:
    """A kernel with no DRAM bytes: its verdict JSON was refused by `comment --verdict`."""
    copy_free = kernel(intensity={"dram": math.inf, "l2": 4.0})
    written = copy_free.model_dump_json()
    assert json.loads(written)["intensity"] == {"dram": None, "l2": 4.0}
    assert KernelVerdict.model_validate_json(written).intensity == {"dram": math.inf, "l2": 4.0}
