"""The verdict's words for a device change: which card's history, and what the roofs predict.

A run whose card has too little history of its own is judged against another card's, in
percent of roof (``rules.scaling``). The headline names that history, each kernel's baseline
names its card, and times carry the ratio the two roofs predict beside the measured one.
"""

from __future__ import annotations

from rules import BaselineSummary, KernelVerdict, Verdict
from service.render.figures import fmt_ratio, time_change


def judged_history(verdict: Verdict) -> str | None:
    """``"A100-SXM4-80GB history, 30 runs, in percent of roof"``: another card's, else None."""
    base = verdict.baseline
    if base is None or base.device is None or base.device == verdict.device:
        return None
    return f"{base.device} history, {base.n} runs, in percent of roof"


def judged_against(verdict: Verdict) -> str:
    """The roof the headline names, after another card's history when judged against one."""
    history = judged_history(verdict)
    roof = verdict.roof or "unknown roof"
    return f"{history} on {roof}" if history else roof


def with_prediction(change: str, expected: float | None) -> str:
    """``0.34 → 0.21 ms (0.62×)`` with ``, roofs predict 0.60×`` inside its parentheses."""
    if expected is None or not change.endswith(")"):
        return change
    return f"{change[:-1]}, roofs predict {fmt_ratio(expected)})"


def kernel_prediction(kernel: KernelVerdict, change: str) -> str:
    """A kernel's time change with the ratio the roofs predict, when judged across cards."""
    return with_prediction(change, kernel.expected_time_ratio)


def device_story(verdict: Verdict) -> str | None:
    """The GPU time of the kernels judged across cards, beside what the roofs predict."""
    base = verdict.baseline
    ratio, expected = verdict.time_ratio, verdict.expected_time_ratio
    if judged_history(verdict) is None or base is None or not base.time_s or ratio is None:
        return None
    judged = sum(1 for k in verdict.kernels if k.expected_time_ratio is not None)
    change = with_prediction(time_change(base.time_s * ratio, base.time_s), expected)
    return f"GPU time of the {judged} kernel(s) on both cards {change}"


def scaled_history(base: BaselineSummary) -> str | None:
    """Whose runs a kernel's baseline figures are, when another card's (else None).

    ``L4 scaled to L40S``; ``21 on L4 scaled to L40S, 1 on L40S`` once the gate reads its
    nights there too; ``on L40S`` when its level is of those nights alone (``rules.newcard``).
    """
    if base.device is None:
        return None
    to = base.scaled_to
    if to is None:  # a verdict stored before the figures were scaled: the other card's level
        return base.device
    theirs = base.n if base.scaled_n is None else base.scaled_n
    if not theirs:
        return f"on {to}"
    if theirs >= base.n:
        return f"{base.device} scaled to {to}"
    return f"{theirs} on {base.device} scaled to {to}, {base.n - theirs} on {to}"
