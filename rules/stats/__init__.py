"""Noise-aware statistics: baselines, change points and the gate (a public contract).

* ``rules.stats.baseline``: ``compare_to_baseline``, one value against a baseline (robust z).
* ``rules.stats.changepoints``: ``change_points`` / ``change_points_many``, the offline
  detector behind the digest (windows in ``rules.stats.windows``, placement and confirmation
  in ``rules.stats.refine``).
* ``rules.stats.gate``: ``judge_latest`` (the nightly gate: confirmed level changes), and
  ``rules.stats.pr``: ``judge_measurement`` (the PR gate: screen, re-measure, decide), with
  thresholds that know how many kernels a verdict judges; ``rules.stats.dips``: a kernel's
  own one-night deviations (a PR without a re-measure step fails at once far beyond them);
  ``rules.stats.modes``: two-level kernels (a mixture of two modes, ``two_modes``,
  ``mode_words``), and ``rules.stats.modelevel``: a run past both modes judged in the
  within-mode noise.
* ``rules.stats.runs``: a change is a run of nights beyond noise; ``rules.stats.batchreplay``
  replays the last nights of many kernels at once, with the per-kernel result.
* ``rules.stats.options``: every knob (``CompareOptions``, ``ChangePointOptions``,
  ``GateSettings``, ``GateOptions``); ``rules.stats.constants``: every fixed number, with its
  evidence.

Every name below is importable from ``rules.stats`` itself.
"""

from rules.stats.baseline import Comparison, compare_to_baseline
from rules.stats.changepoints import ChangePoint, change_points, change_points_many
from rules.stats.constants import (
    BLOCK_POINTS,
    BLOCKS_PLACED_TOGETHER,
    MAD_SCALE,
    MEDIAN_SE,
    OUTLIER_Z,
    TRIMMING,
)
from rules.stats.dips import OwnDips, largest_dip, own_dips
from rules.stats.gate import (
    Judgement,
    confirm_z,
    judge_latest,
    judge_latest_many,
    judge_latest_replayed,
    nightly_z,
    stage_z,
)
from rules.stats.levels import Level
from rules.stats.modes import Modes, mode_words, two_modes, visit_words, visited_once
from rules.stats.options import (
    GATE_Z,
    ChangePointOptions,
    CompareOptions,
    GateOptions,
    GateSettings,
)
from rules.stats.pr import (
    GateMode,
    at_its_modes,
    conservative_median,
    current_levels,
    judge_measurement,
    judge_measurements,
    median_of,
    screens_worse,
)
from rules.stats.robust import Direction, FloatArray, fast_median, robust_center_spread
from rules.stats.runs import Replay
from rules.stats.unsettled import at_the_change
from rules.stats.windows import ChangePointScan

__all__ = [
    "BLOCKS_PLACED_TOGETHER",
    "BLOCK_POINTS",
    "GATE_Z",
    "MAD_SCALE",
    "MEDIAN_SE",
    "OUTLIER_Z",
    "TRIMMING",
    "ChangePoint",
    "ChangePointOptions",
    "ChangePointScan",
    "CompareOptions",
    "Comparison",
    "Direction",
    "FloatArray",
    "GateMode",
    "GateOptions",
    "GateSettings",
    "Judgement",
    "Level",
    "Modes",
    "OwnDips",
    "Replay",
    "at_its_modes",
    "at_the_change",
    "change_points",
    "change_points_many",
    "compare_to_baseline",
    "confirm_z",
    "conservative_median",
    "current_levels",
    "fast_median",
    "judge_latest",
    "judge_latest_many",
    "judge_latest_replayed",
    "judge_measurement",
    "judge_measurements",
    "largest_dip",
    "median_of",
    "mode_words",
    "nightly_z",
    "own_dips",
    "robust_center_spread",
    "screens_worse",
    "stage_z",
    "two_modes",
    "visit_words",
    "visited_once",
]
