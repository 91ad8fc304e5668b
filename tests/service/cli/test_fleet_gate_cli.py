"""Issue 16's scenario through the real command line, at a size CI affords.

``tests/bench/bench_pr_cli.py`` is the full-size run (2,000 kernels, 30 PRs); this is the
same code at 300 kernels: 30 nights through the nightly job, then PRs through the Action's
loop (``check --suspects``, the suspects measured again, ``check --rerun``). The seed is
fixed, so what is asserted is this history's outcome, not a rate.
"""

from __future__ import annotations

import numpy as np
import pytest
from bench_fleet import make_fleet, measure
from bench_pr_cli import (
    PLANTED,
    Tally,
    grow_history,
    kernel_name,
    one_pr,
    pr_args,
    quietly,
    regressed,
    report,
    write_run,
)

from collectors.schema import RunKind

pytestmark = pytest.mark.slow
KERNELS = 300


@pytest.fixture(scope="module")
def fleet_history(tmp_path_factory):
    work = tmp_path_factory.mktemp("fleet")
    fleet = make_fleet(np.random.default_rng(16), KERNELS)
    db = f"sqlite:///{work / 'history.db'}"
    grow_history(db, work, fleet)
    return db, work, fleet


def prs(fleet_history, kind: str, count: int, seed: int) -> Tally:
    db, work, fleet = fleet_history
    rng, tally = np.random.default_rng(seed), Tally()
    for n in range(count):
        one_pr(db, work, fleet, rng, kind, n, tally)
    return tally


def test_stable_prs_pass_though_a_few_kernels_look_worse_once(fleet_history):
    stable = prs(fleet_history, "stable", 4, seed=1)
    assert stable.failed == 0 and stable.false_regressed == 0
    assert stable.improved == 0, "one heavy-tailed value is not an improvement"
    assert sum(stable.suspects) > 0, "some kernels were suspects and were re-measured"


def test_a_pr_with_kernels_really_slower_fails_naming_only_them(fleet_history):
    slowed = prs(fleet_history, "slowed", 2, seed=2)
    assert slowed.failed == 2 and slowed.false_regressed == 0
    assert slowed.planted_found >= 8, f"{slowed.planted_found} of 10 slowed kernels named"


def test_a_one_night_dip_is_cleared_by_the_re_measurement_alone(fleet_history):
    dips = prs(fleet_history, "dip", 2, seed=3)
    assert dips.failed == 0, "the re-measurements are normal: nothing is confirmed"
    assert dips.failed_without == 2, "one measurement of a 30% dip fails at once"


def test_a_run_measured_twice_whole_confirms_as_a_re_measure_of_the_suspects(fleet_history):
    """The fork PR's way: no job can re-measure just the suspects, so every kernel is
    measured twice and the second run is the re-measurement. Only the suspects are tested
    on it, so their bar is the one a re-measure of the suspects alone gets."""
    db, work, fleet = fleet_history
    rng = np.random.default_rng(5)
    first, again = measure(rng, fleet, ()), measure(rng, fleet, ())
    slowed = rng.choice(np.flatnonzero(fleet.cv <= 0.02), PLANTED, replace=False)
    first[slowed] *= 0.9
    again[slowed] *= 0.9
    tag = "twice" + "0" * 35
    args = pr_args(db, work, fleet, first, tag, "twice.json")
    day = fleet.history.shape[1]
    whole = write_run(work / "whole.json", report(fleet, again), tag, day, RunKind.PR)
    assert quietly([*args, "--rerun", str(whole)]) == 1
    named = regressed(work / "twice.json")
    assert named == {kernel_name(i) for i in slowed}
