"""A fusion restored on a PR is no drop of the dram roof its kernel left.

Main broke an MLP's fusion: memory-bound at 80% of the dram roof, 307 ms. The PR restores it:
compute-bound at 70% of fp32, 73 ms. Like for like against the dram roof it no longer needs it
read 3.4%, and roof-drop failed the fix.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from factories import make_kernel, make_run

from rules import RuleContext, builtin_catalog, evaluate
from rules.frames import history_from_runs

START = datetime(2026, 11, 1, 2, tzinfo=UTC)
FLOPS = 1e12
A100 = builtin_catalog().lookup("A100-SXM4-80GB").roof()
FP32, DRAM = A100.peak_flop_per_s["fp32"], A100.bandwidth_byte_per_s["dram"]
BROKEN = FLOPS / 2  # bytes of the broken fusion: 2 FLOP/B, memory-bound
BROKEN_S = BROKEN / DRAM / 0.80  # at 80% of the dram roof


def _mlp(nbytes: float, time_s: float, night: int, commit: str):
    kernel = make_kernel("mlp", flops={"fp32": FLOPS}, dram_bytes=nbytes, time_s=time_s)
    return make_run(
        commit=commit,
        timestamp=START + timedelta(days=night),
        kernels=[kernel],
        device="NVIDIA A100-SXM4-80GB",
    )


FUSED_S = FLOPS / FP32 / 0.70  # compute-bound at 70% of fp32


def _verdict(nbytes: float, time_s: float, fused_nights: int = 0):
    """A PR's verdict of the MLP against eight nights of the broken fusion.

    ``fused_nights``: nights of the fused MLP before them (main broke it, then kept it).
    """
    fused = [_mlp(FLOPS / 200, FUSED_S, n, f"f{n}") for n in range(fused_nights)]
    broken = [_mlp(BROKEN, BROKEN_S * (1 + 0.003 * n), fused_nights + n, f"m{n}") for n in range(8)]
    history = fused + broken
    ctx = RuleContext(
        run=_mlp(nbytes, time_s, len(history) + 1, "pr").model_copy(update={"kind": "pr"}),
        roof=A100,
        history=history_from_runs(history, A100),
    )
    return evaluate(ctx).verdict


def test_a_restored_fusion_is_a_regime_change_faster_not_a_roof_drop() -> None:
    verdict = _verdict(FLOPS / 200, FLOPS / FP32 / 0.70)
    found = {(f.rule, f.severity.value): f.message for f in verdict.findings}
    assert set(found) == {("regime-flip", "warn")}
    assert "memory-bound, now compute-bound" in found["regime-flip", "warn"]
    assert "(4.2× faster)" in found["regime-flip", "warn"]
    assert verdict.conclusion == "warn"


def test_a_kernel_on_its_own_binding_that_slows_is_still_a_drop() -> None:
    verdict = _verdict(BROKEN, BROKEN_S * 1.3)
    assert {f.rule for f in verdict.findings if f.severity.value in ("warn", "fail")} >= {
        "roof-drop"
    }


def test_a_restored_fusion_is_compared_with_main_since_it_broke_it() -> None:
    """Nine fused nights, then eight broken ones main kept: the PR that restores the fusion.

    The window's median mixed both: 73 ms (the fused nights') and 70.9% (of two roofs),
    the row read "73.5 → 72.4 ms (0.98×)" and the change −69.6 pts against the dram roof.
    """
    verdict = _verdict(FLOPS / 200, FUSED_S, fused_nights=9)
    (mlp,) = verdict.kernels
    base = mlp.baseline
    assert base is not None
    assert (base.n, base.used, base.binding) == (8, (9, 17), "dram")
    assert base.time_s == pytest.approx(BROKEN_S, rel=0.02)
    assert base.center == pytest.approx(80.0, rel=0.02)
    assert base.relative_change is None, "two roofs: no change in percent"
    assert mlp.percent_of_baseline_roof == mlp.percent_of_roof == pytest.approx(70.0)
    assert mlp.status == "improved"
    (flip,) = verdict.findings
    assert flip.rule == "regime-flip"
    assert "79.2% of the dram roof over 8 runs → 70.0% of the fp32 roof" in flip.message
    assert "(4.2× faster)" in flip.message
    assert flip.numbers["baseline_n"] == 8
    assert flip.numbers["baseline_percent_of_roof"] == base.center, "one figure, row and finding"


def test_the_sparkline_falls_where_main_broke_the_fusion() -> None:
    """A PR after nine fused nights and eight broken ones, itself broken like main.

    The fused nights moved 1/200 of the bytes: at their own work they read 3.3% of the dram
    roof, and the line rose where the kernel got 4x slower. At the PR's work, in their time,
    they read 80% x 307 / 73 ms.
    """
    (mlp,) = _verdict(BROKEN, BROKEN_S, fused_nights=9).kernels
    assert mlp.baseline is not None
    fused, broken = mlp.baseline.history[:9], mlp.baseline.history[9:]
    assert fused == pytest.approx([80.0 * BROKEN_S / FUSED_S] * 9)
    assert broken[0] == pytest.approx(80.0), "runs at the dram roof keep their own figure"
    assert min(fused) > 4 * max(broken)


def test_the_sparkline_of_a_restored_fusion_rises_back_on_its_own_roof() -> None:
    """The restoring PR's row reads 70% of fp32; main's broken nights there read 16.6%, not 80%.

    (Each run at its own roof drew 70, 80, 70: a fall where the PR made it 4.2x faster.)
    """
    (mlp,) = _verdict(FLOPS / 200, FUSED_S, fused_nights=9).kernels
    assert mlp.baseline is not None
    fused, broken = mlp.baseline.history[:9], mlp.baseline.history[9:]
    assert fused == pytest.approx([70.0] * 9)
    assert broken[0] == pytest.approx(70.0 * FUSED_S / BROKEN_S)
    assert max(broken) < mlp.percent_of_roof / 4


def test_a_fusion_slower_than_main_reads_at_mains_bytes_in_its_time() -> None:
    """A PR fuses the MLP (1/200 of the bytes, compute-bound) but runs 1.19x main's time.

    At its own bytes it read 0.7% of the dram roof, -99%, failing at once as "far beyond
    noise"; at main's bytes in its time it reads 80% / 1.19, the fall its time says.
    """
    verdict = _verdict(FLOPS / 200, BROKEN_S * 1.2)
    (mlp,) = verdict.kernels
    assert mlp.percent_of_baseline_roof == pytest.approx(100 * BROKEN / DRAM / mlp.time_s)
    assert 60 < mlp.percent_of_baseline_roof < 70
    found = {f.rule: f for f in verdict.findings}
    assert found["roof-drop"].numbers["relative_change"] == pytest.approx(-0.158, abs=0.005)
    flip = found["regime-flip"]
    assert flip.numbers["percent_of_baseline_roof"] == mlp.percent_of_baseline_roof
    assert "→ 66.7% of the dram roof" in flip.message
