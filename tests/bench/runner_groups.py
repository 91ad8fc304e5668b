"""The real histories grouped by runner and put on one axis of runs (``runner_wide.py``).

A bench ends at its suite's last run and holds its last ``n`` runs, except risc0's
``prove/sha-256``, which left both suites 30 / 39 runs before their ends. KomaMRI's one suite
ran on three runners (CUDA, AMDGPU, Metal): a group each. ``alignment_rows`` checks the
placing: the correlation of each series' night-to-night residuals with the other members'
peaks at the aligned lag. ``off_z`` is each night's robust z against the nights before it.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_online import Labelled, real

LEVEL_NIGHTS = 8  # the level a night is judged against: the median of the nights before it
NOISE_NIGHTS = 60  # the nights the noise is measured on (the gate's window)
ENDS_EARLY = "prove/sha-256"  # risc0's bench that left its suites before their last runs
LAGS = range(-10, 11)  # the lags the alignment check compares the aligned one with
K = 3.0  # how many noises off a night must be (``--k``)


@dataclass
class Member:
    """One series of an aligned group: its labels, where it sits on the group's axis."""

    sid: str
    bench: str
    series: Labelled
    offset: int  # night on the group's axis = index in the series + offset
    z: np.ndarray = field(default_factory=lambda: np.zeros(0))  # per night, nan: too young
    resid: np.ndarray = field(default_factory=lambda: np.zeros(0))  # for the alignment check

    def at(self, night: int) -> float:
        """Its z on the group's night ``night`` (nan where it has none)."""
        i = night - self.offset
        return float(self.z[i]) if 0 <= i < self.z.size else math.nan


@dataclass
class Group:
    """The aligned series of one runner."""

    name: str
    members: list[Member]

    def share(self, who: Member, night: int, sign: int) -> float:
        """The share of the other members off on ``sign``'s side on ``night`` (nan: none)."""
        zs = [m.at(night) for m in self.members if m is not who]
        zs = [z for z in zs if not math.isnan(z)]
        return sum(sign * z >= K for z in zs) / len(zs) if zs else math.nan


# --- the data -----------------------------------------------------------------------------


def _runner(source: dict[str, str]) -> str:
    """The runner a series ran on: its suite, split by backend for KomaMRI."""
    if source["repo"] == "JuliaHealth/KomaMRI.jl":
        return f"KomaMRI {source['bench'].rsplit('/', 1)[-1]}"
    if source["repo"] == "risc0/ghpages":
        return f"risc0 {source['suite']}"
    return source["suite"]


def aligned_groups(path: Path) -> list[Group]:
    """The real histories by runner, each series placed on its group's axis of runs."""
    entries = json.loads(path.read_text(encoding="utf-8"))["series"]
    groups: dict[str, list[tuple[dict[str, Any], Labelled]]] = {}
    for entry, labelled in zip(entries, real(path), strict=True):
        groups.setdefault(_runner(entry["source"]), []).append((entry, labelled))
    out = []
    for name, group in groups.items():
        longest = max(e["n"] for e, _ in group)
        total = max(e["source"]["points_total"] for e, _ in group)
        members = []
        for e, labelled in group:
            early = total - e["source"]["points_total"] if e["source"]["bench"] == ENDS_EARLY else 0
            offset = longest - e["n"] - early
            m = Member(e["series_id"], e["source"]["bench"], labelled, offset)
            m.z, m.resid = off_z(m.series.values), _residuals(m.series.values)
            members.append(m)
        out.append(Group(name, members))
    return out


def off_z(values: np.ndarray) -> np.ndarray:
    """Each night's robust z against the median of the nights before it (nan: too young)."""
    logs = np.log(values)
    z = np.full(values.size, math.nan)
    for t in range(LEVEL_NIGHTS, values.size):
        level, noise = level_before(logs, t)
        z[t] = (logs[t] - level) / noise
    return z


def level_before(logs: np.ndarray, t: int) -> tuple[float, float]:
    """The level night ``t`` of ``logs`` is judged against, and its noise (floored above 0).

    The median of the ``LEVEL_NIGHTS`` nights before it; the robust night-to-night noise of
    the ``NOISE_NIGHTS`` before it.
    """
    before = logs[max(0, t - NOISE_NIGHTS) : t]
    noise = 1.4826 * float(np.median(np.abs(np.diff(before)))) / math.sqrt(2)
    return float(np.median(logs[max(0, t - LEVEL_NIGHTS) : t])), max(noise, 1e-6)


# --- alignment ----------------------------------------------------------------------------


def _residuals(values: np.ndarray) -> np.ndarray:
    """Log values less their centred 9-night median, in noises, clipped at 5 (ends nan)."""
    logs = np.log(values)
    centred = np.median(np.lib.stride_tricks.sliding_window_view(logs, 9), axis=1)
    noise = 1.4826 * float(np.median(np.abs(np.diff(logs)))) / math.sqrt(2)
    out = np.full(values.size, math.nan)
    out[4:-4] = np.clip((logs[4:-4] - centred) / max(noise, 1e-6), -5, 5)
    return out


def _corr(a: Member, b: Member, lag: int, shift: int = 0) -> float:
    """The correlation of ``a``'s residuals with ``b``'s ``lag`` runs later.

    ``shift`` places ``a`` that many runs later on the axis than its offset says.
    """
    ra, rb = a.resid, b.resid
    pairs = [
        (ra[i], rb[j])
        for i in range(ra.size)
        if 0 <= (j := i + a.offset + shift - b.offset + lag) < rb.size
    ]
    x, y = np.asarray(pairs).T if pairs else (np.zeros(0), np.zeros(0))
    ok = ~np.isnan(x) & ~np.isnan(y)
    return float(np.corrcoef(x[ok], y[ok])[0, 1]) if ok.sum() >= 30 else math.nan


def _pairs_corr(g: Group, lag: int, who: str | None = None, shift: int = 0) -> float:
    """The mean correlation over the group's pairs (those with ``who``, if named) at ``lag``.

    ``shift`` moves ``who``'s series that many runs later on the axis (its ends aligned).
    """
    out = []
    for a in g.members:
        for b in g.members:
            if a is b or (who is not None and a.bench != who):
                continue
            out.append(_corr(a, b, lag, shift))
    return float(np.nanmean(out)) if not all(math.isnan(c) for c in out) else math.nan


def alignment_rows(groups: Sequence[Group]) -> list[str]:
    """Per group: the pairs' mean correlation at the aligned lag against every other lag."""
    rows = []
    for g in groups:
        by_lag = {lag: _pairs_corr(g, lag) for lag in LAGS}
        others = [(k, v) for k, v in by_lag.items() if k and not math.isnan(v)]
        lag, top = max(others, key=lambda kv: abs(kv[1]))
        rows.append(f"| {g.name} | {len(g.members)} | {by_lag[0]:+.2f} | {top:+.2f} ({lag:+d}) |")
        for m in [m for m in g.members if m.offset < 0]:
            ends = _pairs_corr(g, 0, m.bench, -m.offset)
            rows.append(
                f"| ... {m.bench} with the others | | {_pairs_corr(g, 0, m.bench):+.2f} | "
                f"{ends:+.2f} (ends aligned instead) |"
            )
    return rows


ALIGN_HEADER = [
    "| runner | series | pairs' mean correlation, aligned | largest in size at another lag "
    f"within ±{max(LAGS)} runs |",
    "|---|---|---|---|",
]
