"""The ncu metric recipe: one launch's metrics -> duration, FLOPs, bytes, each with provenance.

Reports collected with ``--set`` hold almost no raw counts (``dram__bytes.sum`` and the FLOP
counters appear in none of 193 real reports), so every figure is taken from the best source
the launch has, in a fixed order, and says how it was obtained (collectors/README.md, "How
every figure is obtained"; the order is the one that worked on every report of the corpus):

* raw count -> sum of parts (read + write) -> rate x duration / per-cycle rate x elapsed cycles
  -> sectors x 32 -> proxy metric with a different definition -> absent.

Input values are SI (``normalise`` applies the units once); output is SI.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from collectors.ncu import tensor
from collectors.ncu.metrics import (
    BYTE_SOURCES,
    DURATION,
    FLOP_OPS,
    HINTS,
    REQUIRED_OPS,
    SECTOR_BYTES,
    WEIGHT_NOTE,
)
from collectors.ncu.profile import extra_metrics
from collectors.ncu.tensor import Row
from collectors.schema import Provenance, ProvenanceKind
from collectors.units import unit_factor


@lru_cache(maxsize=4096)
def provenance(kind: ProvenanceKind, metrics: tuple[str, ...], note: str = "") -> Provenance:
    """A shared Provenance object (cached: the same few are built for every launch)."""
    return Provenance(kind=kind, metrics=metrics, note=note)


class Figure(NamedTuple):
    """One number and how it was obtained."""

    value: float
    provenance: Provenance


@dataclass(slots=True)
class LaunchFigures:
    """What the recipe got out of one launch.

    Attributes:
        duration_s: Kernel time, None when the launch has none (or it is NaN).
        duration: How the duration was obtained.
        plan: The plan that computed ``values`` (None for a failed launch).
        values: One number per ``plan.specs`` entry, in that order.
        missing: Figure keys that are absent (see ``HINTS``), or partial, with a reason.
        failed: Why the launch is unusable (no duration, or every value NaN), else None.
        extras: One number per ``plan.extras`` entry (clocks, profile figures), in that order.
    """

    duration_s: float | None = None
    duration: Provenance | None = None
    plan: Plan | None = None
    values: tuple[float, ...] = ()
    missing: tuple[str, ...] = ()
    failed: str | None = None
    extras: tuple[float, ...] = ()

    def each(self) -> Callable[[int], LaunchFigures]:
        """Of figures of many launches (arrays: a plan run on a chunk), launch ``i``'s alone.

        The arrays are made lists once: a chunk's thousands of single launches are read as
        plain numbers, not one-element numpy values.
        """
        seconds: list[float] = self.duration_s.tolist()  # type: ignore[union-attr]
        figures = [v.tolist() for v in self.values]  # type: ignore[attr-defined]
        extras = [v.tolist() for v in self.extras]  # type: ignore[attr-defined]
        return lambda i: LaunchFigures(
            duration_s=seconds[i],
            duration=self.duration,
            plan=self.plan,
            values=tuple([v[i] for v in figures]),
            missing=self.missing,
            extras=tuple([v[i] for v in extras]),
        )

    def figures(self, kind: str) -> dict[str, Figure]:
        """``kind`` = "flops" or "bytes": the figures by precision or tier."""
        if self.plan is None:
            return {}
        pairs = zip(self.plan.specs, self.values, strict=True)
        prefix = kind + "."
        return {
            s.key[len(prefix) :]: Figure(v, s.provenance)
            for s, v in pairs
            if s.key.startswith(prefix)
        }

    @property
    def flops(self) -> dict[str, Figure]:
        """FLOPs by precision."""
        return self.figures("flops")

    @property
    def bytes(self) -> dict[str, Figure]:
        """Bytes by tier."""
        return self.figures("bytes")


def normalise(metrics: Iterable[tuple[str, float | None, str]]) -> dict[str, float]:
    """``(name, value, unit)`` triples -> ``{name: SI value}``; None values are left out.

    Raises:
        UnknownUnit: A unit collectors.units cannot scale (the caller names file and row).
    """
    out: dict[str, float] = {}
    for name, value, unit in metrics:
        if value is not None:
            out[name] = value * unit_factor(unit)
    return out


@dataclass(frozen=True, slots=True)
class Term:
    """One metric's share of a figure.

    The value is ``metric x weight``, times the duration (``scale="s"``) or the elapsed cycles
    of a unit (``scale="sm"``/``"smsp"``) when the metric is a rate.
    """

    name: str
    weight: float = 1.0
    scale: str = ""


#: A metric as a plan reads it: by name, or by position once bound to a raw page's columns.
Key = str | int
#: Per figure: (scale slot, getter of its metrics, their weights); slot -1 = mixed scales.
FastForm = tuple[tuple[int, Callable[[Any], Sequence[float]], tuple[float, ...]], ...]


@dataclass(frozen=True, slots=True)
class Spec:
    """How one figure (``flops.<precision>`` or ``bytes.<tier>``) is computed."""

    key: str
    provenance: Provenance
    terms: tuple[Term, ...]


@dataclass(frozen=True, slots=True, eq=False)  # identity hash: plans are cached, hashed per launch
class Plan:
    """The recipe's choices for one set of available metrics, made once and reused.

    Every launch of a raw page has the same columns, so the search through the recipe's
    fallbacks runs once per file, not once per launch.
    """

    duration: tuple[Key, Key | None] | None
    duration_provenance: Provenance | None
    cycles: tuple[tuple[int, Key, bool], ...]
    specs: tuple[Spec, ...]
    missing: tuple[str, ...]
    #: Per spec, (metric, weight, scale slot): slot 0 = 1, 1 = seconds, 2/3 = SMSP/SM cycles.
    compiled: tuple[tuple[tuple[Key, float, int], ...], ...] = ()
    #: ``compiled`` in the form evaluate() uses (getters, weights, one scale slot per figure).
    fast: FastForm = ()
    #: (name, metric) of the figures read as they are: clocks and profile figures.
    extras: tuple[tuple[str, Key], ...] = ()

    def bind(self, position: Mapping[str, int]) -> Plan:
        """The same plan reading metrics by position (a raw page's columns) instead of name."""

        def at(key: Key | None) -> Key | None:
            return None if key is None else position[str(key)]

        duration = (
            None
            if self.duration is None
            else (position[str(self.duration[0])], at(self.duration[1]))
        )
        cycles = tuple((slot, position[str(name)], clock) for slot, name, clock in self.cycles)
        compiled = tuple(
            tuple((position[str(n)], w, c) for n, w, c in terms) for terms in self.compiled
        )
        fast = _fast_form(compiled)
        extras = tuple((name, position[str(key)]) for name, key in self.extras)
        return Plan(
            duration,
            self.duration_provenance,
            cycles,
            self.specs,
            self.missing,
            compiled,
            fast,
            extras,
        )

    def evaluate(self, m: Any) -> LaunchFigures:
        """The figures of one launch whose available metrics are this plan's.

        Args:
            m: SI values by metric name, or a sequence by position for a bound plan.
        """
        if self.duration is None:
            return LaunchFigures(failed="no duration", missing=self.missing)
        numerator, denominator = self.duration
        seconds = m[numerator] if denominator is None else m[numerator] / m[denominator]
        scale = [1.0, seconds, 0.0, 0.0]
        for slot, name, is_clock in self.cycles:
            scale[slot] = m[name] * seconds if is_clock else m[name]
        values = tuple(
            scale[slot] * sum(map(operator.mul, get(m), weights))
            if slot >= 0
            else sum([m[n] * w * scale[c] for n, w, c in terms])
            for (slot, get, weights), terms in zip(self.fast, self.compiled, strict=True)
        )
        extras = tuple([m[key] for _, key in self.extras]) if self.extras else ()
        return LaunchFigures(
            seconds, self.duration_provenance, self, values, self.missing, None, extras
        )


def _fast_form(
    compiled: tuple[tuple[tuple[Key, float, int], ...], ...],
) -> FastForm:
    """Per spec: (scale slot, getter, weights); slot -1 when the terms mix scales."""
    out = []
    for terms in compiled:
        slots = {c for _, _, c in terms}
        keys = [n for n, _, _ in terms]
        get = operator.itemgetter(*keys) if len(keys) > 1 else _single(keys[0])
        out.append((slots.pop() if len(slots) == 1 else -1, get, tuple(w for _, w, _ in terms)))
    return tuple(out)


def _single(key: Key) -> Callable[[Any], Sequence[float]]:
    return lambda m: (m[key],)


_SLOTS = {"": 0, "s": 1, "smsp": 2, "sm": 3}


def _duration(names: frozenset[str]) -> tuple[tuple[str, str | None] | None, Provenance | None]:
    """``gpu__time_duration.sum``, else elapsed cycles / clock of the SM, SMSP or GPC unit."""
    if DURATION in names:
        return (DURATION, None), provenance(ProvenanceKind.RAW, (DURATION,))
    for unit in ("sm", "smsp", "gpc"):
        clock = f"{unit}__cycles_elapsed.avg.per_second"
        for cycles in (f"{unit}__cycles_elapsed.avg", f"{unit}__cycles_elapsed.max"):
            if cycles in names and clock in names:
                prov = provenance(ProvenanceKind.RATE, (cycles, clock), "elapsed cycles / clock")
                return (cycles, clock), prov
    return None, None


def _cycles(names: frozenset[str], unit: str) -> tuple[int, str, bool] | None:
    """Elapsed cycles of a unit: ``<unit>__cycles_elapsed.avg``, else its clock x duration."""
    if f"{unit}__cycles_elapsed.avg" in names:
        return _SLOTS[unit], f"{unit}__cycles_elapsed.avg", False
    if f"{unit}__cycles_elapsed.avg.per_second" in names:
        return _SLOTS[unit], f"{unit}__cycles_elapsed.avg.per_second", True
    return None


def _op_term(names: frozenset[str], op: str, weight: float) -> tuple[Term, ProvenanceKind] | None:
    """Thread-instruction count of one SASS op: raw count, else a rate rebuilt into a count."""
    for unit in ("smsp", "sm"):
        name = f"{unit}__sass_thread_inst_executed_op_{op}_pred_on.sum"
        if name in names:
            return Term(name, weight), ProvenanceKind.RAW
    for unit in ("smsp", "sm"):
        name = f"{unit}__sass_thread_inst_executed_op_{op}_pred_on.sum"
        if name + ".per_cycle_elapsed" in names and _cycles(names, unit):
            return Term(name + ".per_cycle_elapsed", weight, unit), ProvenanceKind.RATE
        if name + ".per_second" in names:
            return Term(name + ".per_second", weight, "s"), ProvenanceKind.RATE
    return None


def _cuda_core(names: frozenset[str]) -> tuple[list[Spec], list[str]]:
    """FLOPs per CUDA-core precision, weights as ``FLOP_OPS``; partial op sets are flagged."""
    terms: dict[str, list[Term]] = {}
    kinds: dict[str, set[ProvenanceKind]] = {}
    for op, (precision, weight) in FLOP_OPS.items():
        found = _op_term(names, op, weight)
        if found is not None:
            terms.setdefault(precision, []).append(found[0])
            kinds.setdefault(precision, set()).add(found[1])
    specs, missing = [], []
    for precision, used in terms.items():
        absent = [
            o for o in REQUIRED_OPS[precision] if not any(f"_op_{o}_" in t.name for t in used)
        ]
        kind = (
            ProvenanceKind.RAW if kinds[precision] == {ProvenanceKind.RAW} else ProvenanceKind.RATE
        )
        note = WEIGHT_NOTE[precision]
        if kind is ProvenanceKind.RATE:
            note += "; per-cycle rate x elapsed cycles"
        if absent:
            note += f"; {', '.join(absent)} not collected (lower bound)"
            missing.append(f"flops.{precision}: {', '.join(absent)} not collected")
        prov = provenance(kind, tuple(t.name for t in used), note)
        specs.append(Spec(f"flops.{precision}", prov, tuple(used)))
    return specs, missing


def _specs(rows: list[Row]) -> list[Spec]:
    """Specs from ``collectors.ncu.tensor`` rows."""
    return [
        Spec(key, provenance(kind, used, note), tuple(Term(n, weight) for n in used))
        for key, kind, used, note, weight in rows
    ]


def _bytes(names: frozenset[str]) -> tuple[list[Spec], list[str]]:
    """Bytes per memory tier from the first complete source in ``BYTE_SOURCES``."""
    specs: list[Spec] = []
    missing: list[str] = []
    for tier, sources in BYTE_SOURCES.items():
        for kind, used, note in sources:
            if all(n in names for n in used):
                scale = "s" if used[0].endswith(".per_second") else ""
                weight = SECTOR_BYTES if kind is ProvenanceKind.SECTORS else 1.0
                terms = tuple(Term(n, weight, scale) for n in used)
                specs.append(Spec(f"bytes.{tier}", provenance(kind, used, note), terms))
                break
        else:
            partial = [n for _, used, _ in sources if len(used) > 1 for n in used if n in names]
            reason = f"only {', '.join(partial)} present (incomplete)" if partial else "absent"
            missing.append(f"bytes.{tier}: {reason}; collect {HINTS['bytes.' + tier]}")
    return specs, missing


@lru_cache(maxsize=512)
def plan_for(names: frozenset[str], cc: str | None = None) -> Plan:
    """The recipe's choices given the metric names a launch has (NaN ones left out)."""
    duration, how = _duration(names)
    if duration is None:
        return Plan(None, None, (), (), (f"duration: absent; collect {HINTS['duration']}",))
    cycles = tuple(c for c in (_cycles(names, u) for u in ("smsp", "sm")) if c is not None)
    flop_specs, flop_missing = _cuda_core(names)
    tensor_rows, tensor_missing = tensor.tensor_rows(names, cc)
    tensor_specs = _specs(tensor_rows + tensor.activity_rows(names))  # + busy.<family> probes
    byte_specs, byte_missing = _bytes(names)
    if not flop_specs:
        flop_missing.append(f"flops: absent; collect {HINTS['flops']}")
    missing = tuple(flop_missing + tensor_missing + byte_missing)
    specs = tuple(flop_specs + tensor_specs + byte_specs)
    compiled = tuple(tuple((t.name, t.weight, _SLOTS[t.scale]) for t in s.terms) for s in specs)
    fast = _fast_form(compiled)
    return Plan(duration, how, cycles, specs, missing, compiled, fast, extra_metrics(names))


def launch_figures(m: Mapping[str, float], cc: str | None = None) -> LaunchFigures:
    """Everything the recipe can get out of one launch's SI metrics."""
    names = frozenset(m)
    if any(map(math.isnan, m.values())):  # a failed counter: plan without it
        names = frozenset(k for k, v in m.items() if not math.isnan(v))
    if m and not names:
        return LaunchFigures(failed="every metric is NaN (replay failed)")
    if DURATION in m and DURATION not in names:
        return LaunchFigures(failed="gpu__time_duration.sum is NaN (replay failed)")
    return plan_for(names, cc).evaluate(m)
