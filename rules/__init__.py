"""Rules: roofline placement, findings and verdicts. Pure domain logic, no I/O.

This module is the package's public surface: ``service`` (and any other caller) imports from
``rules`` and from ``rules.stats`` (the statistics, a library of their own), never from the
modules behind them; ``lint-imports`` holds it to that ("rules is used through its facade").

* Judging a run: ``evaluate(ctx) -> Evaluation`` (the ``Verdict``, and the gate's levels for
  the caller to store) with a ``RuleContext`` and a ``RulesConfig``; ``with_findings`` restates
  a verdict by stored findings, ``conclude`` gives the conclusion of findings.
* The roofline: ``Roof``, ``Placement``, ``place``, ``place_kernel``, ``place_run``,
  ``place_chunk`` (kernels of one shape at once, on arrays), ``ridge_point``,
  ``percent_is_lower_bound``; the hardware catalog: ``builtin_catalog``,
  ``Catalog``, ``DeviceSpec``; ``at_report_clocks`` scales a datasheet roof to the clocks a
  report ran at (a ``ClockedRoof`` where other reports of the run record none).
* The why from the profiler: ``profile_changes`` (what moved between two records of a
  kernel), ``with_profile_changes`` (on each regressed kernel's worst finding).
* Like-for-like history: ``like_for_like_history`` (every run against the roof its
  kernel is usually bound by), ``binding_changes``, ``reference_binding``, ``series_references``.
* The verdict model: ``Verdict``, ``KernelVerdict``, ``GroupVerdict``, ``Finding``,
  ``KernelStatus`` ...
* History frames: ``HISTORY_COLUMNS``, ``trusted_rows`` (the rows a baseline is made of: an
  untrusted runner's are left out, on the run's card and on another).
* Across devices: ``DeviceBaseline`` (another card's history, for ``RuleContext``),
  ``device_levels``, ``level_roofs`` (each level's own roof of its card's, all at once),
  ``scale``, ``keeping``, ``forecast`` and ``predict`` (``rules.scaling``,
  ``rules.crossdevice``).
* The rules: ``all_rules()``, ``get_rule(id)`` and their reference (``rule_markdown``,
  ``options_table``). A rule's ``check`` receives the gate's ``GateDecisions``;
  ``gate_batches`` asks for them with ``GateBatch``es.
"""

from rules.batchplace import place_chunk
from rules.clocks import ClockedRoof, at_report_clocks
from rules.config import FailOn, IgnoreEntry, KernelGroup, RulesConfig, is_ignored
from rules.context import RuleContext
from rules.crossdevice import (
    DeviceBaseline,
    DeviceLevel,
    Forecast,
    Keeping,
    Scaling,
    device_levels,
    forecast,
    keeping,
    level_roofs,
    scale,
)
from rules.engine import Evaluation, conclude, evaluate, with_findings
from rules.errors import RuleDefinitionError, RuleError, RuleExecutionFailed, UnknownRule
from rules.figures import GateFigures
from rules.frames import HISTORY_COLUMNS, require_columns, trusted_rows
from rules.gated import GateDecision, GateDecisions
from rules.hardware import (
    Catalog,
    DeviceSpec,
    UnknownDevice,
    builtin_catalog,
    normalise_name,
    report_roof,
)
from rules.judging import GateBatch, is_cleared
from rules.levelstore import StoredLevels
from rules.likeforlike import (
    binding_changes,
    held_changes,
    like_for_like_history,
    reference_binding,
    series_references,
)
from rules.measures import one_decimal
from rules.newcard import CALIBRATING_NIGHTS
from rules.placement import percent_is_lower_bound, place_kernel, place_run
from rules.profilediff import profile_changes, with_profile_changes
from rules.reference import options_table, rule_markdown
from rules.registry import above_roof, all_rules, get_rule
from rules.renames import pair_by_work, work_of
from rules.rereadhistory import WORK_COLUMNS as REREAD_COLUMNS
from rules.rereadhistory import reread_history
from rules.roofchange import (
    Datasheet,
    FigureChange,
    Reread,
    change_note,
    datasheet_from,
    reread_roof,
)
from rules.roofline import (
    Placement,
    Regime,
    Roof,
    attainable,
    percent_of_resource,
    place,
    precision_of_peak,
    ridge_point,
    work_at,
)
from rules.runnerwide import (
    NEW_RUNNER_NOTE,
    TIME_MEASURE,
    new_runner,
    shared_by,
)
from rules.scaling import (
    CROSS_DEVICE_TOLERANCE,
    GATE_RUNS_SETTLED,
    OWN_RUNS_SETTLED,
    MissingResource,
    Prediction,
    Work,
    predict,
)
from rules.verdict import (
    NOT_JUDGED,
    BaselineSummary,
    Conclusion,
    Finding,
    GroupVerdict,
    KernelStatus,
    KernelVerdict,
    RunBaseline,
    Severity,
    Stability,
    Verdict,
    shown_conclusion,
)

__all__ = [
    "CALIBRATING_NIGHTS",
    "CROSS_DEVICE_TOLERANCE",
    "GATE_RUNS_SETTLED",
    "HISTORY_COLUMNS",
    "NEW_RUNNER_NOTE",
    "NOT_JUDGED",
    "OWN_RUNS_SETTLED",
    "REREAD_COLUMNS",
    "TIME_MEASURE",
    "BaselineSummary",
    "Catalog",
    "ClockedRoof",
    "Conclusion",
    "Datasheet",
    "DeviceBaseline",
    "DeviceLevel",
    "DeviceSpec",
    "Evaluation",
    "FailOn",
    "FigureChange",
    "Finding",
    "Forecast",
    "GateBatch",
    "GateDecision",
    "GateDecisions",
    "GateFigures",
    "GroupVerdict",
    "IgnoreEntry",
    "Keeping",
    "KernelGroup",
    "KernelStatus",
    "KernelVerdict",
    "MissingResource",
    "Placement",
    "Prediction",
    "Regime",
    "Reread",
    "Roof",
    "RuleContext",
    "RuleDefinitionError",
    "RuleError",
    "RuleExecutionFailed",
    "RulesConfig",
    "RunBaseline",
    "Scaling",
    "Severity",
    "Stability",
    "StoredLevels",
    "UnknownDevice",
    "UnknownRule",
    "Verdict",
    "Work",
    "above_roof",
    "all_rules",
    "at_report_clocks",
    "attainable",
    "binding_changes",
    "builtin_catalog",
    "change_note",
    "conclude",
    "datasheet_from",
    "device_levels",
    "evaluate",
    "forecast",
    "get_rule",
    "held_changes",
    "is_cleared",
    "is_ignored",
    "keeping",
    "level_roofs",
    "like_for_like_history",
    "new_runner",
    "normalise_name",
    "one_decimal",
    "options_table",
    "pair_by_work",
    "percent_is_lower_bound",
    "percent_of_resource",
    "place",
    "place_chunk",
    "place_kernel",
    "place_run",
    "precision_of_peak",
    "predict",
    "profile_changes",
    "reference_binding",
    "report_roof",
    "require_columns",
    "reread_history",
    "reread_roof",
    "ridge_point",
    "rule_markdown",
    "scale",
    "series_references",
    "shared_by",
    "shown_conclusion",
    "trusted_rows",
    "with_findings",
    "with_profile_changes",
    "work_at",
    "work_of",
]
