"""Launches -> kernels: aggregate by identity key, keep samples, count failed launches.

Launches are added one at a time (the raw-page reader streams), so a run of hundreds of MB
holds one float per launch (its time) and a few sums per kernel, never the rows.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collectors.base import CollectOptions
from collectors.errors import MalformedReport, cut, launch_label
from collectors.identity import make_key
from collectors.ncu.extras import Extras, in_order, merged
from collectors.ncu.partial import partial_note, partial_text
from collectors.ncu.profile import MEMORY_CLOCK, SM_CLOCK
from collectors.ncu.recipe import Figure, LaunchFigures, Plan
from collectors.ncu.tensor import uncounted, uncounted_note
from collectors.safety import check_sample, unmeasured_note
from collectors.schema import (
    MIN_DURATION_S,
    NOT_AVERAGED,
    DeviceInfo,
    KernelRecord,
    ProfilerInfo,
    Provenance,
    RunRecord,
    SourceRef,
)


@dataclass(slots=True)
class _Kernel:
    """Running totals of one identity key."""

    name: str
    key: str
    first_row: str
    grid: str | None
    block: str | None
    nvtx: str | None
    launches: int = 0
    failed: int = 0
    duration_s: float = 0.0
    samples: list[float] = field(default_factory=list)
    totals: dict[Plan, list[float]] = field(default_factory=dict)
    counts: dict[Plan, int] = field(default_factory=dict)
    missing: dict[str, None] = field(default_factory=dict)
    reasons: dict[str, None] = field(default_factory=dict)
    duration: Provenance | None = None
    #: Per plan: running totals of its extras (clocks and profile figures).
    extras: dict[Plan, Extras] = field(default_factory=dict)

    def _add_extras(self, plan: Plan, values: tuple[Any, ...], seconds: Any) -> None:
        """Add the extras of one launch (floats) or of a batch (arrays, one entry per launch)."""
        if not plan.extras:
            return
        acc = self.extras.get(plan)
        if acc is None:
            acc = self.extras[plan] = Extras.empty(len(values))
        if isinstance(seconds, float):
            acc.add(values, seconds, values, values, values, 1)
        else:  # a batch: finite and non-negative (the fast path checked)
            acc.add_in_order(values, seconds)

    def _means(self) -> dict[str, float]:
        """Each extra's time-weighted mean (the plain mean where the launches took no time).

        A launch configuration the launches do not share (grids of several sizes under one
        key) has no one value, nor has a clock some launch did not record: they are left out.
        """
        totals: dict[str, tuple[float, ...]] = {}
        for plan, acc in self.extras.items():
            for i, (name, _) in enumerate(plan.extras):
                parts = (
                    acc.weighted[i],
                    acc.time,
                    acc.plain[i],
                    acc.count,
                    acc.low[i],
                    acc.high[i],
                )
                old = totals.get(name)
                totals[name] = parts if old is None else merged(old, parts)
        return {
            name: weighted / time if time > 0 else plain / count
            for name, (weighted, time, plain, count, low, high) in totals.items()
            if (low == high or not name.startswith("launch__")) and (low > 0 or name not in _CLOCKS)
        }

    def add(self, figs: LaunchFigures) -> None:
        if figs.failed is not None or figs.duration_s is None or figs.plan is None:
            self.failed += 1
            self.reasons.setdefault(figs.failed or "no duration")
            for text in figs.missing:
                self.missing.setdefault(text)
            return
        self.launches += 1
        self.duration_s += figs.duration_s
        self.samples.append(figs.duration_s)
        if self.duration is None:
            self.duration = figs.duration
        self._add_extras(figs.plan, figs.extras, figs.duration_s)
        totals = self.totals.get(figs.plan)
        if totals is None:  # a new metric set: its gaps are named once
            for text in figs.missing:
                self.missing.setdefault(text)
            self.counts[figs.plan] = 0
            totals = [0.0] * len(figs.values)
        self.totals[figs.plan] = list(map(operator.add, totals, figs.values))
        self.counts[figs.plan] += 1

    def add_batch(self, figs: LaunchFigures, count: int) -> None:
        """Add ``count`` usable launches whose duration and values are numpy arrays."""
        assert figs.plan is not None and figs.duration_s is not None
        durations: Any = figs.duration_s
        self.launches += count
        self.duration_s = in_order(self.duration_s, durations)
        self.samples.extend(durations.tolist())
        if self.duration is None:
            self.duration = figs.duration
        self._add_extras(figs.plan, figs.extras, durations)
        totals = self.totals.get(figs.plan)
        if totals is None:
            for text in figs.missing:
                self.missing.setdefault(text)
            self.counts[figs.plan] = 0
            totals = [0.0] * len(figs.values)
        self.totals[figs.plan] = [in_order(t, v) for t, v in zip(totals, figs.values, strict=True)]
        self.counts[figs.plan] += count

    def record(self, path: str, fmt: str) -> KernelRecord:
        flops, nbytes, partial, busy = self._complete()
        missing = list(self.missing) + partial
        left_out = uncounted({p: f.value for p, f in flops.items()}, busy, self.launches)
        if left_out:  # a lower bound would place a busy GEMM as memory-bound: say unknown
            flops, missing = {}, missing + left_out
        if self.failed:
            why = "; ".join(self.reasons)
            missing.append(f"{self.failed}{NOT_AVERAGED}{why}")
        provenance = {f"flops.{p}": f.provenance for p, f in flops.items()}
        provenance |= {f"bytes.{t}": f.provenance for t, f in nbytes.items()}
        if self.duration is not None:
            provenance["duration"] = self.duration
        profile = self._means()
        self._refuse_overflow(path, flops, nbytes, profile)
        return KernelRecord(
            name=self.name,
            key=self.key,
            launches=self.launches,
            duration_s=self.duration_s,
            samples_s=tuple(self.samples),
            flops={p: f.value for p, f in flops.items()},
            bytes={t: f.value for t, f in nbytes.items()},
            provenance=provenance,
            grid=self.grid,
            block=self.block,
            sm_clock_hz=profile.pop(SM_CLOCK, None),
            memory_clock_hz=profile.pop(MEMORY_CLOCK, None),
            profile=profile,
            nvtx_range=self.nvtx,
            failed_launches=self.failed,
            missing=tuple(missing),
            source=SourceRef(path=path, row=self.first_row, format=fmt),
        )

    def _refuse_overflow(
        self,
        path: str,
        flops: dict[str, Figure],
        nbytes: dict[str, Figure],
        profile: dict[str, float],
    ) -> None:
        """A sum past the largest float (1.8e308), named by the kernel's first launch."""
        sums = {"duration": self.duration_s, **profile}
        sums |= {f"flops.{p}": f.value for p, f in flops.items()}
        sums |= {f"bytes.{t}": f.value for t, f in nbytes.items()}
        for name, value in sums.items():
            if not math.isfinite(value):
                over = "this launch" if self.launches == 1 else f"{self.launches} launches"
                reason = f"adds up past the largest float (1.8e308) over {over} of {cut(self.name)}"
                raise MalformedReport(path, launch_label(self.first_row), name, reason)

    def _complete(
        self,
    ) -> tuple[dict[str, Figure], dict[str, Figure], list[str], dict[str, tuple[float, str]]]:
        """Figures every usable launch had, the partial ones named, and the activity probes.

        Activity probes (``busy.<family>``) are summed over the launches that had them.
        """
        found: dict[str, Figure] = {}
        seen: dict[str, int] = {}
        for plan, totals in self.totals.items():
            for spec, value in zip(plan.specs, totals, strict=True):
                old = found.get(spec.key)
                prov = spec.provenance if old is None else old.provenance
                found[spec.key] = Figure(value + (old.value if old else 0.0), prov)
                seen[spec.key] = seen.get(spec.key, 0) + self.counts[plan]
        busy = {
            k[5:]: (f.value, f.provenance.metrics[0]) for k, f in found.items() if k[:5] == "busy."
        }
        partial = [
            partial_text(key, n, self.launches)
            for key, n in seen.items()
            if n != self.launches and not key.startswith("busy.")
        ]
        complete = {k: f for k, f in found.items() if seen[k] == self.launches}
        flops = {k[6:]: f for k, f in complete.items() if k.startswith("flops.")}
        nbytes = {k[6:]: f for k, f in complete.items() if k.startswith("bytes.")}
        return flops, nbytes, partial, busy


class RunBuilder:
    """Collects launches of one file and builds the RunRecord.

    Args:
        path: The file (named in errors and source references).
        fmt: The collector's name.
        options: Collect options (identity keys, fallback device name).
    """

    def __init__(self, path: Path, fmt: str, options: CollectOptions) -> None:
        self.path = str(path)
        self.fmt = fmt
        self.options = options
        self._kernels: dict[str, _Kernel] = {}
        self._ids: set[str] = set()
        self._keys: dict[tuple[str, str | None, str | None], str] = {}
        self.device_key: tuple[str | None, str | None] | None = None
        self.launch_count = 0
        self.failed = 0

    def add(
        self,
        launch_id: str,
        name: str,
        figs: LaunchFigures,
        *,
        grid: str | None = None,
        block: str | None = None,
        nvtx: str | None = None,
        row: str | None = None,
    ) -> None:
        """Add one launch; a repeated launch ID is an error naming ``row`` (its line) if given."""
        self._new_ids([launch_id], row)
        if figs.failed is None and figs.duration_s is not None:
            self._check_time(figs, figs.duration_s, row or launch_label(launch_id))
        self._kernel(launch_id, name, grid, block, nvtx).add(figs)
        self.launch_count += 1
        self.failed += figs.failed is not None

    def add_batch(
        self,
        launch_ids: list[str],
        name: str,
        figs: LaunchFigures,
        *,
        grid: str | None = None,
        block: str | None = None,
    ) -> None:
        """Add launches of one kernel whose figures are arrays (one entry per launch)."""
        self._new_ids(launch_ids)
        seconds: Any = figs.duration_s
        if seconds is not None and len(seconds) and seconds.min() < MIN_DURATION_S:
            first = int((seconds < MIN_DURATION_S).argmax())
            self._check_time(figs, float(seconds[first]), launch_label(launch_ids[first]))
        self._kernel(launch_ids[0], name, grid, block, None).add_batch(figs, len(launch_ids))
        self.launch_count += len(launch_ids)

    def _check_time(self, figs: LaunchFigures, seconds: float, where: str) -> None:
        """Refuse a launch of 0 s: ncu marks one it did not time by no value (n/a), never by 0."""
        metrics = figs.duration.metrics if figs.duration is not None else ()
        field = metrics[0] if metrics else "gpu__time_duration.sum"
        check_sample(seconds, self.path, where, field, "a launch")

    def _new_ids(self, launch_ids: list[str], row: str | None = None) -> None:
        fresh = set(launch_ids)
        if len(fresh) != len(launch_ids) or not fresh.isdisjoint(self._ids):
            seen = set(self._ids)
            for launch_id in launch_ids:
                if launch_id in seen:
                    where = row or launch_label(launch_id)
                    raise MalformedReport(self.path, where, "ID", "duplicate launch ID")
                seen.add(launch_id)
        self._ids |= fresh

    def _kernel(
        self, launch_id: str, name: str, grid: str | None, block: str | None, nvtx: str | None
    ) -> _Kernel:
        if not name.strip():
            where = launch_label(launch_id)
            raise MalformedReport(self.path, where, "Kernel Name", "empty kernel name")
        key = self._keys.get((name, grid, block))
        if key is None:  # normalising kB-long names once per distinct name, not per launch
            key = make_key(name, None, self.options.keys, grid=grid, block=block)
            self._keys[(name, grid, block)] = key
        kernel = self._kernels.get(key)
        if kernel is None:
            self.options.count(len(self._kernels) + 1, self.path)  # stop at the cap, not after
            kernel = _Kernel(name, key, launch_id, grid, block, nvtx)
            self._kernels[key] = kernel
        return kernel

    def _records(self) -> Iterator[KernelRecord]:
        """Each kernel's record, in the order first seen, its running totals let go as it is made.

        The totals of a million kernels and their records are never held together.
        """
        self._ids.clear()  # the launch IDs and name keys served their purpose: duplicates
        self._keys.clear()
        for key in list(self._kernels):
            yield self._kernels.pop(key).record(self.path, self.fmt)

    def check_device(self, launch_id: str, device: str | None, cc: str | None) -> None:
        """Every launch of a file must run on one device (name or index, and CC)."""
        current = (device, cc)
        if self.device_key is None:
            self.device_key = current
        elif current != self.device_key:
            raise MalformedReport(
                self.path,
                launch_id,
                "Device",
                f"mixed devices in one file: {_fmt_dev(current)} after {_fmt_dev(self.device_key)}",
            )

    def _refuse_untimed(self) -> None:
        """No launch with a duration (only ``--metrics`` asked for, or failed replays): an error.

        Stored, such a report was a run that judged nothing, then a baseline of 0 s kernels.
        """
        if any(kernel.launches for kernel in self._kernels.values()):
            return
        why = set(r for k in self._kernels.values() for r in k.reasons) - {"no duration"}
        raise MalformedReport(
            self.path,
            None,
            "gpu__time_duration.sum",
            f"none of its {self.launch_count} launches has a duration"
            + (f" ({'; '.join(sorted(why))})" if why else "")
            + ": nothing to time or place; profile with --set roofline",
        )

    def launch_notes(self, unmeasured: Sequence[str]) -> list[str]:
        """The run's notes on its failed launches and its ``unmeasured`` kernels (names)."""
        notes = []
        if self.failed:
            notes.append(f"{self.failed} of {self.launch_count} launches failed or had no duration")
        if unmeasured:
            notes.append(unmeasured_note(unmeasured))
        return notes

    def build(
        self, device: DeviceInfo, profiler: ProfilerInfo, notes: Iterable[str] = ()
    ) -> RunRecord:
        """The RunRecord; an empty file of launches is an error."""
        if not self._ids:
            raise MalformedReport(self.path, None, None, "the report holds no profiled launch")
        self._refuse_untimed()
        kernels = tuple(self._records())
        all_notes = list(notes) + self.launch_notes([k.name for k in kernels if not k.measured])
        all_notes += uncounted_note(kernels) + partial_note(kernels)
        return RunRecord(
            device=device,
            profiler=profiler,
            kernels=kernels,
            notes=tuple(all_notes),
            sources=(SourceRef(path=self.path, format=self.fmt),),
        )


_CLOCKS = frozenset({SM_CLOCK, MEMORY_CLOCK})


def _fmt_dev(dev: tuple[str | None, str | None]) -> str:
    return f"device {cut(dev[0] or '?')} (CC {cut(dev[1] or '?')})"
