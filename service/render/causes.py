"""One root cause, one finding: a kernel's (or group's) findings under the one that fails it.

A GEMM that fell off the tensor cores fails regime-flip, roof-drop and time-regression: three
views of one cause. The verdict lists it once, under its most important finding (failing
first, then by severity, the order the rules report in), with the others inside it as that
finding's evidence, so a reader counts regressions, not rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from rules import Finding, Verdict
from service.render.verdict_view import Detail, make_detail


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


def by_cause(findings: Sequence[Finding], verdict: Verdict) -> list[Detail]:
    """One detail per kernel or group (importance order kept); run-wide findings stay apart."""
    return [_with_evidence(same, verdict) for same in findings_by_cause(findings)]


def _with_evidence(findings: Sequence[Finding], verdict: Verdict) -> Detail:
    """The first finding's detail, the others nested in it as its evidence."""
    main, *rest = findings
    detail = make_detail(main, verdict)
    if not rest:
        return detail
    rules = ", ".join(f.rule for f in rest)
    return dataclasses.replace(
        detail,
        summary=f"{detail.summary} (with {rules})",
        evidence=tuple(make_detail(f, verdict) for f in rest),
    )
