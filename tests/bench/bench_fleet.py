"""Fleet benchmark: 2,000 kernels x 30 nights, then stable and slowed pull requests.

Issue 16: with one measurement per kernel and a per-kernel threshold, every stable PR of a
2,000-kernel project failed. This benchmark replays the PR gate at fleet scale:

* history: 2,000 kernels x 30 nights of percent of roof, per-kernel CV 0.5-5% (log-uniform),
  Student-t noise (5 degrees of freedom: heavy tails) and the odd clock dip (0.2% of
  measurements run 5-30% slower);
* stable PRs (default 200): every kernel measured once more from the same distribution;
  the suspects are re-measured (fresh draws) and the gate decides (``check --suspects`` then
  ``check --rerun``);
* slowed PRs: 10 kernels per PR really 5%, 10% or 20% slower (both measurements).

Reported side by side in one run: the share of stable PRs that fail, suspects per PR, recall
of the planted drops (all kernels and kernels with noise <= 2%), for the shipped gate
(Bonferroni over the re-measured kernels), the same gate with Benjamini-Hochberg on the
re-measurements instead (the FDR alternative), the gate without a re-measure step (suspects
warn, only 25% or 4x the kernel's own largest one-night deviation at z >= 10 fails at once),
and the old per-kernel check (compare_to_baseline of
one value, the reference). Plus the nightly gate (judge_latest_many) on stable nights.

Run: ``python tests/bench/bench_fleet.py [--prs 200] [--kernels 2000] [--markdown FILE]``.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tables import publish

from rules.stats import (
    MAD_SCALE,
    CompareOptions,
    GateOptions,
    Level,
    OwnDips,
    compare_to_baseline,
    current_levels,
    judge_latest_many,
    judge_measurement,
    own_dips,
)

NIGHTS = 30
DIP_RATE = 0.002
TAIL_DF = 5
PLANTED = 10
MAGNITUDES = (0.05, 0.10, 0.20)


@dataclass(frozen=True)
class Fleet:
    """The kernels' true levels and noise, and their history (kernels x nights)."""

    level: np.ndarray
    cv: np.ndarray
    history: np.ndarray


def measure(rng: np.random.Generator, fleet: Fleet, shape: tuple[int, ...]) -> np.ndarray:
    """Fresh measurements of every kernel: t-distributed noise and the odd clock dip."""
    t = rng.standard_t(TAIL_DF, size=(*shape, fleet.level.size)) / math.sqrt(
        TAIL_DF / (TAIL_DF - 2)
    )
    values = fleet.level * (1 + fleet.cv * t)
    dips = rng.random(values.shape) < DIP_RATE
    return np.where(dips, values * (1 - rng.uniform(0.05, 0.30, values.shape)), values)


def make_fleet(rng: np.random.Generator, kernels: int) -> Fleet:
    level = rng.uniform(30, 90, kernels)
    cv = np.exp(rng.uniform(math.log(0.005), math.log(0.05), kernels))
    base = Fleet(level, cv, np.empty((kernels, 0)))
    return Fleet(level, cv, measure(rng, base, (NIGHTS,)).T)


# --- the gates -----------------------------------------------------------------------------


def gate_options(kernels: int) -> GateOptions:
    return GateOptions(family_size=kernels)


def screen(
    levels: Sequence[Level],
    values: np.ndarray,
    mode: str = "screen",
    dips: Sequence[OwnDips] | None = None,
) -> np.ndarray:
    """Suspects (mode screen) or failures (mode single, ``dips``: the kernels' own)."""
    opts = gate_options(len(levels))
    own = [OwnDips()] * len(levels) if dips is None else dips
    judged = [
        judge_measurement(lv, float(v), mode=mode, options=opts, own_dips=d)  # type: ignore[arg-type]
        for lv, v, d in zip(levels, values, own, strict=True)
    ]
    if mode == "single":
        return np.array([j.regressed for j in judged])
    return np.array([j.suspect for j in judged])


def confirm_bonferroni(
    levels: Sequence[Level], first: np.ndarray, again: np.ndarray, suspects: np.ndarray
) -> np.ndarray:
    """The shipped confirmation: each re-measured suspect on its own, Bonferroni over them."""
    opts = GateOptions(family_size=max(int(suspects.sum()), 1))
    failed = np.zeros(suspects.size, dtype=bool)
    for i in np.flatnonzero(suspects):
        j = judge_measurement(
            levels[i], float(first[i]), [float(again[i])], mode="confirm", options=opts
        )
        failed[i] = j.regressed
    return failed


def _tail(z: float, df: float) -> float:
    """One-sided tail probability of robust z under the gate's t noise model."""
    from scipy.special import stdtr, stdtrit

    scale = MAD_SCALE * float(stdtrit(df, 0.75))
    return float(stdtr(df, -abs(z) * scale))


def confirm_bh(
    levels: Sequence[Level], first: np.ndarray, again: np.ndarray, suspects: np.ndarray
) -> np.ndarray:
    """The FDR alternative: Benjamini-Hochberg at the same 5% over the re-measured suspects."""
    opts = GateOptions()
    idx = np.flatnonzero(suspects)
    failed = np.zeros(suspects.size, dtype=bool)
    if idx.size == 0:
        return failed
    zs = np.array([levels[i].z(float(again[i])) for i in idx])
    rel = np.array([(again[i] - levels[i].level) / levels[i].level for i in idx])
    p = np.array([_tail(z, opts.tail_df) if z < 0 else 1.0 for z in zs])
    order = np.argsort(p)
    passed = p[order] <= opts.family_error * np.arange(1, idx.size + 1) / idx.size
    k = int(np.max(np.flatnonzero(passed)) + 1) if passed.any() else 0
    chosen = order[:k]
    keep = (-zs[chosen] >= opts.z_threshold) & (-rel[chosen] >= opts.min_effect)
    failed[idx[chosen[keep]]] = True
    return failed


def old_check(history: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Today's check before issue 16: compare_to_baseline of one value per kernel."""
    opts = CompareOptions()
    return np.array(
        [
            compare_to_baseline(h, float(v), options=opts).regressed
            for h, v in zip(history, values, strict=True)
        ]
    )


# --- one PR and the report -------------------------------------------------------------------

Confirm = Callable[[Sequence[Level], np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass
class Tally:
    prs: int = 0
    failed_prs: int = 0
    suspects: int = 0
    false_failures: int = 0
    planted: int = 0
    found: int = 0
    planted_quiet: int = 0
    found_quiet: int = 0
    failing: Counter[int] = field(default_factory=Counter)  # stable kernels failed, by index


def run_prs(
    rng: np.random.Generator,
    fleet: Fleet,
    levels: Sequence[Level],
    prs: int,
    magnitude: float,
    confirm: Confirm,
) -> Tally:
    tally = Tally()
    kernels = fleet.level.size
    for _ in range(prs):
        first, again = measure(rng, fleet, (2,))
        slowed = rng.choice(kernels, PLANTED, replace=False) if magnitude else np.array([], int)
        first[slowed] *= 1 - magnitude
        again[slowed] *= 1 - magnitude
        suspects = screen(levels, first)
        failed = confirm(levels, first, again, suspects)
        planted = np.zeros(kernels, dtype=bool)
        planted[slowed] = True
        quiet = planted & (fleet.cv <= 0.02)
        tally.prs += 1
        tally.failed_prs += bool((failed & ~planted).any()) if magnitude else bool(failed.any())
        tally.suspects += int((suspects & ~planted).sum())
        tally.false_failures += int((failed & ~planted).sum())
        tally.failing.update(int(i) for i in np.flatnonzero(failed & ~planted))
        tally.planted += int(planted.sum())
        tally.found += int((failed & planted).sum())
        tally.planted_quiet += int(quiet.sum())
        tally.found_quiet += int((failed & quiet).sum())
    return tally


def single_and_old(
    rng: np.random.Generator, fleet: Fleet, levels: Sequence[Level], prs: int
) -> tuple[float, float, float]:
    """Share of stable PRs failing without a re-measure step, and with the old check."""
    single = old = 0
    suspects = 0
    dips = own_dips(list(fleet.history), gate_options(fleet.level.size))
    for _ in range(prs):
        (values,) = measure(rng, fleet, (1,))
        single += bool(screen(levels, values, mode="single", dips=dips).any())
        suspects += int(screen(levels, values).sum())
        old += bool(old_check(fleet.history, values).any())
    return single / prs, old / prs, suspects / prs


def nightly_false_failures(rng: np.random.Generator, fleet: Fleet, nights: int) -> float:
    """Share of stable nights on which the nightly gate fails any kernel."""
    history = fleet.history
    failing = 0
    opts = gate_options(fleet.level.size)
    for _ in range(nights):
        (tonight,) = measure(rng, fleet, (1,))
        history = np.hstack([history, tonight[:, None]])
        judged = judge_latest_many(list(history), options=opts)
        failing += any(j.regressed for j in judged)
    return failing / nights


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def _merge(tallies: Sequence[Tally]) -> Tally:
    """The counts summed (``failing`` stays per history: kernel indices are per history)."""
    total = Tally()
    for t in tallies:
        for name in vars(total):
            if name != "failing":
                setattr(total, name, getattr(total, name) + getattr(t, name))
    return total


def repeats(tallies: Sequence[Tally]) -> str:
    """Whether the same kernels fail PR after PR: distinct failing kernels, most on one."""
    distinct = sum(len(t.failing) for t in tallies)
    most = max((max(t.failing.values(), default=0) for t in tallies), default=0)
    return f"{distinct} distinct kernels (the most failures of any one kernel: {most})"


@dataclass(frozen=True)
class Project:
    """One history (a fleet) and its levels; PRs are spread over several projects."""

    fleet: Fleet
    levels: Sequence[Level]


def projects(rng: np.random.Generator, kernels: int, count: int) -> list[Project]:
    out = []
    for _ in range(count):
        fleet = make_fleet(rng, kernels)
        out.append(
            Project(fleet, current_levels(list(fleet.history), options=gate_options(kernels)))
        )
    return out


def over(
    rng: np.random.Generator, ps: Sequence[Project], prs: int, magnitude: float, confirm: Confirm
) -> tuple[Tally, list[Tally]]:
    """PRs spread evenly over the projects: the merged tally and each project's."""
    each = max(prs // len(ps), 1)
    tallies = [run_prs(rng, p.fleet, p.levels, each, magnitude, confirm) for p in ps]
    return _merge(tallies), tallies


def report(kernels: int, prs: int, seed: int, nights: int, fleets: int = 4) -> str:
    rng = np.random.default_rng(seed)
    ps = projects(rng, kernels, fleets)
    fleet, levels = ps[0].fleet, ps[0].levels
    lines = [
        f"{kernels} kernels x {NIGHTS} nights (CV 0.5-5%, t{TAIL_DF} noise, {DIP_RATE:.1%} clock "
        f"dips of 5-30%), seed {seed}; {prs} PRs per row over {fleets} independent histories; "
        f"slowed PRs: {PLANTED} kernels each (a quarter as many PRs).",
        "",
        "| gate | PRs | stable PRs failing (worst history) | suspects / PR (share of kernels) | "
        "recall 5% | recall 10% | recall 20% | recall 10%, noise <= 2% | "
        "slowed PRs that also fail a stable kernel |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    who = []
    for name, confirm in (
        ("re-measure, Bonferroni (shipped)", confirm_bonferroni),
        ("re-measure, BH (FDR)", confirm_bh),
    ):
        stable, each = over(rng, ps, prs, 0.0, confirm)
        worst = max(t.failed_prs / t.prs for t in each)
        who.append(f"{name}: {stable.false_failures} false failures on {repeats(each)}.")
        slowed = {m: over(rng, ps, max(prs // 4, 10), m, confirm)[0] for m in MAGNITUDES}
        per_pr = stable.suspects / stable.prs
        lines.append(
            f"| {name} | {stable.prs} | {_pct(stable.failed_prs, stable.prs)} ({worst:.1%}) | "
            f"{per_pr:.1f} ({_pct(per_pr, kernels)}) | "
            + " | ".join(_pct(slowed[m].found, slowed[m].planted) for m in MAGNITUDES)
            + f" | {_pct(slowed[0.10].found_quiet, slowed[0.10].planted_quiet)} | "
            + _pct(
                sum(slowed[m].failed_prs for m in MAGNITUDES),
                sum(slowed[m].prs for m in MAGNITUDES),
            )
            + " |"
        )
    single, old, suspects = single_and_old(rng, fleet, levels, prs)  # the first history
    lines.append(
        "| no re-measure step (25%, or 4x the kernel's own largest dip, at z >= 10 fails at "
        f"once; first history) | {prs} | "
        f"{single:.1%} | {suspects:.1f} | | | | | |"
    )
    lines.append(
        f"| old check (compare_to_baseline, one value; first history) | {prs} | {old:.1%} | "
        "| | | | | |"
    )
    lines += ["", "Stable PRs, which kernels fail:", "", *(f"* {w}" for w in who)]
    if nights:
        share = nightly_false_failures(rng, fleet, nights)
        lines += [
            "",
            f"Nightly gate (judge_latest_many, confirm_runs 2) on {nights} stable nights: "
            f"{share:.1%} of nights fail.",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--prs", type=int, default=200, help="stable PRs per row")
    parser.add_argument("--nights", type=int, default=10, help="stable nights for the nightly gate")
    parser.add_argument("--seed", type=int, default=2, help="test seed (1 is the training seed)")
    parser.add_argument("--fleets", type=int, default=4, help="independent histories")
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    publish(
        lambda: report(args.kernels, args.prs, args.seed, args.nights, args.fleets), args.markdown
    )


if __name__ == "__main__":
    main()
