import math
from datetime import datetime

import pytest
from pydantic import ValidationError

from collectors.schema import DeviceInfo, KernelRecord, ProfilerInfo, RunRecord, run_json_schema


def kernel(**kw):
    base = {"name": "gemv", "key": "gemv", "duration_s": 1e-3}
    return KernelRecord(**{**base, **kw})


def run(**kw):
    base = {"device": DeviceInfo(name="NVIDIA H100 80GB HBM3"), "profiler": ProfilerInfo(tool="x")}
    return RunRecord(**{**base, **kw})


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, -math.inf])
def test_duration_rejects_negative_and_non_finite(bad):
    with pytest.raises(ValidationError) as err:
        kernel(duration_s=bad)
    assert err.value.errors()[0]["loc"] == ("duration_s",)


@pytest.mark.parametrize("field", ["flops", "bytes"])
def test_counters_reject_nan_and_name_the_entry(field):
    key = "fp32" if field == "flops" else "dram"
    with pytest.raises(ValidationError) as err:
        kernel(**{field: {key: math.nan}})
    loc = err.value.errors()[0]["loc"]
    assert loc[:2] == (field, key)
    assert "finite" in err.value.errors()[0]["msg"]


def test_unknown_precision_is_rejected():
    with pytest.raises(ValidationError) as err:
        kernel(flops={"fp17": 1.0})
    assert err.value.errors()[0]["loc"][0] == "flops"


def test_models_are_frozen_and_forbid_extra_fields():
    k = kernel()
    with pytest.raises(ValidationError):
        k.duration_s = 2.0  # type: ignore[misc]
    with pytest.raises(ValidationError):
        kernel(durration_s=1.0)


def test_duplicate_kernel_keys_are_rejected():
    with pytest.raises(ValidationError, match="duplicate kernel key 'gemv'"):
        run(kernels=(kernel(), kernel()))


def test_naive_timestamp_is_taken_as_utc():
    r = RunRecord.model_validate_json(
        run(timestamp=datetime(2026, 1, 2, 3, 4, 5)).model_dump_json()
    )
    assert r.timestamp.utcoffset().total_seconds() == 0


def test_json_round_trip_is_exact():
    r = run(kernels=(kernel(flops={"tensor_bf16": 2e12}, bytes={"dram": 4e9}, samples_s=(1e-3,)),))
    assert RunRecord.model_validate_json(r.model_dump_json()) == r


def test_work_prefers_measured_then_declared():
    k = kernel(flops={"fp32": 1.0}, declared_flops={"fp32": 2.0}, declared_bytes={"dram": 8.0})
    flops, nbytes = k.work()
    assert flops == {"fp32": 1.0} and nbytes == {"dram": 8.0}
    assert k.work(prefer_declared=True)[0] == {"fp32": 2.0}


def test_json_schema_documents_every_field():
    schema = run_json_schema()
    kernel_props = schema["$defs"]["KernelRecord"]["properties"]
    assert {"duration_s", "flops", "bytes", "samples_s", "provenance"} <= set(kernel_props)
    assert schema["properties"]["kind"]["$ref"].endswith("RunKind")
