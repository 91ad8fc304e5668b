"""A corrected datasheet figure: earlier runs re-read on today's roof (``rules.roofchange``).

Before, a baseline run placed on H100 dram 3.35 TB/s was compared as stored with a run on
the corrected 6.7 TB/s: every unchanged memory-bound kernel read as a 50% drop.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from rules import (
    ClockedRoof,
    Datasheet,
    Roof,
    at_report_clocks,
    builtin_catalog,
    change_note,
    reread_history,
    reread_roof,
)
from tests.factories import make_kernel, make_run

H100 = builtin_catalog().lookup("H100-SXM5")
CORRECTED = (
    builtin_catalog()
    .with_overrides({"H100-SXM5": {"bandwidth_byte_per_s": {"dram": 6.7e12}}})
    .lookup("H100-SXM5")
)
SHEET = Datasheet(CORRECTED.roof(), sm_clocked=True, memory_clocked=False)


def _at_clock(spec, sm_clock_hz: float | None) -> Roof:
    kernel = make_kernel("gemv", sm_clock_hz=sm_clock_hz) if sm_clock_hz else make_kernel()
    roof, _ = at_report_clocks(spec, make_run(kernels=[kernel]))
    return roof


def test_a_corrected_dram_figure_is_named_and_the_roof_re_read() -> None:
    reread = reread_roof(H100.roof(), CORRECTED.roof(), SHEET)
    assert reread is not None
    assert [(c.name, c.before, c.after) for c in reread.changes] == [("dram", 3.35e12, 6.7e12)]
    assert reread.today.bandwidth_byte_per_s == CORRECTED.roof().bandwidth_byte_per_s
    assert reread.today.peak_flop_per_s == H100.roof().peak_flop_per_s
    note = change_note("H100-SXM5", [reread])
    assert note == (
        "H100-SXM5 roof changed since the baseline: dram 3.35 → 6.70 TB/s; "
        "earlier runs re-read on today's roof"
    )


def test_a_run_keeps_its_own_clocks_on_the_corrected_figures() -> None:
    """Scaled to 1.59 GHz then, judged today at 1.75 GHz: re-read at 1.59 GHz, new dram."""
    stored, today = _at_clock(H100, 1.59e9), _at_clock(CORRECTED, 1.75e9)
    reread = reread_roof(stored, today, SHEET)
    assert reread is not None and [c.name for c in reread.changes] == ["dram"]
    expected = _at_clock(CORRECTED, 1.59e9)  # that run placed on today's catalog
    for name, peak in expected.peak_flop_per_s.items():
        assert reread.today.peak_flop_per_s[name] == pytest.approx(peak, rel=1e-9)
    for tier, bandwidth in expected.bandwidth_byte_per_s.items():
        assert reread.today.bandwidth_byte_per_s[tier] == pytest.approx(bandwidth, rel=1e-9)


def test_other_clocks_on_the_same_figures_are_no_change() -> None:
    stored, today = _at_clock(CORRECTED, 1.59e9), _at_clock(CORRECTED, 1.75e9)
    assert stored != today
    assert reread_roof(stored, today, SHEET) is None
    assert reread_roof(CORRECTED.roof(), CORRECTED.roof(), SHEET) is None


@pytest.mark.parametrize("source", ["report", "measured", "custom"])
def test_a_measured_roof_is_never_re_read(source) -> None:
    stored = replace(H100.roof(), source=source)
    assert reread_roof(stored, CORRECTED.roof(), SHEET) is None


def _frame(run_id: int, time_s: float, percent: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": [run_id],
            "kernel_key": ["gemv"],
            "time_s": [time_s],
            "percent_of_roof": [percent],
            "regime": ["memory-bound"],
            "binding": ["dram"],
            "peak_flop_time_s": [2e10 / 989.4e12],
        }
    )


def _work(run_id: int, t_roof_s: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": [run_id],
            "kernel_key": ["gemv"],
            "flops": [{"tensor_bf16": 2e10}],
            "bytes_dram": [4e9],
            "bytes_l2": [float("nan")],
            "bytes_l1": [None],
            "total_flops": [2e10],
            "peak_flop_time_s": [2e10 / 989.4e12],  # its bf16 FLOPs on the datasheet peak
            "binding": ["dram"],
            "t_roof_s": [t_roof_s],
        }
    )


def test_percent_of_roof_is_100_t_roof_over_t_on_the_new_figures() -> None:
    """rules/README.md: ``100 * T_roof / T``, T_roof from the run's own work on today's roof."""
    time_s = 1.5e-3
    reread = reread_roof(H100.roof(), CORRECTED.roof(), SHEET)
    assert reread is not None
    frame = _frame(1, time_s, 100 * (4e9 / 3.35e12) / time_s)
    out = reread_history(frame, _work(1, 4e9 / 3.35e12), {1: reread})
    assert out["percent_of_roof"].iloc[0] == pytest.approx(100 * (4e9 / 6.7e12) / time_s)
    assert (out["regime"].iloc[0], out["binding"].iloc[0]) == ("memory-bound", "dram")
    assert frame["percent_of_roof"].iloc[0] == pytest.approx(79.6, abs=0.1)  # not in place


def test_binding_and_regime_come_from_the_new_roof() -> None:
    """4 GB of dram at 67 TB/s is 60 µs: below 20 GFLOP of bf16's 20 µs no more."""
    fast = replace(CORRECTED.roof(), bandwidth_byte_per_s={"dram": 400e12})
    sheet = Datasheet(fast, sm_clocked=True, memory_clocked=False)
    reread = reread_roof(H100.roof(), fast, sheet)
    assert reread is not None
    out = reread_history(_frame(3, 1e-3, 11.9), _work(3, 4e9 / 3.35e12), {3: reread})
    assert (out["regime"].iloc[0], out["binding"].iloc[0]) == ("compute-bound", "tensor_bf16")
    assert out["percent_of_roof"].iloc[0] == pytest.approx(100 * (2e10 / 989.4e12) / 1e-3)


def test_a_clocked_roofs_unclocked_kernels_stay_on_its_datasheet_roof() -> None:
    """A Kineto trace's kernels beside an ncu report's were placed on the roof as it is."""
    scaled = _at_clock(H100, 1.59e9)
    stored = ClockedRoof(**vars(scaled), unscaled=H100.roof())
    today = ClockedRoof(**vars(_at_clock(CORRECTED, 1.59e9)), unscaled=CORRECTED.roof())
    reread = reread_roof(stored, today, SHEET)
    assert reread is not None and isinstance(reread.today, ClockedRoof)
    assert reread.today.unscaled.bandwidth_byte_per_s["dram"] == 6.7e12
    out = reread_history(_frame(2, 1e-3, 0.0), _work(2, 4e9 / 3.35e12), {2: reread})
    assert out["percent_of_roof"].iloc[0] == pytest.approx(100 * (4e9 / 6.7e12) / 1e-3)


def test_runs_not_re_read_keep_their_figures() -> None:
    frame = _frame(4, 1e-3, 42.0)
    assert reread_history(frame, _work(4, 1.0), {}) is frame
    reread = reread_roof(H100.roof(), CORRECTED.roof(), SHEET)
    assert reread is not None
    assert reread_history(frame, _work(4, 1.0), {5: reread})["percent_of_roof"].iloc[0] == 42.0


RTX4090 = builtin_catalog().lookup("RTX-4090")


def _at_memory_clock(spec, share: float) -> Roof:
    """``spec``'s roof scaled to a report whose memory clock is ``share`` of the nominal one."""
    kernel = make_kernel("copy", memory_clock_hz=share * spec.memory_clock_hz)
    roof, _ = at_report_clocks(spec, make_run(kernels=[kernel]))
    return roof


def test_a_memory_clock_of_its_own_is_no_corrected_figure() -> None:
    """An RTX 4090 run 3% below its nominal memory clock: no change, nothing re-read."""
    stored, today = _at_memory_clock(RTX4090, 0.97), _at_memory_clock(RTX4090, 1.0)
    assert stored.bandwidth_byte_per_s["dram"] < today.bandwidth_byte_per_s["dram"]
    sheet = Datasheet(RTX4090.roof(), sm_clocked=True, memory_clocked=True)
    assert reread_roof(stored, today, sheet) is None


def test_dram_set_by_the_config_on_a_memory_clocked_card_is_a_change() -> None:
    corrected = (
        builtin_catalog()
        .with_overrides({"RTX-4090": {"bandwidth_byte_per_s": {"dram": 1.2e12}}})
        .lookup("RTX-4090")
    )
    stored, today = _at_memory_clock(RTX4090, 1.0), _at_memory_clock(corrected, 1.0)
    sheet = Datasheet(corrected.roof(), sm_clocked=True, memory_clocked=True)
    reread = reread_roof(stored, today, sheet)
    assert reread is not None and [c.name for c in reread.changes] == ["dram"]
    assert reread.changes[0].after == pytest.approx(1.2e12)
