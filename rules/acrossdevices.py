"""The verdict across a device change: rows and a headline that name the other card.

A kernel with too little history on the run's card and a level on another
(``RuleContext.device_scaling``) is judged in percent of roof against that card's history:
its row's baseline is the other card's level (``BaselineSummary.device`` names it), its
``percent_of_baseline_roof`` the percent of the roof the baseline's work has on this card,
with the measured ``time_ratio`` and the ``expected_time_ratio`` the two roofs predict. The
run's baseline names the device the run was judged against: the other card while this one
has fewer than ``OWN_RUNS_SETTLED`` runs, with the GPU time of the kernels judged across.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from rules.context import RuleContext
from rules.crossdevice import Scaling
from rules.gated import GateDecision, GateDecisions
from rules.newcard import scaled_runs
from rules.scaling import OWN_RUNS_SETTLED
from rules.summary import SPARKLINE_POINTS, segment_in_sparkline
from rules.verdict import BaselineSummary, RunBaseline, Verdict


def scaled_summary(scaled: Scaling, gated: GateDecision | None = None) -> BaselineSummary:
    """A kernel's baseline on another card, scaled to this one, as the verdict's rows show it.

    Its figures are what it was judged against: the other card's level (device-scaling), or,
    once the gate judges it on its nights here (``gated``, ``rules.newcard``), the gate's level
    of those, with its noise, runs and change. ``device_level`` keeps the other card's own.
    """
    level = scaled.baseline
    own = BaselineSummary(
        n=level.n,
        center=level.percent,
        spread=level.noise,
        commits=level.commits,
        time_s=level.time_s,
        binding=scaled.prediction.source_binding,
        device=level.device,
    )
    fields: dict[str, Any] = {
        "relative_change": scaled.relative_change,
        "history": level.history,
        "binding": scaled.binding,
        "scaled_to": scaled.device,
        "scaled_n": level.n,
        "device_level": own,
    }
    if gated is not None and gated.judgement.enough and math.isfinite(gated.judgement.level):
        fields |= _gated_fields(scaled, gated)
    return own.model_copy(update=fields)


def _gated_fields(scaled: Scaling, gated: GateDecision) -> dict[str, Any]:
    """The gate's figures of a kernel it judged on its nights here, its history as it read it."""
    j, values = gated.judgement, gated.measured.history
    shown = values[np.isfinite(values)][-SPARKLINE_POINTS:]
    return {
        "n": j.n,
        "center": j.level,
        "spread": j.noise,
        "relative_change": j.relative_change,
        "history": tuple(float(v) for v in shown),
        "used": segment_in_sparkline(values, gated.rows(values)),
        "scaled_n": scaled_runs(scaled, j),
    }


def device_baseline(
    ctx: RuleContext, gate: GateDecisions, key: str
) -> tuple[BaselineSummary, bool] | None:
    """``key``'s baseline on another card and whether it improved (never: see the rule).

    None when the kernel is judged on its own card.
    """
    scaled = ctx.device_scaling.get(key)
    if scaled is None:
        return None
    return scaled_summary(scaled, gate.get("percent_of_roof", key)), False


def device_fields(ctx: RuleContext, key: str) -> dict[str, Any]:
    """The ``KernelVerdict`` fields of a kernel judged across cards (empty otherwise)."""
    scaled = ctx.device_scaling.get(key)
    if scaled is None:
        return {}
    return {
        "percent_of_baseline_roof": scaled.percent,
        "time_ratio": scaled.time_ratio,
        "expected_time_ratio": scaled.expected_time_ratio,
    }


def _commit_range(frame: pd.DataFrame) -> tuple[str, ...]:
    ordered = frame.sort_values("timestamp", kind="stable")
    commits = [str(c) for c in ordered["commit"] if isinstance(c, str) and c]
    return (commits[0], commits[-1]) if commits else ()


def _own_runs(ctx: RuleContext) -> int:
    frame = ctx.comparable_gate_history
    return int(frame["run_id"].nunique()) if len(frame) else 0


def _ridge_moved(scaled: Iterable[Scaling], old: str, new: str) -> list[str]:
    """One note when the same work binds another resource on the new card for some kernels.

    A bf16 attention kernel at intensity 200 is compute-bound on an A100 (ridge 153) and
    memory-bound on an H100 (ridge 295): its fix changes with the card, and only its
    device-scaling finding (when it did not keep up) said so.
    """
    moved = Counter(
        (s.prediction.source_binding, s.prediction.target_binding)
        for s in scaled
        if s.prediction.source_binding != s.prediction.target_binding
    )
    if not moved:
        return []
    pairs = "; ".join(f"{n} {before} → {after}" for (before, after), n in moved.most_common())
    return [
        f"the ridge moved for {moved.total()} of them: the same work binds another resource "
        f"on {new} than on {old} ({pairs}), and with it what to tune"
    ]


def across_devices(ctx: RuleContext, verdict: Verdict) -> Verdict:
    """``verdict`` naming the device of its baseline, and the other card's when judged so."""
    scaled = ctx.device_scaling
    other = ctx.cross_device
    if not scaled or other is None:
        if verdict.baseline is None:
            return verdict
        own = verdict.baseline.model_copy(update={"device": ctx.roof.device})
        return verdict.model_copy(update={"baseline": own})
    before = sum(s.baseline.time_s for s in scaled.values())
    now = sum(s.time_s for s in scaled.values())
    expected = sum(s.baseline.time_s * s.expected_time_ratio for s in scaled.values())
    note = (
        f"{len(scaled)} kernel(s) judged against {other.device} history "
        f"({other.runs} runs) in percent of roof: {ctx.roof.device} has fewer than "
        f"{OWN_RUNS_SETTLED} base-branch runs of them; their times are shown beside the "
        "ratio the two roofs predict"
    )
    ridge = _ridge_moved(scaled.values(), other.device, ctx.roof.device)
    update: dict[str, Any] = {"notes": (*verdict.notes, note, *ridge, *other.notes)}
    if _own_runs(ctx) < OWN_RUNS_SETTLED:  # one device per run in the headline
        update |= {
            "baseline": RunBaseline(
                n=other.runs,
                runs=other.runs,
                time_s=before,
                commits=_commit_range(other.history),
                metric="time_s",
                device=other.device,
            ),
            "time_ratio": now / before,
            "expected_time_ratio": expected / before,
        }
    elif verdict.baseline is not None:
        update["baseline"] = verdict.baseline.model_copy(update={"device": ctx.roof.device})
    return verdict.model_copy(update=update)
