"""Plans, precision names and device identity: the parts of measuring that need no torch."""

from __future__ import annotations

import os

import pytest

from service.calibrate.device_info import cpu_identity, decode_throttle_reasons, nvml_snapshot
from service.calibrate.measure import QUICK_KS_CPU, make_plan, parse_precisions
from service.errors import BadInput


def test_precisions_default_per_device_and_are_validated():
    assert parse_precisions(None, "cpu") == ("fp32", "fp64")
    assert parse_precisions(None, "cuda") == ("fp32", "tf32", "bf16", "fp16", "fp8")
    assert parse_precisions(" BF16, fp8 ,bf16", "cuda") == ("bf16", "fp8")
    with pytest.raises(BadInput, match="--precisions: unknown int4"):
        parse_precisions("fp32,int4", "cuda")
    with pytest.raises(BadInput, match="empty list"):
        parse_precisions(",", "cuda")


def test_quick_plan_keeps_the_sizes_and_drops_points():
    full = make_plan("cuda", quick=False, precisions=("bf16",), sweep_impl="auto")
    quick = make_plan("cuda", quick=True, precisions=("bf16",), sweep_impl="auto")
    assert (quick.memory_elements, quick.matmul_n, quick.sweep_elements) == (
        full.memory_elements,
        full.matmul_n,
        full.sweep_elements,
    )
    assert set(quick.ks) < set(full.ks) and quick.reps < full.reps
    assert full.ks[0] == 1 and full.ks[-1] >= 256  # climbs the slope and reaches the plateau
    assert full.memory_elements * 4 >= 1 << 30  # 1 GiB arrays: beyond any GPU L2
    cpu = make_plan("cpu", quick=True, precisions=("fp32",), sweep_impl="eager")
    assert cpu.ks == QUICK_KS_CPU and cpu.memory_elements * 4 >= 64 << 20
    assert cpu.steps == 2 + 1 + len(QUICK_KS_CPU)


def test_throttle_reason_bits():
    assert decode_throttle_reasons(0) == ()
    assert decode_throttle_reasons(0x1 | 0x40) == ("gpu_idle", "hw_thermal_slowdown")
    assert decode_throttle_reasons(0x4 | 0x8 | 0x80) == (
        "sw_power_cap",
        "hw_slowdown",
        "hw_power_brake_slowdown",
    )


def test_cpu_identity_names_the_processor():
    identity = cpu_identity(threads=2, runtime="test")
    assert identity.kind == "cpu" and identity.name and identity.name != "unknown CPU"
    assert identity.cpu_cores == os.cpu_count()


def test_nvml_absent_or_without_a_gpu_is_a_note_not_a_crash():
    snapshot = nvml_snapshot(0)
    # On a GPU machine NVML answers with clocks; here it is absent or finds no device.
    assert "sm_clock_hz" in snapshot or snapshot["notes"][0].startswith(
        ("nvidia-ml-py not installed", "NVML unavailable", "NVML query failed")
    )
