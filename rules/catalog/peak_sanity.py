"""``peak-sanity``: a peak that looks sparse, or FLOPs in a precision the roof lacks."""

from __future__ import annotations

from collections.abc import Iterator

from rules.advice import Advice
from rules.base import Rule, RuleOptions
from rules.clocks import at_report_clocks
from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.hardware import builtin_catalog
from rules.roofline import Roof
from rules.verdict import Finding, Severity, Stability


def reference_peaks(ctx: RuleContext) -> list[tuple[str, dict[str, float]]]:
    """Dense peaks to hold the judged roof against: the catalog's, and the other roofs'.

    The packaged catalog's where the judged roof's peaks are not its own: a report's, a
    measured roof, or the datasheet with figures a configuration set (then the catalog's
    at the same report clocks: a figure scaled by 0.77 must not pass for a dense one).
    """
    refs: list[tuple[str, dict[str, float]]] = []
    spec = builtin_catalog().find(ctx.roof.device)
    if spec is not None and (ctx.roof.source != "datasheet" or ctx.roof.from_config):
        datasheet = at_report_clocks(spec, ctx.run)[0] if ctx.roof.from_config else spec.roof()
        refs.append((f"{spec.id} (datasheet)", dict(datasheet.peak_flop_per_s)))
    for roof in ctx.other_roofs:
        if roof.label != ctx.roof.label:
            refs.append((roof.label, dict(roof.peak_flop_per_s)))
    return refs


def used_precisions(ctx: RuleContext) -> set[str]:
    """Precisions in which the run's kernels have FLOPs."""
    used: set[str] = set()
    for kernel in ctx.kernels.values():
        used.update(p for p, v in kernel.work()[0].items() if v > 0)
    return used


class PeakSanity(Rule):
    """A peak looks sparse (2× dense), or the kernel's FLOPs are in a precision the roof lacks.

    **Anti-pattern**

    | roof | precision | judged peak | reference peak | ratio |
    |---|---|---|---|---|
    | H100-SXM5 (custom) | tensor_bf16 | 1979 TFLOP/s | 989 TFLOP/s (datasheet) | 2.0 |

    | kernel | FLOPs in | roof has peaks for |
    |---|---|---|
    | `fp8_gemm` | tensor_fp8 | fp32, tensor_bf16 |

    Datasheets quote 2:4 sparse tensor peaks beside (or instead of) dense ones; judged
    against a sparse peak every dense GEMM sits at half its true percent of roof. FLOPs
    in a precision without a peak are left out of ``T_compute``, so the kernel's percent of
    roof says nothing about them.

    **Best practice**

    Use dense peaks (roofguard's catalog holds only dense figures); when overriding a device
    in ``roofguard.toml``, divide a sparse figure by two. Give the roof a peak for every
    precision the kernels use, or measure it (``roofguard calibrate``).
    """

    id = "peak-sanity"
    group = "roofline"
    default_severity = Severity.WARN
    stability = Stability.STABLE

    class Options(RuleOptions):
        """Options of peak-sanity."""

        sparse_ratio: float = 1.8

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """Run-level findings for sparse-looking peaks, per-kernel ones for missing peaks."""
        yield from self._sparse(ctx, ctx.roof, opts)
        for key, placement in ctx.placements.items():
            lacking = [m for m in placement.compute.missing if m.startswith("no peak")]
            if lacking:
                yield self.finding(
                    ctx,
                    key,
                    f"{ctx.kernels[key].name}: {'; '.join(lacking)}: percent of roof ignores "
                    "those FLOPs",
                    advice=Advice.MEASURE_MORE,
                    numbers={"roof_precisions": ", ".join(sorted(ctx.roof.peak_flop_per_s))},
                )

    def _sparse(self, ctx: RuleContext, roof: Roof, opts: Options) -> Iterator[Finding]:
        used = used_precisions(ctx)
        for label, peaks in reference_peaks(ctx):
            for precision in sorted(used):
                judged, ref = roof.peak_flop_per_s.get(precision), peaks.get(precision)
                if not judged or not ref or judged / ref < opts.sparse_ratio:
                    continue
                yield self.finding(
                    ctx,
                    None,
                    f"{roof.label} {precision} peak {judged / 1e12:.0f} TFLOP/s is "
                    f"{judged / ref:.1f}× {label}'s {ref / 1e12:.0f} TFLOP/s: it looks like a "
                    "sparse (2:4) figure",
                    numbers={
                        "precision": precision,
                        "judged_peak": judged,
                        "reference_peak": ref,
                        "reference": label,
                    },
                )
