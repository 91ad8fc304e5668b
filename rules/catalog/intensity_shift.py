"""``intensity-shift``: bytes per FLOP moved versus the baseline, even if time did not."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from rules.advice import Advice
from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.history import SETTLED_RUNS, FloatArray
from rules.measures import comparison_numbers, signed_percent
from rules.screening import may_change
from rules.stats import CompareOptions, compare_to_baseline
from rules.verdict import Finding, Severity, Stability


class IntensityShift(Rule):
    """Bytes per FLOP changed versus baseline even if time did not.

    **Anti-pattern**

    | kernel | baseline intensity (dram, n=14) | current | time change |
    |---|---|---|---|
    | `attn_softmax` | 12.1 FLOP/B ± 0.1 | 7.9 FLOP/B | +0.4% |

    DRAM arithmetic intensity (total FLOPs over DRAM bytes) fell beyond the baseline's noise
    and by at least ``min_effect``. Counters are far less noisy than times, so this is the
    early warning of lost fusion or reuse, before the time shows it (e.g. while the kernel
    still fits in L2 on the CI shapes).

    **Best practice**

    Find the extra bytes: a fusion that no longer happens, a tile that no longer fits, a
    dtype that widened. Cut bytes moved (fusion, quantisation, reuse in shared memory).
    """

    id = "intensity-shift"
    group = "roofline"
    default_severity = Severity.WARN
    stability = Stability.PREVIEW
    compares_to_baseline = True

    class Options(RuleOptions, CompareOptions):
        """Thresholds (see ``rules.stats.CompareOptions``); counters are quiet, so 10%."""

        min_effect: float = 0.10
        report_increase: bool = False

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """A finding per kernel whose DRAM intensity moved beyond noise.

        Every kernel is screened at once (``rules.screening``); the few the screen keeps are
        compared one by one, so the findings are exactly those of comparing every kernel.
        """
        currents = {
            key: current
            for key, placement in ctx.placements.items()
            if (current := placement.intensity.get("dram")) is not None
            and not math.isinf(current)
            and current > 0
        }
        known = [_known_intensity(ctx, key) for key in currents]
        histories = kept_levels(known, opts.min_effect)
        kept = may_change(histories, list(currents.values()), opts)
        for (key, current), history, keep in zip(currents.items(), histories, kept, strict=True):
            if not keep:
                continue
            cmp = compare_to_baseline(history, current, options=opts)
            if cmp.regressed or (opts.report_increase and cmp.improved):
                yield self.finding(
                    ctx,
                    key,
                    f"{ctx.kernels[key].name}: DRAM intensity {cmp.current:.3g} FLOP/B, baseline "
                    f"{cmp.center:.3g} ± {cmp.spread:.2g} ({signed_percent(cmp.relative_change)})",
                    severity=None if cmp.regressed else Severity.INFO,
                    advice=Advice.CUT_BYTES if cmp.regressed else None,
                    numbers=comparison_numbers(cmp, opts),
                )


def _known_intensity(ctx: RuleContext, key: str) -> FloatArray:
    """``key``'s baseline DRAM intensity per run, the unknown runs left out."""
    history = ctx.kernel_history(key).dram_intensity()
    known: FloatArray = history[~np.isnan(history)]
    return known


def kept_levels(histories: list[FloatArray], tolerance: float) -> list[FloatArray]:
    """``since_kept_change`` of each history, those at one level left as they are.

    When the base branch changed the intensity and kept it, only the runs since count. Most
    histories are at one level throughout (counters are nearly exact): their spread is
    read for all of them at once, and only the others are trimmed one by one (a numpy call a
    kernel was 8 ms of a 2,000-kernel check).
    """
    long = [i for i, h in enumerate(histories) if h.size >= SETTLED_RUNS]
    if not long:
        return histories
    flat = np.concatenate([histories[i] for i in long])
    ends = np.cumsum([histories[i].size for i in long])
    starts = np.r_[0, ends[:-1]]
    spread = np.maximum.reduceat(flat, starts) - np.minimum.reduceat(flat, starts)
    wide = spread > tolerance * np.abs(flat[ends - 1])
    out = list(histories)
    for i in np.asarray(long)[wide]:
        out[i] = since_kept_change(histories[i], tolerance)
    return out


def since_kept_change(values: FloatArray, tolerance: float) -> FloatArray:
    """The newest runs within ``tolerance`` (relative) of the newest, if ``SETTLED_RUNS`` agree.

    Counters are nearly exact, so a level the newest two base-branch runs share is the
    branch's intensity now (as ``KernelHistory.usual_binding`` takes their label): a PR
    opened after main lost a fusion is not warned for main's loss while older runs
    outnumber the new ones. Fewer agreeing runs leave the whole history (the change's own
    first night is still flagged).
    """
    if values.size < SETTLED_RUNS:
        return values
    off = np.flatnonzero(np.abs(values / values[-1] - 1) > tolerance)
    start = int(off[-1]) + 1 if off.size else 0
    return values[start:] if values.size - start >= SETTLED_RUNS else values
