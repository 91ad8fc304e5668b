"""Two runs side by side, without history (``compare BASE... --against PR...``, ``/compare/runs``).

Each run is placed on its own roof. Every kernel (matched by identity key) gets its time at
base and now and their ratio, its percent of roof at base, and its percent of the roof the base
was bound by now, for the base's work there (like for like: a GEMM that fell off the tensor
cores reads 4.8% of its tensor_bf16 roof, not 70% of the fp32 one; ``_at_base_work``). Without a
history there is no noise to measure, so a kernel is ``slower`` or ``faster`` when its time
moved by more than ``threshold`` (relative), as Nsight Compute's baseline and Bencher's compare
read two results; the check (``roofguard check``) is the statistical gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from collectors.schema import RunRecord
from rules import (
    CROSS_DEVICE_TOLERANCE,
    MissingResource,
    Placement,
    Prediction,
    Work,
    pair_by_work,
    percent_of_resource,
    predict,
    work_at,
    work_of,
)

#: Relative change of time beyond which a kernel is slower or faster (two single results).
DEFAULT_THRESHOLD = 0.05
Status = Literal["slower", "faster", "unchanged", "new", "missing"]
#: One side of a comparison: what it is (its files, ``run 12``), the run, its placements.
Side = tuple[str, RunRecord, Mapping[str, Placement]]
_ORDER = {"slower": 0, "new": 1, "missing": 2, "faster": 3, "unchanged": 4}


class KernelChange(BaseModel):
    """One kernel in both runs (or in one of them).

    Attributes:
        key: Identity key.
        name: Display name (the newer run's when in both).
        status: slower, faster, unchanged (time within the threshold), new or missing.
        base_time_s: Its time in the base run.
        time_s: Its time in the compared run.
        time_ratio: ``time_s / base_time_s``.
        base_percent_of_roof: Percent of roof in the base run.
        percent_of_roof: Percent of roof now, against its own binding.
        percent_of_baseline_roof: Percent of the roof the base was bound by, now; across cards,
            of the roof the base's work has on this card (``baseline_roof_binding``): the
            check's figure, ``base_percent_of_roof · expected_time_ratio / time_ratio``. None
            where this card has no roof of the base's binding (``by_time_alone``).
        base_binding: The base's binding precision or tier.
        binding: The binding now.
        renamed_from: The base kernel this one likely replaces under a new name (it does the
            same FLOPs and DRAM bytes, and no other kernel of either run does:
            ``rules.pair_by_work``); the row compares the two.
        expected_time_ratio: When the two runs were measured on different cards, the time
            ratio the two roofs predict for the base's work (``rules.predict``); the status is
            then read against it (``CROSS_DEVICE_TOLERANCE`` of percent of roof, not
            ``threshold``): slower or faster than the roofs predict, or unchanged, kept up.
        failed_on_other_side: A new or missing kernel that the other run has, every launch
            of it failed (a replay that failed): not measured there, rather than absent.
        baseline_roof_binding: Across cards, what binds the base's work on this card (the
            roof ``percent_of_baseline_roof`` is of; another than ``base_binding`` where the
            ridge moved); None on one card, where it is ``base_binding``.
        by_time_alone: Across cards, why the kernel could not be read against the roofs, in
            words: this card lacks a peak or bandwidth the base's work needs
            (``B100 has no fp32 peak in the catalog``); its status is then by time
            (``threshold``), as on one card. None otherwise.
    """

    key: str
    name: str
    status: Status
    base_time_s: float | None = None
    time_s: float | None = None
    time_ratio: float | None = None
    base_percent_of_roof: float | None = None
    percent_of_roof: float | None = None
    percent_of_baseline_roof: float | None = None
    base_binding: str | None = None
    binding: str | None = None
    renamed_from: str | None = None
    expected_time_ratio: float | None = None
    failed_on_other_side: bool = False
    baseline_roof_binding: str | None = None
    by_time_alone: str | None = None


class RunComparison(BaseModel):
    """Two runs, kernel by kernel, slowest change first.

    Attributes:
        base: What the base run is (its files, or ``run 12``).
        head: What the compared run is.
        base_roof: The roof the base run was placed on (label).
        roof: The roof the compared run was placed on (label).
        threshold: Relative change of time that counts.
        base_time_s: The base run's total kernel time.
        time_s: The compared run's total kernel time.
        time_ratio: ``time_s / base_time_s``.
        kernels: Every kernel, slower first, then new, missing, faster, unchanged.

    ``notes`` (JSON too): kernels across cards judged by time alone, by reason
    (``KernelChange.by_time_alone``).
    """

    base: str
    head: str
    base_roof: str
    roof: str
    threshold: float = DEFAULT_THRESHOLD
    base_time_s: float
    time_s: float
    time_ratio: float | None
    kernels: list[KernelChange] = Field(default_factory=list)

    def count(self, status: Status) -> int:
        """How many kernels have ``status``."""
        return sum(1 for k in self.kernels if k.status == status)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def headline(self) -> str:
        """``2 slower, 1 new, 0 missing, 3 faster, 5 unchanged``."""
        order = ("slower", "new", "missing", "faster", "unchanged")
        return ", ".join(f"{self.count(s)} {s}" for s in order)  # type: ignore[arg-type]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def notes(self) -> list[str]:
        """One line per reason kernels across cards were judged by time alone, counting them."""
        reasons: dict[str, list[str]] = {}
        for k in self.kernels:
            if k.by_time_alone:
                reasons.setdefault(k.by_time_alone, []).append(k.key)
        beyond = f"beyond ±{100 * self.threshold:.0f}%"
        return [
            f"{len(keys)} {'kernel' if len(keys) == 1 else 'kernels'} judged by time alone "
            f"({beyond}), not against the roofs: {why} ({_few(keys)})"
            for why, keys in reasons.items()
        ]


def _few(keys: list[str], shown: int = 3) -> str:
    """``a, b, c`` or ``a, b, c and 4 more``."""
    more = f" and {len(keys) - shown} more" if len(keys) > shown else ""
    return ", ".join(keys[:shown]) + more


def _status(ratio: float | None, threshold: float) -> Status:
    if ratio is None or (1 / (1 + threshold)) <= ratio <= 1 + threshold:
        return "unchanged"
    return "slower" if ratio > 1 else "faster"


def _prediction(base: Placement, now: Placement) -> Prediction | str | None:
    """What ``now``'s roof predicts for ``base``'s work, or why it cannot (None: the same card).

    Percent of roof is comparable across cards: a kernel that kept its percent of roof took
    the time the roofs predict (``rules.scaling``). A card that lacks a peak or bandwidth the
    work needs gives the reason in words (``B100 has no fp32 peak in the catalog``).
    """
    if base.roof.device == now.roof.device:
        return None
    try:
        return predict(Work.of(base), base.roof, now.roof)
    except MissingResource as exc:
        where = "the catalog" if now.roof.source == "datasheet" else f"its {now.roof.source} roof"
        return f"{exc.device} has no {exc.resource} {exc.kind} in {where}"


def _like_for_like(
    base: Placement, now: Placement, ratio: float | None, prediction: Prediction | str | None
) -> tuple[float | None, str | None]:
    """``now``'s percent of the roof of ``base``'s work, and across cards that roof's binding.

    Across cards, the check's figure for the same pair (``Prediction.percent_now``): the base's
    percent times the time the roofs predict over the time taken, to a slower card as to a
    faster one. On one card: its own where the binding held, or where it is faster off the
    base's binding (two roofs: ``rules.timing``); else ``_at_base_work``.
    """
    if isinstance(prediction, Prediction) and ratio and base.percent_of_roof is not None:
        return prediction.percent_now(base.percent_of_roof, ratio), prediction.target_binding
    resources = {**now.roof.peak_flop_per_s, **now.roof.bandwidth_byte_per_s}
    if isinstance(prediction, str) and not resources.get(base.binding or ""):
        return None, None  # no roof of the base's binding on this card
    same = base.binding is None or base.binding == now.binding
    faster = ratio is not None and ratio < 1
    like = now.percent_of_roof if same or faster else _at_base_work(base, now)
    return (like if like is not None else now.percent_of_roof), None


def _change(
    key: str, base: Placement | None, now: Placement | None, name: str, threshold: float
) -> KernelChange:
    if base is None or now is None:
        only = base or now
        assert only is not None  # the key came from one of the runs
        status: Status = "missing" if now is None else "new"
        side = "base_" if now is None else ""
        values = {f"{side}time_s": only.time_s, f"{side}percent_of_roof": only.percent_of_roof}
        return KernelChange.model_validate(
            {"key": key, "name": name, "status": status, **values, f"{side}binding": only.binding}
        )
    ratio = now.time_s / base.time_s if now.time_s and base.time_s else None
    prediction = _prediction(base, now)
    like, like_binding = _like_for_like(base, now, ratio, prediction)
    expected = prediction.expected_time_ratio if isinstance(prediction, Prediction) else None
    status = (
        _status(ratio, threshold)
        if expected is None or ratio is None
        else _status(ratio / expected, 1 / (1 - CROSS_DEVICE_TOLERANCE) - 1)
    )
    return KernelChange(
        key=key,
        name=name,
        status=status,
        expected_time_ratio=expected,
        by_time_alone=prediction if isinstance(prediction, str) else None,
        base_time_s=base.time_s,
        time_s=now.time_s,
        time_ratio=ratio,
        base_percent_of_roof=base.percent_of_roof,
        percent_of_roof=now.percent_of_roof,
        percent_of_baseline_roof=like,
        baseline_roof_binding=like_binding,
        base_binding=base.binding,
        binding=now.binding,
    )


def _at_base_work(base: Placement, now: Placement) -> float | None:
    """``now``'s percent of the roof the base was bound by, for the base's work there.

    Its own work at that roof would mislead where the work changed: a fusion moving 1/200 of
    the base's dram bytes in 1.2x its time read 0.7% of the dram roof; at the base's bytes
    it reads the base's figure / 1.2 (``rules.timing.percent_at``, with one run for a history).
    """
    binding = base.binding
    own = percent_of_resource(now, binding)
    if binding is None or own is None:
        return own
    base_work, work = work_at(base, binding), work_at(now, binding)
    return own * base_work / work if base_work and work else own


def compare_runs(
    base: Side,
    head: Side,
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> RunComparison:
    """Compare ``head`` with ``base``: each a (label, run, its placements on its roof).

    A kernel none of whose launches has a duration (each failed) is not measured: missing
    from its side, not a kernel that took 0 s.
    """
    (base_label, base_run, base_placed), (head_label, head_run, head_placed) = base, head
    base_placed, head_placed = _measured(base_run, base_placed), _measured(head_run, head_placed)
    names = {k.key: k.name for k in (*base_run.kernels, *head_run.kernels) if k.measured}
    renames = _likely_renames(base_placed, head_placed)
    paired = {*renames, *renames.values()}
    kernels = [
        _change(key, base_placed.get(key), head_placed.get(key), names[key], threshold)
        for key in names
        if key not in paired
    ] + [
        _change(new, base_placed[old], head_placed[new], names[new], threshold).model_copy(
            update={"renamed_from": old}
        )
        for new, old in renames.items()
    ]
    kernels = _failed_marked(kernels, base_run, head_run)
    kernels.sort(key=lambda k: (_ORDER[k.status], -(k.time_ratio or 0.0), k.key))
    base_total = sum(k.duration_s for k in base_run.kernels)
    total = sum(k.duration_s for k in head_run.kernels)
    return RunComparison(
        base=base_label,
        head=head_label,
        base_roof=_roof_label(base_placed),
        roof=_roof_label(head_placed),
        threshold=threshold,
        base_time_s=base_total,
        time_s=total,
        time_ratio=total / base_total if base_total > 0 else None,
        kernels=kernels,
    )


def _failed_marked(
    kernels: list[KernelChange], base_run: RunRecord, head_run: RunRecord
) -> list[KernelChange]:
    """``kernels``, a new or missing one marked where the other run has it, unmeasured.

    A kernel whose replay failed read "missing" (or "new" the other way) with no word.
    """
    failed = {
        "missing": {k.key for k in head_run.kernels if not k.measured},
        "new": {k.key for k in base_run.kernels if not k.measured},
    }
    return [
        k.model_copy(update={"failed_on_other_side": True})
        if k.key in failed.get(k.status, ())
        else k
        for k in kernels
    ]


def _measured(run: RunRecord, placed: Mapping[str, Placement]) -> dict[str, Placement]:
    return {k.key: placed[k.key] for k in run.kernels if k.measured and k.key in placed}


def _likely_renames(base: Mapping[str, Placement], head: Mapping[str, Placement]) -> dict[str, str]:
    """Head key -> the base key it likely renames: the only kernels doing each other's work."""
    new = {key: work_of(p) for key, p in head.items() if key not in base}
    gone = {key: work_of(p) for key, p in base.items() if key not in head}
    return pair_by_work(new, gone) if new and gone else {}


def _roof_label(placed: Mapping[str, Placement]) -> str:
    first = next(iter(placed.values()), None)
    return first.roof.label if first is not None else "no roof"
