"""``env-mismatch``: the baseline was measured elsewhere, so it is left out or caveated."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd

from rules.base import Rule, RuleOptions
from rules.context import RuleContext
from rules.gated import GateDecisions
from rules.verdict import Finding, Severity, Stability

LABELS = {
    "device": "device",
    "roof_source": "roof",
    "driver": "driver",
    "clock_control": "clock control",
    "cache_control": "cache control",
}


def differences(history: pd.DataFrame, env: dict[str, str | None]) -> list[str]:
    """One phrase per environment column on which some baseline runs differ from this run."""
    phrases = []
    for column, label in LABELS.items():
        value = env.get(column)
        if value is None:
            continue
        seen = history[column].dropna().astype(str)
        other = sorted(set(seen[seen != value]))
        if other:
            runs = history.loc[seen[seen != value].index, "run_id"].nunique()
            phrases.append(f"{label} {', '.join(other)} in {runs} run(s) vs {value} here")
    return phrases


def unknown_here(history: pd.DataFrame, env: dict[str, str | None]) -> list[str]:
    """Environment facts the baseline records but this run does not."""
    return [LABELS[c] for c, v in env.items() if v is None and history[c].notna().any()]


class EnvMismatch(Rule):
    """The run's device, driver, clocks or profiler settings differ from its baseline's.

    **Anti-pattern**

    | this run | baseline runs (n=14) | effect |
    |---|---|---|
    | driver 550.54 | driver 535.104 (9 runs) | 9 runs left out |
    | H100-SXM5 | A100-SXM4-80GB (all 14) | no comparison at all |

    Percent of roof moves by several percent with unlocked clocks, a new driver or a
    different cache policy: judging across them raises false alarms (or hides real drops).
    roofguard compares like with like: baseline runs measured differently are left out
    (``fail`` would be wrong, so this is a warning when nothing comparable is left, and
    information otherwise). Runs from a runner that failed its health preflight are left out
    too.

    **Best practice**

    Pin the runner's environment: lock clocks (``ncu --clock-control base``), keep the
    cache policy fixed (``--cache-control all``), and upgrade drivers on all baseline runners
    at once; after a deliberate change, let a few nightly runs rebuild the baseline.
    """

    id = "env-mismatch"
    group = "environment"
    default_severity = Severity.WARN
    stability = Stability.STABLE

    class Options(RuleOptions):
        """Options of env-mismatch."""

        partial_severity: Severity = Severity.INFO

    def check(self, ctx: RuleContext, opts: Options, gate: GateDecisions) -> Iterator[Finding]:
        """One run-level finding when baseline runs were left out or cannot be checked."""
        history = ctx.history
        if history.empty:
            return
        total = history["run_id"].nunique()
        kept = ctx.comparable_history["run_id"].nunique()
        numbers = {"baseline_runs": total, "comparable_runs": kept}
        if kept < total:  # why, in words (every run kept: nothing to say)
            phrases = differences(history, ctx.environment)
            untrusted = history.loc[history["trusted"].eq(False), "run_id"].nunique()
            if untrusted:
                phrases.append(f"{untrusted} run(s) from a runner that failed its health check")
            nothing = kept == 0
            yield self.finding(
                ctx,
                None,
                (
                    "no comparable baseline, not compared: "
                    if nothing
                    else f"{total - kept} of {total} baseline runs left out: "
                )
                + "; ".join(phrases),
                severity=None if nothing else opts.partial_severity,
                numbers=numbers,
            )
        missing = unknown_here(history, ctx.environment)
        if missing:
            yield self.finding(
                ctx,
                None,
                f"this run does not record its {', '.join(missing)}: compared with the "
                "baseline without checking them",
                severity=Severity.INFO,
                numbers=numbers,
            )
