"""The verdict as the templates see it: rows, details and figures, already escaped.

Templates only lay out what this module prepares, so every user string passes through
``service.render.escape`` exactly once, here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rules import (
    BaselineSummary,
    Conclusion,
    Finding,
    GroupVerdict,
    KernelStatus,
    KernelVerdict,
    Severity,
    Stability,
    Verdict,
    one_decimal,
)
from service.render.bindings import across_roofs, moved_from, rebound
from service.render.devices import kernel_prediction, scaled_history
from service.render.escape import escape_code, escape_text
from service.render.figures import fmt_seconds, time_change
from service.render.judged import judged_kernel
from service.render.names import shown_name
from service.render.sparklines import sparkline

#: Longest kernel name shown in a table cell; the details show the full name.
NAME_LIMIT = 90
#: Longest message, note or number text shown.
TEXT_LIMIT = 400
MEMORY_TIERS = ("dram", "l2", "l1", "shared")

ICONS = {Severity.FAIL: "❌", Severity.WARN: "⚠️", Severity.INFO: "ℹ️"}
CONCLUSION_ICONS = {Conclusion.PASS: "✅", Conclusion.WARN: "⚠️", Conclusion.FAIL: "❌"}
#: A run that judged nothing and failed nothing: neither a green pass nor a warning.
NOT_JUDGED_ICON = "⚪"
STATUS_ICONS = {
    KernelStatus.REGRESSED: "🔻",
    KernelStatus.IMPROVED: "✅",
    KernelStatus.NEW: "🆕",
    KernelStatus.ACCEPTED: "☑️",
    KernelStatus.UNPLACED: "❔",
    KernelStatus.MISSING: "➖",
}


@dataclass(frozen=True)
class Row:
    """One table row, every cell already escaped for a GFM table."""

    icon: str
    kernel: str
    share: str
    time: str
    regime: str
    intensity: str
    now: str
    baseline: str
    change: str
    trend: str
    verdict: str


@dataclass(frozen=True)
class Detail:
    """One collapsible finding: summary line (HTML) and markdown body parts."""

    summary: str
    kernel: str
    message: str
    numbers: tuple[tuple[str, str], ...]
    advice: str | None
    context: str
    profile: str | None = None
    evidence: tuple[Detail, ...] = ()  # the same cause's other findings (render.causes)


@dataclass(frozen=True)
class Entry:
    """A listed kernel: its row and the details of its findings (importance order)."""

    row: Row
    details: tuple[Detail, ...]


def conclusion_icon(verdict: Verdict) -> str:
    """The headline's icon: the conclusion's, or ``NOT_JUDGED_ICON`` (``Verdict.not_judged``)."""
    return NOT_JUDGED_ICON if verdict.not_judged else CONCLUSION_ICONS[verdict.conclusion]


def fmt_pct(value: float | None) -> str:
    """``61.0%`` or an em dash."""
    return "—" if value is None or not math.isfinite(value) else f"{one_decimal(value)}%"


def target_text(target: float | None, now: float | None) -> str:
    """A group's target percent of roof, and how far below it the group is now.

    The digest lists kernels below their group's target week by week; a PR that takes the
    group under it says so in its own row (``65.0% (60.2 pts below)``).
    """
    text = fmt_pct(target)
    if target is None or now is None or not math.isfinite(now) or now >= target:
        return text
    return f"{text} ({one_decimal(target - now)} pts below)"


def fmt_share(value: float) -> str:
    """Share of GPU time (0-1) as a percentage; tiny shares show as ``<0.1%``."""
    return "<0.1%" if 0 < value < 0.001 else f"{100 * value:.1f}%"


def fmt_number(value: float | str | None) -> str:
    """A finding's figure: 4 significant digits, strings as code."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return escape_code(value, in_table=True, limit=TEXT_LIMIT)
    return f"{value:.4g}" if math.isfinite(value) else str(value)


def fmt_time(seconds: float | None) -> str:
    """A duration with a readable unit (ns, µs, ms, s)."""
    if seconds is None or not math.isfinite(seconds):
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _is_time(base: BaselineSummary | None) -> bool:
    """Kernels without counters are judged on time (lower is better), not percent of roof."""
    return base is not None and base.metric == "time_s"


def baseline_time(base: BaselineSummary | None) -> float | None:
    """The baseline's median time (its centre, for kernels judged on time)."""
    if base is None:
        return None
    return base.time_s if base.time_s is not None or not _is_time(base) else base.center


def kernel_share(kernel: KernelVerdict) -> str:
    """The kernel's share of the run's GPU time (``—`` for a missing kernel: it did not run)."""
    return "—" if kernel.status == KernelStatus.MISSING else fmt_share(kernel.time_share)


def kernel_time(kernel: KernelVerdict) -> str:
    """Baseline → now time of a kernel; a missing one reads ``1.20 ms → missing``."""
    before = baseline_time(kernel.baseline)
    if kernel.status == KernelStatus.MISSING:
        return f"{fmt_seconds(before)} → missing" if before else "missing"
    return kernel_prediction(kernel, time_change(kernel.time_s, before))


def remeasured(kernel: KernelVerdict) -> str:
    """``re-measured 4.7, 4.9%``: the re-measurements of the commit (``check --rerun``).

    In the judged metric: percent of roof on the kernel's current binding, or the time of a
    kernel judged on time. Empty without re-measurements.
    """
    again = kernel.measurements[1:]
    if not again:
        return ""
    if kernel.percent_of_roof is None:
        return "re-measured " + ", ".join(fmt_seconds(v) for v in again)
    return "re-measured " + ", ".join(f"{v:.1f}" for v in again) + "%"


def _now(kernel: KernelVerdict) -> str:
    again = remeasured(kernel)
    return f"{_now_figure(kernel)}, {again}" if again else _now_figure(kernel)


def _now_figure(kernel: KernelVerdict) -> str:
    if kernel.status == KernelStatus.MISSING:
        return "missing"
    if _is_time(kernel.baseline):
        return "— (judged on time)"
    old = rebound(kernel)
    if old is None:
        return at_least(kernel) + fmt_pct(kernel.percent_of_roof)
    return (
        f"{fmt_pct(kernel.percent_of_baseline_roof)} of {escape_text(old, limit=24)} "
        f"({fmt_pct(kernel.percent_of_roof)} of {escape_text(kernel.binding or '', limit=24)})"
    )


def at_least(kernel: KernelVerdict) -> str:
    """``≥ `` before a percent of roof that counts part of the work only (a lower bound)."""
    return "≥ " if kernel.percent_is_lower_bound else ""


def _relative(base: BaselineSummary, suffix: str = "") -> str:
    if base.relative_change is None or not math.isfinite(base.relative_change):
        return ""
    return f"{100 * base.relative_change:+.1f}%{suffix}".replace("-", "−")


def change_text(base: BaselineSummary | None, current: float | None) -> str:
    """``−24.0 pts (−28.2%)`` for percent of roof, ``+12.0% time`` for time baselines."""
    if base is None or base.center is None or current is None:
        return "—"
    if _is_time(base):
        return _relative(base, " time") or "—"
    text = f"{one_decimal(current - base.center, sign=True)} pts".replace("-", "−")
    relative = _relative(base)
    return f"{text} ({relative})" if relative else text


def baseline_text(base: BaselineSummary | None, status: KernelStatus | None = None) -> str:
    """Centre ± spread (n) of a baseline, in its metric's unit."""
    if base is None or base.center is None:
        return str(status) if status in (KernelStatus.NEW, KernelStatus.ACCEPTED) else "—"
    fmt = fmt_time if _is_time(base) else fmt_pct
    spread = f" ±{fmt(base.spread).rstrip('%')}" if base.spread else ""
    since = " since a change" if base.used is not None else ""  # the gate's segment
    scaled = scaled_history(base)  # another card's level, scaled to this one
    card = f": {escape_text(scaled, limit=120)}" if scaled else ""
    return f"{fmt(base.center)}{spread} (n={base.n}{since}{card})"


def _trend(kernel: KernelVerdict) -> str:
    base = kernel.baseline
    history = list(base.history) if base else []
    # Like for like: the sparkline ends on the figure the verdict states (the baseline's roof).
    like_for_like = kernel.percent_of_baseline_roof or kernel.percent_of_roof
    current = kernel.time_s if _is_time(base) else like_for_like
    if current is not None:
        history.append(current)
    return sparkline(history, base.runner_since if base else None)


def unplaced_reason(kernel: KernelVerdict) -> str:
    """``unplaced: no FLOP counts``; ``unplaced: time only`` without FLOP and byte counts.

    Short, as a suite timed without work repeats it in every row; the details' advice and the
    JSON's ``missing`` give the whole reason.
    """
    lacking = [_short_lack(why) for why in kernel.missing]
    if "no FLOP counts" in lacking and "no byte counts" in lacking:
        return "unplaced: " + ("no counters" if "no measured time" in lacking else "time only")
    return f"unplaced: {lacking[0] if lacking else 'no counters'}"


def _short_lack(why: str) -> str:
    """``no FLOP counts`` for ``FLOP counts (no FLOP counters or declared work)``."""
    head = why.split(" (")[0]
    return f"no {head}" if head.endswith("counts") or head == "measured time" else why


def _plain(value: str, *, limit: int | None = None) -> str:
    return value


def regime_text(kernel: KernelVerdict, escape: Callable[..., str] = _plain) -> str:
    """``compute (tensor_bf16 → fp32)``, ``memory (dram)`` or why the kernel is unplaced.

    ``escape`` makes the names safe for markdown (``escape_text``); the terminal prints them
    as they are.
    """
    if kernel.status == KernelStatus.MISSING:
        return "—"
    if kernel.regime is None:
        return escape(unplaced_reason(kernel), limit=80)
    text = kernel.regime.replace("-bound", "")
    old = moved_from(kernel)
    if old and kernel.binding:
        text += f" ({escape(old, limit=24)} → {escape(kernel.binding, limit=24)})"
    elif kernel.binding:
        text += f" ({escape(kernel.binding, limit=24)})"
    return text + (" ≈ridge" if kernel.borderline else "")


def binding_tier(kernel: KernelVerdict) -> str | None:
    """The memory tier whose intensity to show: the binding one (``tier`` when compute-bound)."""
    for tier in (kernel.binding, kernel.tier):
        if tier in kernel.intensity:
            return tier
    return next((t for t in MEMORY_TIERS if t in kernel.intensity), None)


def _intensity(kernel: KernelVerdict) -> str:
    tier = binding_tier(kernel)
    if tier is None:
        return "—"
    value = kernel.intensity[tier]
    shown = "∞" if math.isinf(value) else f"{value:.3g}"
    return f"{shown} FLOP/B ({escape_text(tier, limit=12)})"


def worst(findings: Iterable[Finding]) -> Finding | None:
    """The most important finding: counting before preview, then by severity."""
    ranked = sorted(findings, key=lambda f: (not f.counts, f.severity.rank))
    return ranked[0] if ranked else None


def verdict_words(findings: Sequence[Finding], esc: Callable[[str], str] = str) -> str:
    """``fail: regime-flip, roof-drop``: the worst severity and every rule that gave it."""
    top = worst(findings)
    if top is None:
        return ""
    same = [f for f in findings if f.severity == top.severity and f.counts == top.counts]
    rules = ", ".join(esc(rule) for rule in dict.fromkeys(f.rule for f in same))
    preview = " (preview)" if top.stability == Stability.PREVIEW else ""
    return f"{top.severity.value}: {rules}{preview}"


def _verdict_cell(kernel: KernelVerdict, findings: Sequence[Finding]) -> tuple[str, str]:
    top = worst(findings)
    if top is None:
        return STATUS_ICONS.get(kernel.status, "·"), escape_text(status_words(kernel), limit=40)
    return ICONS[top.severity], verdict_words(findings, lambda r: escape_text(r, limit=40))


def status_words(kernel: KernelVerdict) -> str:
    """The status in words (unescaped); new with a few baseline runs: not judged yet."""
    if kernel.status == KernelStatus.NEW and kernel.baseline is not None and kernel.baseline.n:
        return "new: too few runs to judge"  # the gate's min_runs; the Baseline column has n
    return str(kernel.status)


def _current(kernel: KernelVerdict) -> float | None:
    """The figure compared with the baseline: like for like (the baseline's roof)."""
    if _is_time(kernel.baseline):
        return kernel.time_s
    return kernel.percent_of_baseline_roof or kernel.percent_of_roof


@dataclass(frozen=True)
class GroupRow:
    """One row of the kernel-group table, escaped."""

    name: str
    share: str
    time: str
    now: str
    baseline: str
    change: str
    mfu: str
    target: str


def make_group_row(group: GroupVerdict) -> GroupRow:
    """The table row of a kernel group (config ``groups``)."""
    mfu = "—" if group.mfu is None else f"{100 * group.mfu:.1f}%"
    if group.mfu_baseline is not None and group.mfu_baseline.center is not None:
        mfu += f" (was {100 * group.mfu_baseline.center:.1f}%)"
    if group.mfu is not None and group.mfu_precision:
        mfu += f" of {escape_text(group.mfu_precision, limit=24)}"
    base_time = group.baseline.time_s if group.baseline else None
    return GroupRow(
        name=escape_code(group.name, in_table=True, limit=NAME_LIMIT),
        share=fmt_share(group.time_share),
        time=time_change(group.time_s, base_time),
        now=fmt_pct(group.percent_of_roof),
        baseline=baseline_text(group.baseline),
        change=change_text(group.baseline, group.percent_of_roof),
        mfu=mfu,
        target=target_text(group.target_percent, group.percent_of_roof),
    )


def make_row(kernel: KernelVerdict, findings: Sequence[Finding], shown: str | None = None) -> Row:
    """The table row of one kernel (its baseline in its gate finding's figures, if any).

    ``shown``: its name as the table shows it (``shown_name`` of it unless given).
    """
    kernel = judged_kernel(kernel, findings)
    icon, verdict = _verdict_cell(kernel, findings)
    return Row(
        icon=icon,
        kernel=escape_code(shown or shown_name(kernel.name, NAME_LIMIT), in_table=True),
        share=kernel_share(kernel),
        time=kernel_time(kernel),
        regime=regime_text(kernel, escape_text),
        intensity=_intensity(kernel),
        now=_now(kernel),
        baseline=baseline_text(kernel.baseline, kernel.status),
        change="—" if across_roofs(kernel) else change_text(kernel.baseline, _current(kernel)),
        trend=_trend(kernel),
        verdict=verdict,
    )
