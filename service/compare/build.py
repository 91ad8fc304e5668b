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
    Catalog,
    DeviceLevel,
    Keeping,
    Roof,
    above_roof,
    builtin_catalog,
    device_levels,
    get_rule,
    keeping,
    normalise_name,
    scale,
    trusted_rows,
)
from rules.stats import GateOptions
from service.compare.cards import Card, CompareView
from service.compare.forecasts import forecast_rows
from service.compare.model import (
    FELL_SINCE,
    FORECAST_ASSUMPTION,
    CompareRow,
    Comparison,
    DeviceColumn,
)
from service.config import RoofguardConfig
from service.errors import BadInput
from service.store.devices import DeviceRuns, device_runs, run_roofs, run_runners
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


def _catalog(config: RoofguardConfig) -> Catalog:
    return builtin_catalog().with_overrides(config.devices)


def _unknown(name: str, known: Sequence[str], catalog: Catalog, repo: str) -> BadInput:
    """One clear error for a ``--devices`` name: the card, and the nearest known names."""
    spec = catalog.find(name)
    if spec is not None:
        return BadInput(
            f"--devices: {spec.id} has no base-branch history in {repo}; "
            f"cards with history: {', '.join(known) or 'none'}"
        )
    near = [*catalog.suggest(name), *(k for k in known if name.lower() in k.lower())]
    hint = f"; closest known: {', '.join(dict.fromkeys(near))}" if near else ""
    return BadInput(f"--devices: unknown card {name!r}{hint} (see `roofguard devices`)")


def resolve_devices(
    names: Sequence[str], stored: Sequence[DeviceRuns], catalog: Catalog, repo: str
) -> list[str]:
    """The stored cards ``names`` mean (catalog ids, aliases or stored names), in order.

    Raises:
        BadInput: No card has history here, or a name is none of them; the error names
            it and the nearest.
    """
    known = [d.device for d in sorted(stored, key=lambda d: (d.newest, d.device))]
    if not known:  # a repository named wrong read as an empty table
        raise BadInput(
            f"--repo: {repo} has no base-branch run in the history store (nightly runs "
            "stored by `roofguard check --kind nightly` or `roofguard ingest`)"
        )
    if not names:
        return known
    found = []
    for name in names:
        match = match_device(name, known, catalog)
        if match is None:
            raise _unknown(name, known, catalog, repo)
        found.append(match)
    return list(dict.fromkeys(found))


def match_device(name: str, known: Sequence[str], catalog: Catalog) -> str | None:
    """The stored card ``name`` means: itself, its catalog id, or the one it begins.

    ``A100`` is the ``A100-SXM4-80GB`` in a fleet whose only A100 is that one.
    """
    spec = catalog.find(name)
    if name in known or (spec is not None and spec.id in known):
        return name if name in known else spec.id if spec else None
    folded = normalise_name(name)
    hits = [k for k in known if folded and normalise_name(k).startswith(folded)]
    return hits[0] if len(hits) == 1 else None


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
            first = _first_times(rows, config)
            cards.append(Card(label, roof, runs, {**levels, **few}, frozenset(few), first))
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
    target = level.roof_on(card.roof)
    scaled = scale(base, reference.roof, target, [level.time_s])
    if scaled is None:
        return row.model_copy(update={"reference": reference.label})
    judged = keeping(scaled, **tolerance).value
    first = scale(base, reference.roof, target, card.first_times.get(level.key, ()))
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


def _refuse_unread(
    session: Session, request: CompareRequest, stored: Sequence[DeviceRuns], config: RoofguardConfig
) -> None:
    """BadInput naming why the repository, or a ``--devices`` card, has no run compare reads.

    Its runs all came from runners whose health preflight failed, or none was placed on the
    roof asked for. ``stored``: the cards of trusted runs on that roof.
    """
    if stored:
        _refuse_untrusted_cards(session, request, stored, config)
        return
    _refuse_untrusted_repo(session, request.repo, config)
    if config.roof is not None:
        _refuse_another_roof(session, request.repo, config)


def _refuse_untrusted_repo(session: Session, repo: str, config: RoofguardConfig) -> None:
    """BadInput when ``repo``'s base-branch runs (on ``config.roof``) are all from failed runners.

    Told that the repository had no run, a user would look for a nightly job that ran.
    """
    every = device_runs(
        session=session,
        repo=repo,
        base_branch=config.base_branch,
        roof_source=config.roof,
        trusted_only=False,
    )
    if every:
        raise _untrusted("--repo", f"{repo}'s {sum(d.runs for d in every)} base-branch runs")


def _untrusted(flag: str, runs: str) -> BadInput:
    """The refusal of ``runs`` (those named) that all came from runners whose preflight failed."""
    return BadInput(
        f"{flag}: none of {runs} came from a runner that passed its health preflight; compare "
        "reads the runs a baseline is made of (a runner is checked by `roofguard calibrate "
        "--check`)"
    )


def _refuse_untrusted_cards(
    session: Session, request: CompareRequest, stored: Sequence[DeviceRuns], config: RoofguardConfig
) -> None:
    """BadInput when a ``--devices`` card's base-branch runs are all from failed runners.

    Told that the card had no base-branch history, a user would look for a nightly job that
    ran on it.
    """
    catalog, known = _catalog(config), [d.device for d in stored]
    names = [n for n in request.devices if match_device(n, known, catalog) is None]
    if not names:
        return
    every = device_runs(
        session=session,
        repo=request.repo,
        base_branch=config.base_branch,
        roof_source=config.roof,
        trusted_only=False,
    )
    failed = {d.device: d.runs for d in every if d.device not in known}
    for name in names:
        card = match_device(name, list(failed), catalog)
        if card is not None:
            runs = f"{card}'s {failed[card]} base-branch runs in {request.repo}"
            raise _untrusted("--devices", runs)


def _refuse_another_roof(session: Session, repo: str, config: RoofguardConfig) -> None:
    """BadInput when ``repo`` has base-branch runs, none of them on ``config.roof``.

    Told that the repository had no run, a user went to mend the nightly job; the roof asked
    for (most often ``measured``, which needs a runner's calibration) was what was missing.
    """
    others = device_runs(session=session, repo=repo, base_branch=config.base_branch)
    if not others:
        return
    measured = config.roof == "measured"
    how = " (a runner is measured by `roofguard calibrate --store`)" if measured else ""
    raise BadInput(
        f"--roof {config.roof}: none of {repo}'s {sum(d.runs for d in others)} base-branch "
        f"runs was placed on a {config.roof} roof{how}; leave --roof out to compare them "
        "on the roofs they were placed on"
    )


def compare_history(
    *, session: Session, request: CompareRequest, config: RoofguardConfig
) -> CompareView:
    """Every kernel's level on every card of ``request.repo`` (and a forecast, if asked).

    Raises:
        BadInput: An unknown card in ``devices`` or ``forecast``, a bad ``kernel`` pattern,
            or a forecast card without a peak or bandwidth a kernel's work needs.
    """
    catalog, pattern = _catalog(config), _pattern(request.kernel)
    stored = device_runs(
        session=session, repo=request.repo, base_branch=config.base_branch, roof_source=config.roof
    )
    _refuse_unread(session, request, stored, config)
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
