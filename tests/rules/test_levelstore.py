"""rules.levelstore: stored base-branch levels are exactly the computed ones, or absent;
evaluate reads the stored ones and returns those it computed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

import rules.levelstore as levelstore
from rules import evaluate
from rules.context import RuleContext
from rules.levelstore import LevelCache, StoredLevels, cached_levels, level_digest
from rules.stats import GateOptions, current_levels, judge_latest_many, judge_latest_replayed
from rules.testing import load_cases


def histories() -> list[np.ndarray]:
    """Quiet, noisy, stepped and too-short series of different lengths."""
    rng = np.random.default_rng(3)
    step = 80 * (1 + 0.01 * rng.standard_normal(40))
    step[30:] *= 0.9
    return [
        80 * (1 + 0.01 * rng.standard_normal(30)),
        50 * (1 + 0.06 * rng.standard_normal(90)),
        step,
        np.array([70.0, 71.0]),
    ]


OPTIONS = GateOptions(family_size=4)
CASES = str(Path(__file__).parent / "cases" / "roof-drop.yml")


def test_cached_levels_are_the_computed_ones_and_a_second_check_computes_none() -> None:
    cache = LevelCache()
    first = cached_levels(cache, histories(), OPTIONS)
    assert first == current_levels(histories(), options=OPTIONS)
    assert len(cache.fresh) == 3  # the two-night series is too short to have a level to keep
    stored = LevelCache(known=dict(cache.fresh))  # what the next check loads
    assert cached_levels(stored, histories(), OPTIONS) == first
    assert stored.fresh == {}  # the short one is computed again, and not worth storing


def test_a_partly_stored_batch_gives_what_the_whole_batch_gives() -> None:
    # The detector scans a batch as one matrix; each row must not depend on the others.
    cache, series = LevelCache(), histories()
    cached_levels(cache, series[1:3], OPTIONS)
    assert cached_levels(cache, series, OPTIONS) == current_levels(series, options=OPTIONS)


def test_the_digest_covers_the_values_and_the_options() -> None:
    values = histories()[0]
    digest = level_digest(values, OPTIONS)
    assert level_digest(values.copy(), OPTIONS) == digest
    assert level_digest(values.astype(np.float32).astype(float), OPTIONS) != digest
    assert level_digest(values[1:], OPTIONS) != digest
    assert level_digest(values, GateOptions(family_size=5)) != digest
    assert level_digest(values, GateOptions(family_size=4, confirm_runs=3)) != digest
    assert level_digest(values, OPTIONS, code=b"another gate") != digest


def test_without_a_cache_the_levels_are_computed() -> None:
    assert cached_levels(None, histories(), OPTIONS) == current_levels(histories(), options=OPTIONS)


def nightly_series(count: int = 300) -> list[np.ndarray]:
    """Series as a nightly check judges them: drops and rises at every age (some confirmed
    within the replayed nights, some not yet), dips, NaNs, and short series.
    """
    rng = np.random.default_rng(11)
    out = []
    for i in range(count):
        n = int(rng.integers(2, 60))
        values = 60 * (1 + 0.02 * (1 + i % 4) * rng.standard_normal(n))
        at = int(rng.integers(0, n))
        values[at:] *= rng.choice([0.7, 0.85, 0.95, 1.0, 1.1, 1.3])
        values[int(rng.integers(0, n))] *= rng.choice([1.0, 0.6])
        if i % 7 == 0:
            values[int(rng.integers(0, n))] = np.nan
        out.append(values)
    return out


def test_the_nightly_replays_give_the_levels_computed_without_them() -> None:
    series, options = nightly_series(), GateOptions(family_size=300)
    judged, replays = judge_latest_replayed(series, options=options)
    assert judged == judge_latest_many(series, options=options)
    shared = current_levels(series, options=options, replays=replays)
    assert shared == current_levels(series, options=options)
    cache = LevelCache()
    assert cached_levels(cache, series, options, replays) == shared


def pr_context(stored: StoredLevels | None) -> RuleContext:
    ctx = next(c for c in load_cases(CASES) if c.id == "roof-drop/fail_gemv_fusion_lost").context()
    return replace(ctx, stored_levels=stored)


def test_evaluate_returns_the_levels_it_computed_and_reads_the_stored_ones(monkeypatch) -> None:
    first = evaluate(pr_context(StoredLevels()))
    assert len(first.levels_to_store) == 1  # gemv's level, worth storing
    stored = StoredLevels(known=first.levels_to_store)
    computed: list[int] = []
    compute = levelstore.current_levels

    def counting(histories, **kw):
        computed.append(len(histories))
        return compute(histories, **kw)

    monkeypatch.setattr(levelstore, "current_levels", counting)
    again = evaluate(pr_context(stored))
    assert again.verdict == first.verdict and again.levels_to_store == {}
    assert computed == [0]  # read, none computed
    assert dict(stored.known) == dict(first.levels_to_store)  # the stored ones are not written to


def test_a_context_that_keeps_no_levels_gets_none_to_store() -> None:
    judged = evaluate(pr_context(None))
    assert judged.levels_to_store == {}
    assert judged.verdict == evaluate(pr_context(StoredLevels())).verdict


def test_a_nightly_run_returns_the_levels_the_next_pr_reads() -> None:
    cases = load_cases(CASES)
    night = next(
        c for c in cases if c.id == "roof-drop/fail_nightly_the_second_night_confirms_the_drop"
    )
    judged = evaluate(replace(night.context(), stored_levels=StoredLevels()))
    assert judged.levels_to_store  # the history with tonight's value, as the next PR asks
    untrusted = replace(night.context(), stored_levels=StoredLevels(), trusted=False)
    assert evaluate(untrusted).levels_to_store == {}  # an untrusted night sets no level
