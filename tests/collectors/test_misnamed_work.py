"""Work under a name that is no precision or tier (``flops_bf16``): said, with the likely name.

A harness that writes ``flops_bf16`` means tensor-core bf16 FLOPs. Dropping the counter in
silence left a GEMM unplaced ("no FLOP counters"), or placed on its bytes alone, with nothing
to say why; the roofguard CSV refused it without naming the known precisions.
"""

from __future__ import annotations

import json

import pytest

from collectors import collect
from collectors.errors import MalformedReport
from collectors.formats._micro import unread_work
from rules import builtin_catalog, place_kernel

H100 = builtin_catalog().lookup("H100-SXM5").roof()
GEMM = {"flops_bf16": 2 * 4096**3, "bytes_dram": 3 * 4096**2 * 2}


def _pytest_benchmark(tmp_path, extra):
    entry = {"name": "test_gemm", "stats": {"median": 2e-4}, "extra_info": extra}
    path = tmp_path / "pb.json"
    machine = {"gpu": "NVIDIA H100 80GB HBM3"}
    path.write_text(json.dumps({"machine_info": machine, "benchmarks": [entry]}))
    return path


def _gbench(tmp_path, counters):
    entry = {"name": "BM_gemm", "iterations": 10, "real_time": 200.0, "cpu_time": 1.0}
    entry |= {"time_unit": "us", **counters}
    path = tmp_path / "gb.json"
    path.write_text(
        json.dumps({"context": {"gpu": "NVIDIA H100 80GB HBM3"}, "benchmarks": [entry]})
    )
    return path


@pytest.mark.parametrize(
    ("counter", "meant"),
    [
        ("flops_bf16", "flops_tensor_bf16"),
        ("FLOPs_fp8", "flops_tensor_fp8"),
        ("flop_tf32", "flops_tensor_tf32"),
        ("bytes_hbm", "bytes_dram"),
        ("bytes_L2", "bytes_l2"),
    ],
)
def test_a_misnamed_counter_names_the_one_it_likely_meant(counter, meant):
    assert unread_work(counter).endswith(f"did you mean {meant}?")


@pytest.mark.parametrize("counter", ["bytes_per_second", "flops_tensor_bf16", "bytes_dram", "M"])
def test_rates_known_slots_and_other_counters_are_not_reported(counter):
    assert unread_work(counter) is None


def test_a_name_like_no_slot_lists_the_known_ones():
    assert "(known: fp64, fp32, fp16, tensor_fp64" in unread_work("flops_xyz")


@pytest.mark.parametrize("write", [_pytest_benchmark, _gbench])
def test_the_placement_says_why_the_flops_are_missing(write, tmp_path):
    (kernel,) = collect(write(tmp_path, GEMM)).kernels
    assert kernel.flops == {} and kernel.bytes == {"dram": GEMM["bytes_dram"]}
    placement = place_kernel(kernel, H100)
    assert placement.regime is None  # no FLOPs: not placed as memory-bound on its bytes alone
    assert "flops_bf16 not read" in placement.missing[0]
    assert placement.missing[0].endswith("did you mean flops_tensor_bf16?")


def test_a_well_named_run_places_as_before(tmp_path):
    extra = {"flops_tensor_bf16": GEMM["flops_bf16"], "bytes_dram": GEMM["bytes_dram"]}
    (kernel,) = collect(_pytest_benchmark(tmp_path, extra)).kernels
    placement = place_kernel(kernel, H100)
    assert (placement.regime, placement.missing) == ("compute-bound", ())


def test_the_flat_csv_refuses_the_column_and_names_the_precision_meant(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("name,duration_s,flops_bf16\ngemm,2e-4,1.4e11\n")
    with pytest.raises(MalformedReport) as err:
        collect(path)
    assert (err.value.row, err.value.field) == ("1", "flops_bf16")
    assert str(err.value).endswith("'bf16' is no precision; did you mean flops_tensor_bf16?")
