"""The trend cell: block characters, and the mark before the first run on a new runner."""

from __future__ import annotations

from service.render.sparklines import RUNNER_MARK, SPARK_POINTS, sparkline

LEVELS = [10.0, 10.0, 10.0, 5.0, 5.0]


def test_the_mark_goes_before_the_first_point_on_the_new_runner():
    assert sparkline(LEVELS, runner_since=3) == f"███{RUNNER_MARK}▁▁"
    assert sparkline(LEVELS) == "███▁▁"


def test_the_mark_counts_from_the_points_shown():
    values = [10.0] * (SPARK_POINTS + 4) + [5.0]
    line = sparkline(values, runner_since=len(values) - 1)  # only the newest point is new
    assert line == "█" * (SPARK_POINTS - 1) + RUNNER_MARK + "▁"


def test_no_mark_outside_the_points_shown_or_across_a_gap():
    values = [10.0] * (SPARK_POINTS + 4)
    assert RUNNER_MARK not in sparkline(values, runner_since=2)  # before the first shown
    assert RUNNER_MARK not in sparkline(LEVELS, runner_since=0)  # every point on the new one
    assert RUNNER_MARK not in sparkline(LEVELS, runner_since=len(LEVELS))  # none shown on it
    assert RUNNER_MARK not in sparkline([10.0, float("nan"), 10.0, 5.0], runner_since=3)
