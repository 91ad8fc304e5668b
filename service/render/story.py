"""The verdict's time story: what got how much slower and why, in one line.

The headline of the PR comment and of the terminal view, from the verdict's kernel rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules import TIME_MEASURE, KernelStatus, KernelVerdict, Verdict, new_runner
from service.render.bindings import rebound
from service.render.devices import device_story
from service.render.escape import escape_code, escape_text
from service.render.figures import fmt_ratio, fmt_seconds, time_change
from service.render.names import shown_name
from service.render.verdict_view import NAME_LIMIT, TEXT_LIMIT, baseline_time, fmt_pct

#: Kernels missing or new that hold this share of the baseline's GPU time or more are named
#: beside it (``other_kernels``): below it, the totals still compare like with like.
SET_CHANGE_SHARE = 0.05


def largest_slowdown(verdict: Verdict) -> KernelVerdict | None:
    """The regressed kernel that added the most time over its baseline, if any."""

    def added(k: KernelVerdict) -> float:
        before = baseline_time(k.baseline)
        return k.time_s - before if before else 0.0

    slower = [k for k in verdict.kernels if k.status == KernelStatus.REGRESSED and added(k) > 0]
    return max(slower, key=added, default=None)


def no_baseline(verdict: Verdict) -> str:
    """``"no baseline yet: 12 kernels stored, nothing judged"``: a run without history to judge.

    With a baseline shorter than the gate needs: ``"baseline too short: 1 of the 3 runs the
    gate needs; 12 kernels stored, nothing judged"``.
    """
    n = sum(1 for k in verdict.kernels if k.status != KernelStatus.MISSING)
    stored = f"{n:,} kernel{'s' if n != 1 else ''} stored, nothing judged"
    base = verdict.baseline
    if base is None or base.runs == 0:
        return f"no baseline yet: {stored}"
    return f"baseline too short: {base.runs} of the {base.min_runs} runs the gate needs; {stored}"


def runner_wide(verdict: Verdict) -> str | None:
    """``"runner-wide: 14 of 20 kernels below their levels (median -8.9%)"``, if so noted.

    The run-wide notes of roof-drop and time-regression (``rules.runnerwide``): in the
    headline, where a reader of many kernels' warnings sees first that they moved together;
    with `` on runner gpu-b, new to this baseline`` when the check noted a runner swap
    (``rules.new_runner``). A suite with placed kernels and kernels timed alone can have both
    notes: one line says both, so the headline does not hide the second.
    """
    shifts = [
        f.numbers for f in verdict.findings if f.kernel is None and "kernels_moved" in f.numbers
    ]
    if not shifts:
        return None
    runner = new_runner(verdict.notes)
    beyond = [text for numbers in shifts if (text := _beyond_shared(verdict, numbers))]
    return (
        "runner-wide: "
        + " and ".join(_moved_together(numbers) for numbers in shifts)
        + (f" on runner {runner}, new to this baseline" if runner else "")
        + (f"; beyond it: {', '.join(beyond)}" if beyond else "")
    )


def _moved_together(numbers: Mapping[str, Any]) -> str:
    """``14 of 20 kernels below their levels (median -8.9%)``; on time, ``slower than``."""
    moved = int(float(numbers["kernels_moved"] or 0))
    judged = int(float(numbers["kernels_judged"] or 0))
    change = float(numbers["median_relative_change"] or 0.0)
    where, measure = ("below" if change < 0 else "above"), ""
    if numbers.get("measure") == TIME_MEASURE:  # time-regression's: worse is slower
        where, measure = "slower than", " time"
    return f"{moved:,} of {judged:,} kernels {where} their levels (median {change:+.1%}{measure})"


def _beyond_shared(verdict: Verdict, numbers: Mapping[str, Any]) -> str:
    """``copy_5 -25.2%`` (and how many more): a kernel's own change on top of the shared one."""
    count = int(float(numbers.get("kernels_beyond") or 0))
    if not count:
        return ""
    key = str(numbers["worst_beyond_kernel"])
    name = next((k.name for k in verdict.kernels if k.key == key), key)
    more = f" and {count - 1} more" if count > 1 else ""
    change = float(numbers["worst_beyond_change"] or 0.0)
    return f"{shown_name(name, NAME_LIMIT)} {change:+.1%}{more}"


def other_kernels(verdict: Verdict, baseline_s: float) -> str:
    """What the GPU time compares when kernels missing or new hold much of it, else "".

    ``, not the same kernels: 1,000 missing (20.2 ms at baseline); 1.00× over the 1,000 in
    both`` where they hold ``SET_CHANGE_SHARE`` of the baseline's time or more. The GPU time
    compares the run's total with its baseline's: when half the suite did not run (a
    benchmark binary that crashed midway), it read as a 2x speed-up. A kernel ``new`` for
    want of baseline runs (fewer than ``min_runs``) has a baseline time: it is in both.
    """
    missing = [k for k in verdict.kernels if k.status == KernelStatus.MISSING]
    run = [k for k in verdict.kernels if k.status != KernelStatus.MISSING]
    unbased = {
        s: [k for k in run if k.status == s and not baseline_time(k.baseline)]
        for s in (KernelStatus.NEW, KernelStatus.ACCEPTED)
    }
    gone = sum(baseline_time(k.baseline) or 0.0 for k in missing)
    added = {s: sum(k.time_s for k in kernels) for s, kernels in unbased.items()}
    if max(gone, sum(added.values())) < SET_CHANGE_SHARE * baseline_s:
        return ""
    said = [f"{len(missing):,} missing ({fmt_seconds(gone)} at baseline)"] if missing else []
    said += [f"{len(k):,} {s} ({fmt_seconds(added[s])})" for s, k in unbased.items() if k]
    both = [k for k in run if baseline_time(k.baseline)]
    before = sum(baseline_time(k.baseline) or 0.0 for k in both)
    if both and before > 0:
        ratio = sum(k.time_s for k in both) / before
        said.append(f"{fmt_ratio(ratio)} over the {len(both):,} in both")
    return ", not the same kernels: " + "; ".join(said)


def time_story(verdict: Verdict, *, code: bool = True) -> str:
    """What got how much slower and why, in one line (markdown when ``code``, else plain)."""

    def esc(text: str) -> str:
        return escape_text(text, limit=TEXT_LIMIT) if code else text

    parts = []
    across = device_story(verdict)
    if across:
        parts.append(esc(across))
    elif verdict.baseline is not None and verdict.baseline.time_s:
        total = time_change(verdict.time_s, verdict.baseline.time_s)
        parts.append(esc(f"GPU time {total}{other_kernels(verdict, verdict.baseline.time_s)}"))
    kernel = largest_slowdown(verdict)
    if kernel is not None and kernel.baseline is not None:
        # Cut like the markdown's: a CUTLASS name would fill the terminal's headline.
        shown = shown_name(kernel.name, NAME_LIMIT)
        name = escape_code(shown) if code else shown
        text = f" {time_change(kernel.time_s, baseline_time(kernel.baseline))}"
        old = rebound(kernel)
        if old:
            text += f", bound by {kernel.binding} instead of {old}"
            text += f" ({fmt_pct(kernel.percent_of_baseline_roof)} of its {old} roof)"
        parts.append(f"{esc('slowest:')} {name}{esc(text)}")
    shared = runner_wide(verdict)
    if shared:
        parts.append(esc(shared))
    return " · ".join(parts)
