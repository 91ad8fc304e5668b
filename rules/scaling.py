"""Percent of roof across devices: what a kernel's work should take on another card.

Percent of roof is ``T_roof / T``, each card on its own roofs, so it is comparable across
cards: a kernel at 85% of the HBM roof of an A100 that keeps 85% of the HBM roof of an H100
scaled as the hardware predicts. For the same work on two cards::

    expected_time_ratio = T_roof(work, new card) / T_roof(work, old card)
    time_ratio          = T_now / T_before
    percent now         = percent before · expected_time_ratio / time_ratio

``T_roof(work, card)`` is the whole roofline (``max`` of the work's FLOPs at its precision's
peak and its bytes over each tier's bandwidth) of the *baseline's* work, as stored: its total
FLOPs, its bytes per tier, ``peak_flop_time_s`` (which names its precision) and its binding.
For one binding resource the ratio is that resource's: a memory-bound kernel's is the ratio of
the HBM bandwidths, a compute-bound one's the ratio of its precision's peaks. When the ridge
moved between the cards (the same work is compute-bound on one and memory-bound on the other)
the whole roofline predicts the right time where one resource's ratio would not, and
``Prediction`` names the binding on each card. Judging the baseline's work, not the work the
new card happened to do, keeps like for like: a GEMM that fell off the tensor cores on the new
card is slower than its baseline's tensor work predicts, whatever percent of the lower fp32
roof it reaches.

Only resources both roofs have count (a card without an L2 figure drops the L2 term on both
sides); a precision or binding tier the new card lacks cannot be judged
(``MissingResource``). Every figure is reproducible from the stored records. Levels on a
card, a kernel judged against another card's level, and forecasts are in
``rules.crossdevice``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from rules.errors import RuleError
from rules.roofline import Placement, Roof, precision_of_peak, work_at
from rules.stats.constants import SETTLED

#: A kernel kept up with a new card unless its percent of roof fell by more than this share
#: (and beyond its baseline's noise). Across devices a kernel's percent of the datasheet roof
#: moves for reasons no code change made: the best BF16 GEMM each card runs reaches 86.9% of
#: the datasheet peak on an A100 SXM and 80.3% on an H100 SXM (a 7.6% fall), 77.6% on a B200
#: (10.7% below the A100), FP8 70.9% on an H100 against 77.6% on a GH200 (Maximum Achievable
#: Matmul FLOPS table, stas00/ml-engineering, compute/accelerator/README.md); and cards of one
#: model differ by 5% and more on one node (same source). The two together: 1 - 0.893 × 0.95
#: = 15%. ``tests/bench/bench_devices.py`` measures what it calls right on synthetic fleets
#: where the truth is known (tests/bench/README.md, "Device changes").
CROSS_DEVICE_TOLERANCE = 0.15
#: A kernel is judged against another card's history until it has this many base-branch runs
#: on its own card: the gate's settled level (``rules.stats.constants.SETTLED``), from which
#: a new segment's level stands on its own.
OWN_RUNS_SETTLED = SETTLED
#: The gate keeps the other card's segment before a kernel's own nights (``rules.newcard``)
#: until it has this many: its own history alone re-confirmed a change the gate had already
#: confirmed on its first nights there (three nights at 80% then three at 64%: "regressed"
#: at the sixth, where 30 nights before them read the same nights as unchanged; from a
#: seventh night the own history reads them right).
GATE_RUNS_SETTLED = 2 * OWN_RUNS_SETTLED
#: Memory tiers a stored measurement carries bytes of (``bytes_<tier>`` columns).
TIERS = ("dram", "l2", "l1")


class MissingResource(RuleError):
    """A card lacks the peak or bandwidth a kernel's work needs to be placed on it."""

    def __init__(self, device: str, resource: str, kind: str) -> None:
        self.device = device
        self.resource = resource
        self.kind = kind
        super().__init__(f"{device} has no {kind} for {resource}")


@dataclass(frozen=True)
class Work:
    """A kernel's work as stored, enough to place it on any roof.

    Attributes:
        flops: Total FLOPs (None: unknown).
        nbytes: Bytes per memory tier.
        peak_flop_time_s: ``sum_p F_p / P_p`` on the roof it was placed on (names the
            precision: ``flops / peak_flop_time_s`` is that precision's peak).
        binding: The binding precision or tier it had there.
    """

    flops: float | None
    nbytes: Mapping[str, float]
    peak_flop_time_s: float | None
    binding: str | None

    @classmethod
    def of(cls, placement: Placement) -> Work:
        """A placed kernel's work: its bytes read back from its tiers' times on its roof."""
        nbytes = {t: b for t in placement.memory.terms if (b := work_at(placement, t))}
        flops = placement.total_flops or None
        return cls(flops, nbytes, placement.peak_flop_time_s, placement.binding)

    def precision(self, roof: Roof) -> str | None:
        """The precision its FLOPs ran at on ``roof`` (the roof it was placed on).

        The binding when that is a precision; else the precision whose peak is the effective
        one (``flops / peak_flop_time_s``); a mix counts as the precision nearest it.
        """
        peaks = {p: v for p, v in roof.peak_flop_per_s.items() if v > 0}
        if self.binding in peaks:
            return self.binding
        if not self.flops or not self.peak_flop_time_s or not peaks:
            return None
        effective = self.flops / self.peak_flop_time_s
        exact = precision_of_peak(peaks, effective)
        if exact is not None:
            return exact
        return min(peaks, key=lambda p: abs(math.log(peaks[p] / effective)))


@dataclass(frozen=True)
class Prediction:
    """The roof times of one kernel's work on two cards.

    Attributes:
        source_s: ``T_roof`` on the card the work was measured on.
        target_s: ``T_roof`` on the other card.
        source_binding: What binds it on the first card.
        target_binding: What binds the same work on the other (differs: the ridge moved).
    """

    source_s: float
    target_s: float
    source_binding: str
    target_binding: str

    @property
    def expected_time_ratio(self) -> float:
        """``target_s / source_s``: 0.61 is 1.64× faster on the other card."""
        return self.target_s / self.source_s

    def percent_now(self, percent: float, time_ratio: float) -> float:
        """Percent of the roof the work has on the other card, measured ``time_ratio`` there.

        ``percent`` is its percent of roof on the first card: ``percent · expected_time_ratio
        / time_ratio`` (a kernel that took the time the roofs predict kept its percent).
        """
        return percent * self.expected_time_ratio / time_ratio


def _shared(source: Roof, target: Roof) -> tuple[set[str], set[str]]:
    """Precisions and tiers both roofs have."""
    peaks = {p for p, v in source.peak_flop_per_s.items() if v > 0}
    peaks &= {p for p, v in target.peak_flop_per_s.items() if v > 0}
    tiers = {t for t, v in source.bandwidth_byte_per_s.items() if v > 0}
    tiers &= {t for t, v in target.bandwidth_byte_per_s.items() if v > 0}
    return peaks, tiers


def _terms(work: Work, precision: str | None, roof: Roof, tiers: set[str]) -> dict[str, float]:
    """Seconds per resource of ``work`` on ``roof`` (its precision, the shared tiers)."""
    terms: dict[str, float] = {}
    if precision is not None and work.flops:
        terms[precision] = work.flops / roof.peak_flop_per_s[precision]
    for tier, amount in work.nbytes.items():
        if tier in tiers and amount > 0:
            terms[tier] = amount / roof.bandwidth_byte_per_s[tier]
    return terms


def _needed(work: Work, precision: str | None, source: Roof) -> list[tuple[str, str]]:
    """(resource, kind) the work needs on another card: its precision and binding tier."""
    needed = [(precision, "peak")] if precision is not None and work.flops else []
    tier = work.binding
    if tier is not None and tier in source.bandwidth_byte_per_s:
        needed.append((tier, "bandwidth"))
    return needed


def predict(work: Work, source: Roof, target: Roof) -> Prediction | None:
    """``work``'s roof time on ``source`` (where it was measured) and on ``target``.

    Returns:
        None when the work has nothing to place (no FLOPs and no bytes on shared tiers).

    Raises:
        MissingResource: ``target`` lacks the work's precision or its binding tier.
    """
    precision = work.precision(source)
    peaks, tiers = _shared(source, target)
    for resource, kind in _needed(work, precision, source):
        if resource not in (peaks if kind == "peak" else tiers):
            raise MissingResource(target.device, resource, kind)
    before = _terms(work, precision, source, tiers)
    after = _terms(work, precision, target, tiers)
    if not before or not after:
        return None
    first, second = max(before, key=before.__getitem__), max(after, key=after.__getitem__)
    return Prediction(before[first], after[second], first, second)
