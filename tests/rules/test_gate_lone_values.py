"""A nightly series of one value (a new kernel) is judged as ``judge_from`` judges it, unstepped."""

from __future__ import annotations

import numpy as np
import pytest

from rules.stats import GateOptions, gate
from rules.stats.gate import judge_from, judge_latest_replayed


def test_lone_values_are_judged_as_judge_from_judges_them(monkeypatch: pytest.MonkeyPatch) -> None:
    opts = GateOptions()
    rng = np.random.default_rng(5)
    series = [np.array([v]) for v in rng.uniform(0.5, 90.0, 40)]
    series += [np.array([np.nan, 7.0]), np.array([]), 50 + rng.normal(0, 1, 12)]
    expected = [judge_from(np.array([s[0]]), 0, np.nan, opts, True) for s in series[:40]]
    expected.append(judge_from(np.array([7.0]), 0, np.nan, opts, True))  # NaNs are dropped
    judged_sizes: list[int] = []

    def counted(values: np.ndarray, *args: object, **kwargs: object) -> object:
        judged_sizes.append(values.size)
        return judge_from(values, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gate, "judge_from", counted)
    judged, replays = judge_latest_replayed(series, options=opts)
    assert judged[:41] == expected
    assert np.isnan(judged[41].current) and replays[41] is None
    assert judged[42].enough and len(replays) == len(series)
    assert judged_sizes == [12]  # a value with nothing before it is not judged one by one
