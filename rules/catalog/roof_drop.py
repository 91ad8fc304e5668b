"""``roof-drop``: percent of roof fell versus the baseline beyond noise."""

from __future__ import annotations

from collections.abc import Iterator

from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.groups import GroupFigures
from rules.measures import column, comparison_numbers, signed_percent
from rules.stats import CompareOptions, compare_to_baseline
from rules.timing import judged_binding, like_for_like_samples
from rules.verdict import Finding, Severity, Stability


class RoofDrop(Rule):
    """Percent of roof fell versus the baseline beyond noise.

    **Anti-pattern**

    | kernel | device | roof | baseline % of roof (n=14) | current |
    |---|---|---|---|---|
    | `decode_gemv<half>` | H100-SXM5 | dram (datasheet) | 85.1 ± 0.6 | 71.9 |

    The current value (the median of the run's samples, when the tool gave them) lies more
    than ``z_threshold`` robust spreads (scaled MAD, at least ``noise_floor`` of the centre)
    below the baseline median, and at least ``min_effect`` below it. Kernel groups are held to
    the same test on their time-weighted percent of roof and their MFU, so a low decode MFU
    is accepted while a drop in it is not (finding on ``group:<name>``).

    **Best practice**

    Hold percent of roof within the baseline's noise band. Memory-bound and far below the
    roof: check access patterns, layout and vectorised loads. At the memory roof: cut bytes
    (fusion, quantisation). Compute-bound far below: tensor cores, tiling, ILP.
    """

    id = "roof-drop"
    group = "roofline"
    default_severity = Severity.FAIL
    stability = Stability.STABLE
    compares_to_baseline = True

    class Options(RuleOptions, CompareOptions):
        """Thresholds (see ``rules.stats.CompareOptions``)."""

        check_groups: bool = True

    def check(self, ctx: RuleContext, opts: Options) -> Iterator[Finding]:
        """A finding per kernel and per group whose percent of roof (or MFU) dropped."""
        for key, placement in ctx.placements.items():
            if placement.percent_of_roof is None:
                continue
            values = ctx.kernel_history(key).percent_of_roof
            # Like for like: against the roof the baseline was bound by (issue 13).
            current = like_for_like_samples(ctx, key)
            cmp = compare_to_baseline(values, current, options=opts)
            if cmp.regressed:
                yield self.finding(
                    ctx,
                    key,
                    f"{ctx.kernels[key].name}: {cmp.current:.1f}% of roof "
                    f"({judged_binding(ctx, key)}), baseline {cmp.center:.1f}% ± {cmp.spread:.1f} "
                    f"over {cmp.n} runs ({signed_percent(cmp.relative_change)})",
                    numbers=comparison_numbers(cmp, opts),
                )
        if opts.check_groups:
            for figures in ctx.groups.values():
                yield from self._group(ctx, figures, opts)

    def _group(self, ctx: RuleContext, figures: GroupFigures, opts: Options) -> Iterator[Finding]:
        measures = (
            ("percent_of_roof", figures.percent_of_roof, 1.0, "% of roof"),
            ("mfu", figures.mfu, 100.0, "% MFU"),
        )
        for name, current, scale, unit in measures:
            if current is None or figures.history.empty:
                continue
            cmp = compare_to_baseline(column(figures.history, name), current, options=opts)
            if not cmp.regressed:
                continue
            yield self.finding(
                ctx,
                figures.key,
                f"group {figures.group.name}: {cmp.current * scale:.3g}{unit}, baseline "
                f"{cmp.center * scale:.3g}{unit} ± {cmp.spread * scale:.2g} over {cmp.n} runs "
                f"({signed_percent(cmp.relative_change)})",
                numbers={"measure": name, **comparison_numbers(cmp, opts)},
            )
