"""A PR measured a few nights after a rise on main is judged as main's own nightly judges it.

A real Metal history (real-juliagpu-metaljl-033, its values as roof shares): 96 nights near
1.0, then main rose, and the five nights since alternate 2.46, 2.37, 1.85, 1.85, 2.47 (night
101, 1.90, was pending). A PR that changed nothing measured 1.82 and re-measured 1.83: it
failed "regressed (confirmed)" at -23% against the young segment's level, 2.37 with the
detector's noise (1%), though main produced those values twice in the same nights, and
main's nightly on them only warned: a run in a segment of fewer than ``SETTLED`` nights must
also be worse than the level before the change.
"""

from __future__ import annotations

from datetime import UTC, datetime

from factories import make_kernel, make_run, night_run

from rules import RuleContext, builtin_catalog, evaluate
from rules.frames import history_from_runs

START = datetime(2026, 1, 1, 3, tzinfo=UTC)
A100 = builtin_catalog().lookup("A100-SXM4-80GB").roof()
DRAM = A100.bandwidth_byte_per_s["dram"]
BYTES = 8e9
SCALE = 25.4  # percent of the dram roof per unit of the series
_METALJL_033 = """
    0.93 0.932 0.957 0.939 1.138 1.069 0.963 0.968 1.077 0.943 1.219 0.964 0.931 0.917
    0.937 0.928 1.095 0.948 1.203 1.19 0.959 0.971 0.963 0.955 0.947 0.982 0.941 1.143
    0.974 0.944 0.966 0.963 0.954 1.137 0.937 0.964 0.98 0.984 0.972 1.005 1.021 0.999
    0.973 0.987 0.983 0.99 1.0 1.002 1.181 1.198 1.175 0.988 0.993 0.988 2.706 1.001 2.73
    1.003 1.0 0.996 0.997 1.139 0.982 1.147 0.975 2.72 0.996 0.986 0.999 0.998 0.985 0.989
    0.982 1.028 1.116 0.973 0.985 0.988 1.148 0.999 0.994 0.99 0.977 0.967 0.983 1.124
    0.966 1.14 1.035 1.209 1.032 1.04 1.013 1.029 1.03 1.03 2.461 2.365 1.847 1.846 2.47
    1.897 1.822 1.832
"""
METALJL_033 = [float(v) for v in _METALJL_033.split()]
PR_NIGHT = 102


def _kernel(value: float):
    time_s = BYTES / DRAM / (value * SCALE / 100)
    return make_kernel("k33", flops={"fp32": 2e9}, dram_bytes=BYTES, time_s=time_s)


def _pr_verdict(values: list[float], pr: float, again: float):
    history = [night_run(_kernel(v), night, start=START) for night, v in enumerate(values)]
    run, rerun = (
        make_run(commit="c" * 40, kind="pr", timestamp=START, kernels=[_kernel(v)])
        for v in (pr, again)
    )
    ctx = RuleContext(run=run, reruns=(rerun,), roof=A100, history=history_from_runs(history, A100))
    return evaluate(ctx).verdict


def _drop(verdict):
    (drop,) = [f for f in verdict.findings if f.rule == "roof-drop"]
    return drop


def test_an_unchanged_pr_after_a_rise_is_not_a_confirmed_regression() -> None:
    base = METALJL_033[:PR_NIGHT]
    verdict = _pr_verdict(base, METALJL_033[PR_NIGHT], METALJL_033[PR_NIGHT + 1])
    drop = _drop(verdict)
    assert drop.severity.value == "warn", drop.message
    assert verdict.conclusion.value != "fail"
    # re-measured already: the warning says so rather than asking for a re-measure again
    assert "not confirmed by its re-measurement, re-measured " in drop.message, drop.message
    assert "re-measure to confirm" not in drop.message


def test_a_pr_below_the_level_before_the_rise_still_fails() -> None:
    """Worse than the young segment and than the nights before the change: confirmed."""
    verdict = _pr_verdict(METALJL_033[:PR_NIGHT], 0.8, 0.81)
    assert _drop(verdict).severity.value == "fail"
    assert verdict.conclusion.value == "fail"


def test_a_pr_below_a_settled_level_still_fails() -> None:
    """Six steady nights after the rise the segment is settled: judged against it alone."""
    steady = [2.41, 2.45, 2.43, 2.44, 2.42, 2.44]
    verdict = _pr_verdict([*METALJL_033[:96], *steady], 1.82, 1.83)
    assert _drop(verdict).severity.value == "fail"
    young = _pr_verdict([*METALJL_033[:96], *steady[:5]], 1.82, 1.83)
    assert _drop(young).severity.value == "warn", "unsettled, as the nightly gate reads it"
