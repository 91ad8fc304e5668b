"""One root cause, one finding: a kernel's (or group's) findings under the one that fails it.

A GEMM that fell off the tensor cores fails regime-flip, roof-drop and time-regression: three
views of one cause. The verdict lists it once, under its most important finding (failing
first, then by severity, the order the rules report in), with the others inside it as that
finding's evidence, so a reader counts regressions, not rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from rules import Finding, Stability, Verdict
from service.render.escape import escape_code, escape_html, escape_text
from service.render.figures import figures, profile_line
from service.render.names import cut_middle, shown_name, visible
from service.render.verdict_view import ICONS, NAME_LIMIT, TEXT_LIMIT, Detail


def findings_by_cause(findings: Sequence[Finding]) -> list[list[Finding]]:
    """The findings of each kernel or group together, in the order of its first.

    Run-wide findings stay one by one.
    """
    grouped: dict[str, list[Finding]] = {}
    out: list[list[Finding]] = []
    for finding in findings:
        if finding.kernel is None:
            out.append([finding])
        elif finding.kernel in grouped:
            grouped[finding.kernel].append(finding)
        else:
            grouped[finding.kernel] = [finding]
            out.append(grouped[finding.kernel])
    return out


def by_cause(
    findings: Sequence[Finding], verdict: Verdict, shown: str | None = None
) -> list[Detail]:
    """One detail per kernel or group (importance order kept); run-wide findings stay apart.

    ``shown``: the kernel's name as its table row shows it (the findings of one kernel).
    """
    return [_with_evidence(same, verdict, shown) for same in findings_by_cause(findings)]


def run_and_group_causes(
    findings: Sequence[Finding], verdict: Verdict, groups: int
) -> tuple[list[Detail], int]:
    """``by_cause`` of the findings on the whole run and on the first ``groups`` groups.

    Returns the details (importance order kept) and how many groups' were left out. Every
    whole-run finding is kept: there are few, and one says the runner itself moved.
    """
    causes = findings_by_cause(findings)
    on_groups = [same for same in causes if same[0].kernel is not None]
    kept = {id(same) for same in on_groups[:groups]}
    shown = [same for same in causes if same[0].kernel is None or id(same) in kept]
    return [_with_evidence(same, verdict) for same in shown], len(on_groups) - len(kept)


def _with_evidence(
    findings: Sequence[Finding], verdict: Verdict, shown: str | None = None
) -> Detail:
    """The first finding's detail, the others nested in it as its evidence."""
    main, *rest = findings
    detail = make_detail(main, verdict, shown)
    if not rest:
        return detail
    rules = ", ".join(f.rule for f in rest)
    return dataclasses.replace(
        detail,
        summary=f"{detail.summary} (with {rules})",
        evidence=tuple(make_detail(f, verdict, shown) for f in rest),
    )


def make_detail(finding: Finding, verdict: Verdict, shown: str | None = None) -> Detail:
    """The collapsible section of one finding (``shown``: its kernel's name as cut, if given)."""
    name = finding.kernel_name or finding.kernel or "(whole run)"
    preview = " (preview)" if finding.stability == Stability.PREVIEW else ""
    summary = (
        f"{ICONS[finding.severity]} {escape_html(finding.rule, limit=40)}{preview}: "
        f"<code>{escape_html(shown or shown_name(name, NAME_LIMIT))}</code>"
    )
    # Our own formatted numbers need no escaping; strings from rules and reports do.
    numbers = tuple(
        (
            escape_text(label, limit=60),
            escape_text(value, limit=TEXT_LIMIT) if isinstance(raw, str) else value,
        )
        for (label, value), raw in zip(figures(finding), finding.numbers.values(), strict=True)
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
        kernel=escape_code(cut_middle(visible(name), 4000)),
        message=escape_text(finding.message, limit=TEXT_LIMIT),
        numbers=numbers,
        advice=advice,
        context=context,
        profile=profile_line(finding.profile, escape_text),
    )
