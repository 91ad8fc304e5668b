"""One rule says which of a ``ClockedRoof``'s roofs a stored row was placed on, for all callers.

A level on another card and like for like asked ``placed_roof`` of one row (by its ``T_roof``
and its effective peak); a corrected datasheet figure's re-read chose for a chunk of rows by
the ``T_roof`` alone. A clockless kernel of a mixed run, memory-bound on both roofs, has one
``T_roof`` on both: the re-read put it on the scaled roof, 69.4% of the corrected roof where
it is 55.7%. Both now ask ``rules.placedroof`` and read it on its datasheet roof.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from collectors.schema import SourceRef
from rules import (
    ClockedRoof,
    Datasheet,
    DeviceLevel,
    Roof,
    at_report_clocks,
    builtin_catalog,
    forecast,
    level_roofs,
    place,
    reread_history,
    reread_roof,
    scale,
)
from rules.placedroof import StoredRows, misfit, on_datasheet, placed_roof
from rules.scaling import MissingResource, Work
from tests.factories import make_kernel, make_run

H100 = builtin_catalog().lookup("H100-SXM5")
CORRECTED = (
    builtin_catalog()
    .with_overrides({"H100-SXM5": {"bandwidth_byte_per_s": {"dram": 6.7e12}}})
    .lookup("H100-SXM5")
)
SHEET = Datasheet(CORRECTED.roof(), sm_clocked=True, memory_clocked=False)
TRACE = SourceRef(path="/ci/trace.json", format="kineto-trace")
NCU = SourceRef(path="/ci/profile.ncu-rep", format="ncu-rep")
#: bf16 FLOPs whose datasheet time is 70% of 4 GB at 3.35 TB/s: memory-bound on both roofs
#: (87% at the 0.803 SM clock), compute-bound on both once dram reads 6.7 TB/s.
FLOPS, NBYTES, SECONDS = 0.7 * 4e9 / 3.35e12 * 989.4e12, 4e9, 1.5e-3


def _mixed(spec) -> ClockedRoof:
    """``spec``'s roof for a run of an ncu report at 1.59 GHz beside a trace of no clock."""
    trace = make_kernel("attn", source=TRACE)
    ncu = make_kernel("norm", sm_clock_hz=1.59e9, source=NCU)
    roof, _ = at_report_clocks(spec, make_run(kernels=[trace, ncu]))
    assert isinstance(roof, ClockedRoof)
    return roof


def _stored_trace_row(then: ClockedRoof) -> pd.DataFrame:
    """The trace kernel's stored work, placed on the datasheet roof as the run placed it."""
    placed = place({"tensor_bf16": FLOPS}, {"dram": NBYTES}, SECONDS, then.unscaled)
    assert placed.t_roof_s == place({"tensor_bf16": FLOPS}, {"dram": NBYTES}, None, then).t_roof_s
    return pd.DataFrame(
        {
            "run_id": [1],
            "kernel_key": ["attn"],
            "flops": [{"tensor_bf16": FLOPS}],
            "bytes_dram": [NBYTES],
            "bytes_l2": [math.nan],
            "bytes_l1": [math.nan],
            "total_flops": [placed.total_flops],
            "peak_flop_time_s": [placed.peak_flop_time_s],
            "binding": [placed.binding],
            "t_roof_s": [placed.t_roof_s],
        }
    )


def test_a_re_read_puts_a_clockless_row_on_the_roof_placed_roof_names() -> None:
    """Its ``T_roof`` is alike on both roofs; its effective peak is the datasheet's."""
    then, today = _mixed(H100), _mixed(CORRECTED)
    reread = reread_roof(then, today, SHEET)
    assert reread is not None
    work = _stored_trace_row(then)
    row = work.iloc[0]
    stored = Work(row["total_flops"], {"dram": NBYTES}, row["peak_flop_time_s"], row["binding"])
    assert placed_roof(then, stored, row["t_roof_s"]) is then.unscaled
    frame = pd.DataFrame(
        {"run_id": [1], "kernel_key": ["attn"], "time_s": [SECONDS], "percent_of_roof": [0.0]}
    )
    out = reread_history(frame, work, {1: reread})
    on_sheet = place({"tensor_bf16": FLOPS}, {"dram": NBYTES}, SECONDS, today.unscaled)
    assert out["percent_of_roof"].iloc[0] == on_sheet.percent_of_roof == pytest.approx(55.72, 1e-4)


def _old_misfit(work: Work, t_roof_s: float | None, roof: Roof) -> float:
    """``placed_roof``'s misfit of one row as it was written (``rules.scaling`` at 6cd68b4)."""
    misfit = 0.0
    tiers = {t for t, v in roof.bandwidth_byte_per_s.items() if v > 0}
    precision = work.precision(roof)
    terms = [work.flops / roof.peak_flop_per_s[precision]] if precision and work.flops else []
    terms += [b / roof.bandwidth_byte_per_s[t] for t, b in work.nbytes.items() if t in tiers]
    estimate = max(terms) if terms else None
    if estimate and t_roof_s and t_roof_s > 0:
        misfit += abs(math.log(estimate / t_roof_s))
    peaks = [p for p in roof.peak_flop_per_s.values() if p > 0]
    effective = work.flops / work.peak_flop_time_s if work.flops and work.peak_flop_time_s else 0
    if peaks and math.isfinite(effective) and effective > 0:
        misfit += min(abs(math.log(p / effective)) for p in peaks)
    return misfit


def _rows(rng: np.random.Generator, then: ClockedRoof, size: int) -> list[tuple[Work, float]]:
    """Rows placed on either roof, their figures jittered; effective peaks near, and off, peaks."""
    names = sorted(then.peak_flop_per_s)
    rows = []
    for _ in range(size):
        on = then.unscaled if rng.random() < 0.5 else then
        flops = {str(rng.choice(names)): float(10 ** rng.uniform(8, 13))}
        nbytes = {t: float(10 ** rng.uniform(6, 10)) for t in ("dram", "l2") if rng.random() < 0.7}
        placed = place(flops, nbytes, None, on)
        jitter = float(rng.choice([1.0, 1.0, rng.uniform(0.96, 1.04), rng.uniform(0.5, 2)]))
        pft = None if placed.peak_flop_time_s is None else placed.peak_flop_time_s * jitter
        binding = str(rng.choice([placed.binding or "dram", "dram", "fp32", "tensor_int4"]))
        t_roof = (placed.t_roof_s or 1e-3) * float(rng.uniform(0.9, 1.1))
        rows.append((Work(placed.total_flops or None, nbytes, pft, binding), t_roof))
    return rows


@pytest.mark.parametrize("seed", range(4))
def test_the_array_rule_reads_each_row_as_the_one_row_rule_did(seed: int) -> None:
    """``placed_roof`` of one row, and of many at once, choose as its scalar misfit chose."""
    rng = np.random.default_rng(seed)
    then = _mixed(H100)
    if seed % 2:  # a memory clock too: no tier alike on both roofs
        bandwidth = then.bandwidth_byte_per_s
        then = replace(then, bandwidth_byte_per_s=bandwidth | {"dram": 0.9 * bandwidth["dram"]})
    rows = _rows(rng, then, 400)
    old = [_old_misfit(w, t, then.unscaled) < _old_misfit(w, t, then) for w, t in rows]
    assert 0.2 * len(rows) < sum(old) < 0.8 * len(rows)
    assert [placed_roof(then, w, t) is then.unscaled for w, t in rows] == old
    together = _together(rows)
    assert on_datasheet(then, together).tolist() == old
    expected = [_old_misfit(w, t, then) for w, t in rows]
    assert misfit(together, then) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def _together(rows: list[tuple[Work, float]]) -> StoredRows:
    """``rows`` as one ``StoredRows``, unknown figures NaN."""

    def column(values: list[float | None]) -> np.ndarray:
        return np.array([math.nan if v is None else v for v in values], dtype=float)

    return StoredRows(
        column([w.flops for w, _ in rows]),
        {t: column([w.nbytes.get(t) for w, _ in rows]) for t in ("dram", "l2")},
        column([w.peak_flop_time_s for w, _ in rows]),
        np.array([w.binding for w, _ in rows], dtype=object),
        column([t for _, t in rows]),
    )


def _levels(rows: list[tuple[Work, float]]) -> list[DeviceLevel]:
    """``rows`` as one card's levels: each one's ``T_roof`` from its percent and median time."""
    return [
        DeviceLevel(f"k{i}", f"k{i}", "H100-SXM5", 60.0, 1.0, 0.2, 20, 20, t / 0.6, work)
        for i, (work, t) in enumerate(rows)
    ]


@pytest.mark.parametrize("seed", range(4))
def test_a_card_s_levels_get_at_once_the_roofs_each_one_got_alone(seed: int) -> None:
    """``level_roofs`` and the ``placed`` it passes give ``roof_on``'s roofs and predictions."""
    rng = np.random.default_rng(seed)
    then = _mixed(H100)
    if seed % 2:
        bandwidth = then.bandwidth_byte_per_s
        then = replace(then, bandwidth_byte_per_s=bandwidth | {"dram": 0.9 * bandwidth["dram"]})
    levels = _levels(_rows(rng, then, 300))
    own = level_roofs(levels, then)
    alone = [level.roof_on(then) for level in levels]
    assert [own[level.key] for level in levels] == alone
    assert 0.2 * len(levels) < sum(r is then.unscaled for r in alone) < 0.8 * len(levels)
    target = builtin_catalog().lookup("B200").roof()
    for level in levels:
        times = [level.time_s * float(rng.uniform(0.3, 0.9))]
        placed = own[level.key]
        assert scale(level, then, target, times, placed=placed) == scale(level, then, target, times)
        try:
            ahead = forecast(level, then, target)
        except MissingResource:
            with pytest.raises(MissingResource):
                forecast(level, then, target, placed=placed)
            continue
        assert forecast(level, then, target, placed=placed) == ahead
    assert level_roofs([], then) == {}
    plain = then.unscaled
    assert level_roofs(levels[:3], plain) == {level.key: plain for level in levels[:3]}
