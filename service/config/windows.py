"""A baseline window shorter than the runs a rule needs: refused when the config is loaded.

``[baseline] gate_window = 2`` under ``min_runs = 3`` passed a PR 1.5x slower: the gate never
held the runs it needs, so every kernel was new ("too few runs to judge") and the verdict
read PASS. Each rule that compares with the baseline needs its ``min_runs`` within the
window it reads: the gate's (roof-drop, time-regression; device-scaling, on the card before)
or the baseline shown (intensity-shift, regime-flip).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.errors import ConfigError

if TYPE_CHECKING:
    from service.config import BaselineOptions

#: The ``[baseline]`` window each rule that compares with the baseline reads.
WINDOW_READ = {
    "roof-drop": "gate_window",
    "time-regression": "gate_window",
    "intensity-shift": "window",
    "regime-flip": "window",
    "device-scaling": "gate_window",
}


def refuse_short_windows(
    baseline: BaselineOptions,
    options: Mapping[str, Mapping[str, Any]],
    prefix: str,
    path: Path | None,
) -> None:
    """Refuse a window of fewer runs than a rule's ``min_runs`` (its own, else the baseline's).

    Raises:
        ConfigError: Naming the rule's ``min_runs`` when its options set it, else the window
            when the file set it, else ``baseline.min_runs``; its reason names the other key.
    """
    for rule_id, window_key in WINDOW_READ.items():
        window, own = getattr(baseline, window_key), options.get(rule_id, {}).get("min_runs")
        needed = baseline.min_runs if own is None else int(own)
        if needed <= window:
            continue
        runs = f"rules.options.{rule_id}.min_runs" if own is not None else "baseline.min_runs"
        if own is None and window_key in baseline.model_fields_set:
            key, reason = f"baseline.{window_key}", f"{window} is below {runs} = {needed}"
        else:
            key, reason = runs, f"{needed} is above baseline.{window_key} = {window}"
        never = f"{reason}: {rule_id} would never have the runs it needs to judge a kernel"
        raise ConfigError(f"{prefix}{key}", never, str(path) if path else None)
