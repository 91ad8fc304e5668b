"""rules/README.md walks one failure of the demo through the gate: its figures are the code's.

The history is the demo's 30 nights of ``verify_gemm_bf16<512, 14336, 4096>`` (percent of
roof, as ``roofguard demo`` stores them); the PR measures 4.768. Each figure the README quotes
is recomputed here and looked up in the README as written, so neither can drift alone.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rules.stats import (
    GateOptions,
    confirm_z,
    current_levels,
    judge_latest,
    judge_measurement,
    nightly_z,
    stage_z,
)
from rules.stats.gate import effective_df
from rules.stats.runs import each_z, evidence_scale

README = Path(__file__).resolve().parents[2] / "rules" / "README.md"
HISTORY = np.array(
    [
        *(72.0407346215581, 71.29846704081253, 73.09522279750067, 71.78460491497938),
        *(72.04244259285011, 72.58234737964604, 72.55678418889984, 70.98679090273701),
        *(72.36757154723692, 72.58494803524874, 71.3633515677164, 72.18384405898705),
        *(71.74456380243184, 72.33441008427741, 71.9526704772866, 66.3262454679308),
        *(71.33194108884896, 71.80305156408413, 71.98079346750637, 72.27763251351537),
        *(71.84952822888637, 72.07533683221662, 71.23056950891555, 72.2628076105908),
        *(72.38394815234945, 72.02750058942644, 71.72106840765667, 66.54776024635824),
        *(71.52565982809121, 71.71281692184053),
    ]
)
CURRENT = 4.7680977385510195
#: Kernels the demo's nightly runs judge with roof-drop.
NIGHTLY_KERNELS = 9


def quoted(text: str) -> None:
    """The README quotes ``text`` (figures use the true minus sign there)."""
    assert text.replace("-", "−") in README.read_text(encoding="utf-8"), text


def test_the_pr_finding_s_figures() -> None:
    (level,) = current_levels([HISTORY])
    single = judge_measurement(level, CURRENT, mode="single")
    assert single.regressed and level.start == 0 and level.n == 30
    quoted(f"**{level.level:.3f}**")
    quoted(f"`se = 1.093 / √n` = {level.se:.3f}")
    quoted(f"= **{level.noise:.3f}**")
    quoted(f"**{single.z:.1f}**")
    quoted(f"**{single.relative_change:.1%}**")
    assert single.z_threshold == pytest.approx(4.5)


def test_the_modes_of_the_pr_gate() -> None:
    (level,) = current_levels([HISTORY])
    assert judge_measurement(level, CURRENT, mode="screen").suspect
    confirmed = judge_measurement(level, CURRENT, [4.80], mode="confirm")
    assert confirmed.regressed and confirmed.confirm_threshold == pytest.approx(4.5)
    quoted(f"(z {confirmed.remeasured_z:.1f}, bar 4.5 for one suspect")
    cleared = judge_measurement(level, CURRENT, [71.8], mode="confirm")
    assert not (cleared.regressed or cleared.suspect)
    df = effective_df(GateOptions(), level.points)
    apart = stage_z(0.01 / 2, df) * level.noise * math.sqrt(2)
    quoted(f"= {stage_z(0.01 / 2, df):.2f} × {level.noise:.3f} × √2 = {apart:.1f} points")
    quoted(f"({df:.1f} from 30)")


def test_the_threshold_grows_with_the_family() -> None:
    assert confirm_z(GateOptions(family_size=8), 30) == pytest.approx(4.5)
    for family in (10, 20, 50):
        quoted(f"{family} give {confirm_z(GateOptions(family_size=family), 30):.2f}")
    quoted(f"# {nightly_z(GateOptions(family_size=2000), points=30, se=0.2):.2f}: 2,000 kernels")


def test_the_same_values_at_night() -> None:
    opts = GateOptions(family_size=NIGHTLY_KERNELS)
    first = judge_latest([*HISTORY, CURRENT], options=opts)
    second = judge_latest([*HISTORY, CURRENT, CURRENT], options=opts)
    assert first.suspect and not first.regressed and first.z_threshold == pytest.approx(3.5)
    assert second.regressed and second.run == 2
    quoted(f"(z {second.z:.1f}: the detector's noise")
    quoted(f"now holds night 1's jump, {second.noise:.3f})")
    (level,) = current_levels([HISTORY], options=opts)
    quoted(f"({each_z(opts, 2, level):.2f} here: 9 kernels, 3 lengths)")
    scales = [evidence_scale(p, 2, 4.0, 3.5) for p in (9, 15, 30, 60)]
    quoted(f"({scales[0]:.1f} at 9 nights, {scales[1]:.1f} at 15, {scales[2]:.2f} at 30")
    assert scales[3] == pytest.approx(1.0)
