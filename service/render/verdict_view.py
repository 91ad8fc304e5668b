"""The verdict as the templates see it: rows, details and figures, already escaped.

Templates only lay out what this module prepares, so every user string passes through
``service.render.escape`` exactly once, here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rules.verdict import Conclusion, Finding, KernelVerdict, Severity, Stability, Verdict
from service.render.escape import escape_code, escape_html, escape_text

SPARK_LEVELS = "▁▂▃▄▅▆▇█"
#: Points shown in a sparkline (the newest ones).
SPARK_POINTS = 16
#: Longest kernel name shown in a table cell; the details show the full name.
NAME_LIMIT = 90
#: Longest message, note or number text shown.
TEXT_LIMIT = 400
MEMORY_TIERS = ("dram", "l2", "l1", "shared")

ICONS = {Severity.FAIL: "❌", Severity.WARN: "⚠️", Severity.INFO: "ℹ️"}
CONCLUSION_ICONS = {Conclusion.PASS: "✅", Conclusion.WARN: "⚠️", Conclusion.FAIL: "❌"}
STATUS_ICONS = {"regressed": "🔻", "improved": "✅", "new": "🆕", "unplaced": "❔"}


@dataclass(frozen=True)
class Row:
    """One table row, every cell already escaped for a GFM table."""

    icon: str
    kernel: str
    share: str
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


@dataclass(frozen=True)
class Entry:
    """A listed kernel: its row and the details of its findings (importance order)."""

    row: Row
    details: tuple[Detail, ...]


def sparkline(values: Sequence[float]) -> str:
    """Unicode sparkline of ``values`` (newest last); empty for fewer than two points."""
    points = [v for v in values[-SPARK_POINTS:] if v is not None and math.isfinite(v)]
    if len(points) < 2:
        return ""
    low, high = min(points), max(points)
    if high - low < 1e-12:
        return SPARK_LEVELS[3] * len(points)
    top = len(SPARK_LEVELS) - 1
    return "".join(SPARK_LEVELS[round((v - low) / (high - low) * top)] for v in points)


def fmt_pct(value: float | None) -> str:
    """``61.0%`` or an em dash."""
    return "—" if value is None or not math.isfinite(value) else f"{value:.1f}%"


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


def _change(kernel: KernelVerdict) -> str:
    base = kernel.baseline
    if base is None or base.center is None or kernel.percent_of_roof is None:
        return "—"
    points = kernel.percent_of_roof - base.center
    text = f"{points:+.1f} pts".replace("-", "−")
    if base.relative_change is not None and math.isfinite(base.relative_change):
        text += f" ({100 * base.relative_change:+.1f}%)".replace("-", "−")
    return text


def _baseline(kernel: KernelVerdict) -> str:
    base = kernel.baseline
    if base is None or base.center is None:
        return "new" if kernel.status == "new" else "—"
    spread = f" ±{base.spread:.1f}" if base.spread else ""
    return f"{base.center:.1f}%{spread} (n={base.n})"


def _regime(kernel: KernelVerdict) -> str:
    if kernel.regime is None:
        return "—"
    text = kernel.regime.replace("-bound", "")
    if kernel.binding:
        text += f" ({escape_text(kernel.binding, limit=24)})"
    return text + (" ≈ridge" if kernel.borderline else "")


def _intensity(kernel: KernelVerdict) -> str:
    tier = kernel.binding if kernel.binding in kernel.intensity else None
    tier = tier or next((t for t in MEMORY_TIERS if t in kernel.intensity), None)
    if tier is None:
        return "—"
    value = kernel.intensity[tier]
    shown = "∞" if math.isinf(value) else f"{value:.3g}"
    return f"{shown} FLOP/B ({escape_text(tier, limit=12)})"


def _trend(kernel: KernelVerdict) -> str:
    history = list(kernel.baseline.history) if kernel.baseline else []
    if kernel.percent_of_roof is not None:
        history.append(kernel.percent_of_roof)
    return sparkline(history)


def worst(findings: Iterable[Finding]) -> Finding | None:
    """The most important finding: counting before preview, then by severity."""
    ranked = sorted(findings, key=lambda f: (not f.counts, f.severity.rank))
    return ranked[0] if ranked else None


def _verdict_cell(kernel: KernelVerdict, top: Finding | None) -> tuple[str, str]:
    if top is None:
        return STATUS_ICONS.get(kernel.status, "·"), escape_text(kernel.status, limit=24)
    rule = escape_text(top.rule, limit=40)
    preview = " (preview)" if top.stability == Stability.PREVIEW else ""
    return ICONS[top.severity], f"{top.severity.value}: {rule}{preview}"


def make_row(kernel: KernelVerdict, findings: Sequence[Finding]) -> Row:
    """The table row of one kernel."""
    icon, verdict = _verdict_cell(kernel, worst(findings))
    return Row(
        icon=icon,
        kernel=escape_code(kernel.name, in_table=True, limit=NAME_LIMIT),
        share=fmt_share(kernel.time_share),
        regime=_regime(kernel),
        intensity=_intensity(kernel),
        now=fmt_pct(kernel.percent_of_roof),
        baseline=_baseline(kernel),
        change=_change(kernel),
        trend=_trend(kernel),
        verdict=verdict,
    )


def make_detail(finding: Finding, verdict: Verdict) -> Detail:
    """The collapsible section of one finding."""
    name = finding.kernel_name or finding.kernel or "(whole run)"
    preview = " (preview)" if finding.stability == Stability.PREVIEW else ""
    summary = (
        f"{ICONS[finding.severity]} {escape_html(finding.rule, limit=40)}{preview}: "
        f"<code>{escape_html(name, limit=NAME_LIMIT)}</code>"
    )
    numbers = tuple(
        (escape_text(key, limit=60), fmt_number(value)) for key, value in finding.numbers.items()
    )
    advice = None
    if finding.advice_text or finding.advice:
        label = escape_text(finding.advice.value) if finding.advice else "advice"
        advice = f"**Advice ({label}):** {escape_text(finding.advice_text or '', limit=TEXT_LIMIT)}"
    where = [
        ("device", finding.device or verdict.device),
        ("roof", finding.roof or verdict.roof),
        ("binding", finding.binding),
    ]
    context = " · ".join(f"{k}: {escape_text(v, limit=80)}" for k, v in where if v)
    return Detail(
        summary=summary,
        kernel=escape_code(name, limit=4000),
        message=escape_text(finding.message, limit=TEXT_LIMIT),
        numbers=numbers,
        advice=advice,
        context=context,
    )
