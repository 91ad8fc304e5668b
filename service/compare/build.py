"""``roofguard compare`` from the history store: every card's level of every kernel.

For each card with base-branch history (or each of ``--devices``, in that order) the gate's
window of runs is read on the configured roof source and every kernel's current level of
percent of roof taken (``rules.device_levels``); every card after the first is compared with
the first: the time ratio measured beside the one the two roofs predict for the first card's
work, and whether the kernel kept up (``rules.keeping``, the device-scaling rule's tolerance).
``--by-runner`` compares the runners of each card instead (two A100 runners whose measured
roofs differ). ``--forecast`` adds each kernel's time on a card it never ran on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from sqlmodel import Session

from rules import (
    CALIBRATING_NIGHTS,
    DeviceLevel,
    Keeping,
    Roof,
    above_roof,
    device_levels,
    get_rule,
    keeping,
    level_roofs,
    scale,
    trusted_rows,
)
from rules.stats import GateOptions
from service.compare.cards import Card, CompareView
from service.compare.devicenames import resolve_devices
from service.compare.forecasts import forecast_rows
from service.compare.model import (
    FELL_SINCE,
    FORECAST_ASSUMPTION,
    CompareRow,
    Comparison,
    DeviceColumn,
)
from service.compare.refusals import refuse_unread
from service.config import RoofguardConfig
from service.errors import BadInput
from service.store.devices import device_runs, run_roofs, run_runners
from service.store.history import BaselineQuery, read_baseline


@dataclass(frozen=True)
class CompareRequest:
    """What to compare.

    Attributes:
        repo: OWNER/NAME.
        devices: The cards, the first the reference (empty: every card with history, the
            one whose newest run is oldest first).
        kernel: A regular expression on the kernel's key or name (None: every kernel).
        forecast: A catalog card to forecast every kernel's time on.
        by_runner: Compare each card's runners (``device / runner``) instead of cards.
    """

    repo: str
    devices: tuple[str, ...] = ()
    kernel: str | None = None
    forecast: str | None = None
    by_runner: bool = False


def _frame(session: Session, repo: str, device: str, config: RoofguardConfig) -> pd.DataFrame:
    """The card's trusted rows of the gate's window, as the check's cross-device baseline reads.

    A runner whose preflight failed gives no level: the check would judge no run against it.
    """
    query = BaselineQuery(
        repo=repo,
        device=device,
        roof_source=config.roof,
        base_branch=config.base_branch,
        window=config.baseline.gate_window,
        full_runs=config.baseline.window,
    )
    return trusted_rows(read_baseline(session=session, query=query).frame)


def _newest_roof(session: Session, frame: pd.DataFrame) -> Roof:
    newest = int(frame["run_id"].iloc[int(frame["timestamp"].argmax())])
    return run_roofs(session=session, run_ids=[newest])[newest]


def _parts(
    session: Session, device: str, frame: pd.DataFrame, by_runner: bool
) -> list[tuple[str, pd.DataFrame]]:
    """(label, rows) of one card: the card, or each of its runners."""
    if not by_runner:
        return [(device, frame)]
    runners = run_runners(session=session, run_ids=frame["run_id"].unique().tolist())
    names = frame["run_id"].map(lambda r: runners.get(int(r)) or "unknown runner")
    return [(f"{device} / {name}", rows) for name, rows in frame.groupby(names, sort=True)]


def _gate(config: RoofguardConfig) -> GateOptions:
    return GateOptions(**config.rules.gate.model_dump())


def _few_levels(
    rows: pd.DataFrame, levels: dict[str, DeviceLevel], gate: GateOptions, config: RoofguardConfig
) -> dict[str, DeviceLevel]:
    """The kernels without a level for want of runs: the median of the runs they have.

    Only their rows are read again (with ``min_runs`` 1): the others' levels stay the gate's,
    whose replay judges a night only from ``min_runs`` values on.
    """
    rename = config.rules.current_key
    keys = rows["kernel_key"].astype(str).map(rename)
    missing = rows[~keys.isin(list(levels))]
    if missing.empty:
        return {}
    few = gate.model_copy(update={"min_runs": 1})
    found = device_levels(missing, options=few, rename=rename)
    return {k: level for k, level in found.items() if level.runs < gate.min_runs}


def _cards(
    session: Session, request: CompareRequest, devices: Sequence[str], config: RoofguardConfig
) -> list[Card]:
    gate = _gate(config)
    cards = []
    for device in devices:
        frame = _frame(session, request.repo, device, config)
        if frame.empty:
            continue
        for label, rows in _parts(session, device, frame, request.by_runner):
            levels = device_levels(rows, options=gate, rename=config.rules.current_key)
            few = _few_levels(rows, levels, gate, config)
            runs = int(rows["run_id"].nunique())
            roof = _newest_roof(session, rows)
            first, every = _first_times(rows, config), {**levels, **few}
            own = level_roofs(every.values(), roof)
            cards.append(Card(label, roof, runs, every, frozenset(few), first, own))
    return cards


def _first_times(rows: pd.DataFrame, config: RoofguardConfig) -> dict[str, tuple[float, ...]]:
    """Each kernel's placed times on the card's first ``CALIBRATING_NIGHTS`` runs read, by key."""
    placed = rows[pd.to_numeric(rows["percent_of_roof"], errors="coerce").notna()]
    placed = placed.sort_values(["timestamp", "run_id"], kind="stable")
    keys = placed["kernel_key"].astype(str).map(config.rules.current_key)
    times = pd.to_numeric(placed["time_s"], errors="coerce")
    return {
        str(key): tuple(float(t) for t in group.head(CALIBRATING_NIGHTS))
        for key, group in times.groupby(keys.to_numpy(), sort=False)
    }


def _matches(pattern: re.Pattern[str] | None, level: DeviceLevel) -> bool:
    return pattern is None or bool(pattern.search(level.key) or pattern.search(level.name))


def _pattern(text: str | None) -> re.Pattern[str] | None:
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise BadInput(f"--kernel: {text!r} is not a regular expression: {exc}") from None


def _row(
    level: DeviceLevel, card: Card, reference: Card | None, tolerance: dict[str, float]
) -> CompareRow:
    row = CompareRow(
        kernel=level.key,
        name=level.name,
        device=card.label,
        percent_of_roof=level.percent,
        time_s=level.time_s,
        binding=level.work.binding,
        runs=level.runs,
        few_runs=level.key in card.few,
        above_roof=above_roof(level.percent),
    )
    if reference is None:
        return row
    base = reference.levels.get(level.key)
    if base is None:  # not measured on the first card: nothing to compare with
        return row.model_copy(update={"reference": reference.label})
    target, source = card.roof_of(level), reference.roof_of(base)
    scaled = scale(base, reference.roof, target, [level.time_s], placed=source)
    if scaled is None:
        return row.model_copy(update={"reference": reference.label})
    judged = keeping(scaled, **tolerance).value
    times = card.first_times.get(level.key, ())
    first = scale(base, reference.roof, target, times, placed=source)
    if judged == Keeping.BEHIND and first and keeping(first, **tolerance) != Keeping.BEHIND:
        judged = FELL_SINCE  # the card carried it on its first nights: the fall is the code's
    return row.model_copy(
        update={
            "reference": reference.label,
            "time_ratio": scaled.time_ratio,
            "expected_time_ratio": scaled.expected_time_ratio,
            "keeping": judged,
        }
    )


def _thresholds(config: RoofguardConfig) -> dict[str, float]:
    """The device-scaling rule's tolerance and z threshold, as configured."""
    raw = config.rules.options.get("device-scaling", {})
    values = get_rule("device-scaling").Options.model_validate(raw).model_dump()
    return {"tolerance": float(values["tolerance"]), "z_threshold": float(values["z_threshold"])}


def _rows(
    cards: Sequence[Card], pattern: re.Pattern[str] | None, tolerance: dict[str, float]
) -> list[CompareRow]:
    keys = sorted({k for card in cards for k, lv in card.levels.items() if _matches(pattern, lv)})
    reference = cards[0] if cards else None
    rows = []
    for key in keys:
        for card in cards:
            level = card.levels.get(key)
            if level is not None:
                rows.append(_row(level, card, None if card is reference else reference, tolerance))
    return rows


def compare_history(
    *, session: Session, request: CompareRequest, config: RoofguardConfig
) -> CompareView:
    """Every kernel's level on every card of ``request.repo`` (and a forecast, if asked).

    Raises:
        BadInput: An unknown card in ``devices`` or ``forecast``, a bad ``kernel`` pattern,
            or a forecast card without a peak or bandwidth a kernel's work needs.
    """
    catalog, pattern = config.catalog(), _pattern(request.kernel)
    stored = device_runs(
        session=session, repo=request.repo, base_branch=config.base_branch, roof_source=config.roof
    )
    refuse_unread(session, (request.repo, request.devices), stored, config)
    devices = resolve_devices(request.devices, stored, catalog, request.repo)
    cards = _cards(session, request, devices, config)
    thresholds = _thresholds(config)
    rows = _rows(cards, pattern, thresholds)
    if request.kernel and not rows:
        raise BadInput(f"--kernel: {request.kernel!r} matches no kernel of {request.repo}")
    target, assumption = None, None
    if request.forecast is not None:
        target, extra, skipped = forecast_rows(cards, rows, request.forecast, catalog)
        order = {key: i for i, key in enumerate(dict.fromkeys(r.kernel for r in rows))}
        rows = sorted([*rows, *extra], key=lambda r: (order[r.kernel], r.forecast))
        source = ", ".join(dict.fromkeys(r.source or "" for r in extra)) or "its card"
        assumption = FORECAST_ASSUMPTION.format(target=target.device, source=source)
        assumption += f"; {skipped}" if skipped else ""
    comparison = Comparison(
        repo=request.repo,
        roof_source=config.roof,
        reference=cards[0].label if cards else None,
        devices=tuple(
            DeviceColumn(device=c.label, roof=c.roof.label, runs=c.runs, kernels=len(c.levels))
            for c in cards
        ),
        rows=tuple(rows),
        forecast=target.device if target else None,
        assumption=assumption,
        tolerance=thresholds["tolerance"],
        min_runs=_gate(config).min_runs,
    )
    return CompareView(comparison, tuple(cards), target)
