"""Are the gate's alarms on real runners shared with the runner, or private to the kernel?

The nightly gate judges each kernel alone. A noisy neighbour or a throttled card slows many
kernels of one run on the same nights; a code change moves the kernels it touches. This
measures, on the real GPU histories, how often the other kernels of the same runner were off
their own level on the night the gate alarmed, on a labelled step, and on a short excursion
(2-4 nights off, then back), and what a runner-wide hold would have done to the gate's score.

* **Aligned groups.** The series of one suite, run on one runner, put on one axis of runs. A
  bench ends at its suite's last run and holds its last ``n`` runs, except risc0's
  ``prove/sha-256``, which left both suites 30 / 39 runs before their ends (its
  ``points_total`` is that much short, and its window ends on 2025-04-02, not 2025-05-20 /
  06-10). KomaMRI's one suite ran on three runners (CUDA, AMDGPU, Metal): a group each. The
  alignment table checks it: the correlation of each series' night-to-night residuals with
  the other members' peaks at the aligned lag.
* **Off.** A night is off its level when its log value is ``K`` (3) or more robust noises
  (1.4826 × MAD of the previous <= 60 nights' differences / √2) from the median of the 8
  nights before it. A night's share is the share of the *other* aligned series, with 8
  nights of their own behind them, off in the same direction that night; the chance share is
  its mean over every stable night of every series (outside labels and ignore zones).
* **Alarms** are ``bench_online.roofguard_alerts`` events (as ``roofguard check`` judges
  each night), a hit when ``score_series`` matches them to a labelled step, else a false
  alarm; their share is the mean over the run the gate confirmed (``Judgement.run``).
* **Excursions**: 2-4 nights in a row off on one side whose next night is back within ``K``
  noises of the level before them, 8 or more nights from any labelled step or ignore zone.
* **The hold** (offline, a prototype): an alarm whose share is at least ``S`` waits for its
  run's third night (or fourth; or only alarms on the side that fails the gate); it is dropped
  if the series is back within ``K`` noises of the level before the run by then, else raised
  that night. Scored with ``bench_online.score``.

Run: ``python tests/bench/runner_wide.py --real PATH/series.json [--k 3] [--shared 0.34]
[--markdown FILE]`` (about 25 s on 2 cores).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import runner_groups
from bench_detection import EARLY, LATE
from bench_online import (
    GATE_WINDOW,
    Labelled,
    OnlineScore,
    _events,
    _match,
    roofguard_alerts,
    score,
)
from runner_groups import (
    ALIGN_HEADER,
    LEVEL_NIGHTS,
    Group,
    Member,
    aligned_groups,
    alignment_rows,
    level_before,
)
from tables import publish

from rules.stats import judge_latest_many

# --- alarms, steps and excursions ---------------------------------------------------------


@dataclass(frozen=True)
class Alarm:
    """One event of the gate on one series: its night (index in the series) and its share."""

    group: Group
    member: Member
    night: int
    sign: int  # -1: a drop (slower), +1: a rise
    run: int  # the nights in a row the gate confirmed on, tonight included
    change: int | None  # the labelled step it finds, as ``score_series`` matches (None: false)
    ignored: bool  # in an ignore zone: counts neither way
    share: float

    @property
    def hit(self) -> bool:
        return self.change is not None


def _ignored(s: Labelled) -> np.ndarray:
    out = np.zeros(s.values.size, dtype=bool)
    for a, b in s.ignore:
        out[a : b + 1] = True
    return out


def _run_share(g: Group, m: Member, night: int, run: int, sign: int) -> float:
    """The mean share over the run's nights (those with a share)."""
    shares = [g.share(m, t + m.offset, sign) for t in range(night - run + 1, night + 1)]
    shares = [s for s in shares if not math.isnan(s)]
    return float(np.mean(shares)) if shares else math.nan


def gate_alarms(groups: Sequence[Group]) -> list[Alarm]:
    """Every event of the nightly gate on every series, with its side, run and share."""
    pairs = [(g, m) for g in groups for m in g.members]
    flags = roofguard_alerts([m.series.values for _, m in pairs])
    nights = [(g, m, t) for (g, m), f in zip(pairs, flags, strict=True) for t in _events(f)]
    judged = judge_latest_many(
        [m.series.values[max(0, t + 1 - GATE_WINDOW) : t + 1] for _, m, t in nights]
    )
    ignored = {m.sid: _ignored(m.series) for _, m in pairs}
    hits: dict[str, dict[int, int]] = {}  # series -> alarm night -> the step it finds
    for (_, m), f in zip(pairs, flags, strict=True):
        events = [t for t in _events(f) if not ignored[m.sid][t]]
        hits[m.sid] = {t: c for c, t in _match(events, m.series.changes)[0].items()}
    out = []
    for (g, m, t), j in zip(nights, judged, strict=True):
        sign = -1 if j.regressed else 1
        run = max(1, j.run)
        share = _run_share(g, m, t, run, sign)
        out.append(Alarm(g, m, t, sign, run, hits[m.sid].get(t), bool(ignored[m.sid][t]), share))
    return out


@dataclass(frozen=True)
class Shift:
    """A labelled step or an excursion of one series: its first night, side, share."""

    member: Member
    night: int
    sign: int
    nights: int
    share: float


def steps(g: Group) -> list[Shift]:
    """The labelled steps of the group's series, with the share on their first night."""
    out = []
    for m in g.members:
        for c in m.series.changes:
            sign = -1 if c in m.series.drops else 1
            out.append(Shift(m, c, sign, 1, g.share(m, c + m.offset, sign)))
    return out


def _far_from_labels(s: Labelled, a: int, b: int) -> bool:
    """Whether nights ``a..b`` are 8 or more nights from every step and ignore zone."""
    zones = [(c, c) for c in s.changes] + list(s.ignore)
    return all(b + LEVEL_NIGHTS <= lo or a - LEVEL_NIGHTS >= hi for lo, hi in zones)


def _back(m: Member, start: int, night: int) -> bool:
    """Whether ``night`` is within ``K`` noises of the level before ``start``."""
    logs = np.log(m.series.values)
    level, noise = level_before(logs, start)
    return abs(logs[night] - level) < runner_groups.K * noise


def _runs(sides: np.ndarray) -> Iterable[tuple[int, int, int]]:
    """(start, nights, side) of every run of equal non-zero sides."""
    t = 0
    while t < sides.size:
        end = t
        while end + 1 < sides.size and sides[end + 1] == sides[t]:
            end += 1
        if sides[t]:
            yield t, end - t + 1, int(sides[t])
        t = end + 1


def excursions(g: Group) -> list[Shift]:
    """2-4 nights off on one side that come back, away from every label, with their share."""
    out = []
    for m in g.members:
        z = np.nan_to_num(m.z)
        sides = np.where(np.abs(z) >= runner_groups.K, np.sign(z), 0).astype(int)
        for start, nights, sign in _runs(sides):
            end = start + nights - 1
            if not 2 <= nights <= 4 or end + 1 >= z.size or start < LEVEL_NIGHTS:
                continue
            if _far_from_labels(m.series, start, end + 1) and _back(m, start, end + 1):
                out.append(Shift(m, start, sign, nights, _run_share(g, m, end, nights, sign)))
    return out


def _stable(s: Labelled) -> np.ndarray:
    """Nights outside every labelled step's scoring window and every ignore zone."""
    out = ~_ignored(s)
    for c in s.changes:
        out[max(0, c - EARLY) : c + LATE + 1] = False
    return out


def chance(g: Group) -> float:
    """The mean share over the stable nights of every member, both sides (a side's base rate)."""
    shares = [
        g.share(m, t + m.offset, sign)
        for m in g.members
        for t in np.flatnonzero(_stable(m.series))
        for sign in (-1, 1)
    ]
    return float(np.nanmean(shares))


@dataclass(frozen=True)
class Episode:
    """Nights in a row on which a share of a group's series were off on one side."""

    night: int  # on the group's axis
    nights: int
    sign: int
    returned: float  # the share of the series off on its first night back the night after it
    labelled: bool  # a labelled step of any series within a night of it


def _off_share(g: Group, night: int, sign: int) -> float:
    zs = [m.at(night) for m in g.members]
    zs = [z for z in zs if not math.isnan(z)]
    return sum(sign * z >= runner_groups.K for z in zs) / len(zs) if len(zs) >= 2 else 0.0


def episodes(g: Group, at: float) -> list[Episode]:
    """The group's runner-wide episodes: nights with a share ≥ ``at`` of it off on one side."""
    axis = max(m.offset + m.series.values.size for m in g.members)
    sides = np.zeros(axis, dtype=int)
    for t in range(axis):
        up, down = _off_share(g, t, 1) >= at, _off_share(g, t, -1) >= at
        sides[t] = up - down if up != down else 0
    steps = {c + m.offset for m in g.members for c in m.series.changes}
    out = []
    for start, nights, sign in _runs(sides):
        end = start + nights - 1
        off = [m for m in g.members if sign * m.at(start) >= runner_groups.K]
        after = [m for m in off if end + 1 - m.offset < m.series.values.size]
        back = [m for m in after if _back(m, start - m.offset, end + 1 - m.offset)]
        returned = len(back) / len(after) if after else math.nan
        labelled = any(start - 1 <= c <= end + 1 for c in steps)
        out.append(Episode(start, nights, sign, returned, labelled))
    return out


def episode_rows(groups: Sequence[Group], at: float) -> list[str]:
    """Per group of 5 or more series: its episodes by length, returned or not, labelled or not."""
    rows = []
    for g in [g for g in groups if len(g.members) >= 5]:
        eps = episodes(g, at)
        short = [e for e in eps if 2 <= e.nights <= 4 and not e.labelled]
        came_back = sum(e.returned > 0.5 for e in short)
        rows.append(
            f"| {g.name} | {len(g.members)} | {sum(e.nights == 1 for e in eps)} | "
            f"{sum(2 <= e.nights <= 4 for e in eps)} | {sum(e.nights > 4 for e in eps)} | "
            f"{sum(e.labelled for e in eps)} | {len(short)}: {came_back} came back, "
            f"{len(short) - came_back} stayed |"
        )
    return rows


EPISODE_HEADER = [
    "| runner | series | episodes of 1 night | 2-4 nights | 5+ nights | at a labelled step "
    "(±1 night) | 2-4 nights, no label: most series back the night after? |",
    "|---|---|---|---|---|---|---|",
]


def _pct(share: float) -> str:
    return "-" if math.isnan(share) else f"{share:.0%}"


def excursion_rows(groups: Sequence[Group], alarms: Sequence[Alarm]) -> list[str]:
    """Every excursion: where, its nights, side, share, and whether the gate alarmed on it."""
    rows = []
    for g in groups:
        for x in excursions(g):
            alarmed = any(
                a.member is x.member and x.night <= a.night <= x.night + x.nights for a in alarms
            )
            side = "drop" if x.sign < 0 else "rise"
            rows.append(
                f"| {g.name} | {x.member.bench} | {x.night} | {x.nights} | {side} | "
                f"{_pct(x.share)} | {'yes' if alarmed else 'no'} |"
            )
    return rows


# --- the hold -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Hold:
    """A runner-wide hold: alarms with a share ≥ ``share`` wait for their run's ``night``-th."""

    share: float
    night: int = 3
    drops_only: bool = False  # only alarms on the side that fails the gate

    def __str__(self) -> str:
        only = ", drops only" if self.drops_only else ""
        return f"hold at share ≥ {self.share:.0%} to the run's night {self.night}{only}"


HOLDS = (
    Hold(0.2),
    Hold(0.34),
    Hold(0.5),
    Hold(0.34, 4),
    Hold(0.5, 4),
    Hold(0.34, drops_only=True),
    Hold(0.34, 4, drops_only=True),
)


def held(alarm: Alarm, hold: Hold) -> int | None:
    """The night ``alarm`` is raised on under ``hold`` (None: dropped)."""
    if math.isnan(alarm.share) or alarm.share < hold.share or alarm.run >= hold.night:
        return alarm.night
    if hold.drops_only and alarm.sign > 0:
        return alarm.night
    start = alarm.night - alarm.run + 1
    last = start + hold.night - 1
    if last >= alarm.member.series.values.size or _back(alarm.member, start, last):
        return None
    return last


def flags_with(alarms: Sequence[Alarm], member: Member, hold: Hold | None) -> np.ndarray:
    """The member's alarm nights (one a night, as events), with the hold or without."""
    flags = np.zeros(member.series.values.size, dtype=bool)
    for a in alarms:
        if a.member is member:
            night = a.night if hold is None else held(a, hold)
            if night is not None:
                flags[night] = True
    return flags


def scored(alarms: Sequence[Alarm], members: Sequence[Member], hold: Hold | None) -> OnlineScore:
    return score([m.series for m in members], [flags_with(alarms, m, hold) for m in members])


# --- the report ---------------------------------------------------------------------------


def _shared(items: Sequence[Alarm | Shift], at: float) -> str:
    """``shared of total (mean share)`` of alarms or shifts with a share."""
    shares = [x.share for x in items if not math.isnan(x.share)]
    if not shares:
        return "0"
    return f"{sum(s >= at for s in shares)} of {len(shares)} ({np.mean(shares):.0%})"


Parts = list[Sequence[Alarm | Shift]]  # hits, false alarms, drops, rises, excursions


def _parts(g: Group, alarms: Sequence[Alarm]) -> Parts:
    alarm = [a for a in alarms if a.group is g and not a.ignored]
    st = steps(g)
    return [
        [a for a in alarm if a.hit],
        [a for a in alarm if not a.hit],
        [s for s in st if s.sign < 0],
        [s for s in st if s.sign > 0],
        excursions(g),
    ]


def share_rows(groups: Sequence[Group], alarms: Sequence[Alarm], at: float) -> list[str]:
    """Per group and in total: alarms, steps and excursions, shared or private."""
    parts = {g.name: _parts(g, alarms) for g in groups}
    rows = []
    for g in groups:
        cells = " | ".join(_shared(part, at) for part in parts[g.name])
        rows.append(f"| {g.name} | {cells} | {chance(g):.1%} |")
    big = [g.name for g in groups if len(g.members) >= 5]
    for label, names in (("**all**", list(parts)), ("**runners of 5 or more series**", big)):
        total = [[x for n in names for x in parts[n][i]] for i in range(5)]
        rows.append(f"| {label} | {' | '.join(_shared(part, at) for part in total)} | |")
    return rows


SHARE_HEADER = [
    "| runner | gate's hits | gate's false alarms | labelled drops | labelled rises | "
    "excursions (2-4 nights, back) | chance share (a side, a stable night) |",
    "|---|---|---|---|---|---|---|",
]


def _back_by(a: Alarm, night: int) -> str:
    """Whether ``a``'s series is back at its level by its run's ``night``-th night."""
    start = a.night - a.run + 1
    if start + night - 1 >= a.member.series.values.size:
        return "?"
    return "yes" if _back(a.member, start, start + night - 1) else "no"


def false_alarm_rows(alarms: Sequence[Alarm]) -> list[str]:
    """Every false alarm: where, which side, the run, the share, back by the run's night 3 / 4."""
    return [
        f"| {a.group.name} | {a.member.bench} | {a.night} | {'drop' if a.sign < 0 else 'rise'} "
        f"| {a.run} | {a.share:.0%} | {_back_by(a, 3)} | {_back_by(a, 4)} |"
        for a in alarms
        if not a.hit and not a.ignored
    ]


def _held_counts(alarms: Sequence[Alarm], hold: Hold) -> str:
    """Held alarms: hits delayed / lost (drops among them), false alarms dropped / kept."""
    delayed = lost = drops_delayed = drops_lost = dropped = kept = 0
    for a in alarms:
        night = held(a, hold)
        if a.ignored or night == a.night:
            continue
        if a.change is None:
            dropped += night is None
            kept += night is not None
            continue
        gone = night is None or night > a.change + LATE
        drop = a.change in a.member.series.drops
        lost, delayed = lost + gone, delayed + (not gone)
        drops_lost, drops_delayed = (
            drops_lost + (gone and drop),
            drops_delayed + (drop and not gone),
        )
    return f"{delayed} ({drops_delayed}) / {lost} ({drops_lost}) | {dropped} / {kept}"


def hold_rows(groups: Sequence[Group], alarms: Sequence[Alarm]) -> list[str]:
    """The gate's real score without a hold and with one at each share in ``HOLDS``."""
    members = [m for g in groups for m in g.members]
    rows = []
    for hold in (None, *HOLDS):
        s = scored(alarms, members, hold)
        label = "no hold (the gate)" if hold is None else str(hold)
        moved = "- | -" if hold is None else _held_counts(alarms, hold)
        rows.append(
            f"| {label} | {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} | "
            f"{s.false_alarms_per_100:.2f} | {s.drops_found} of {s.drops} | "
            f"{np.mean(s.delays):.2f} | {s.tp} / {s.fp} | {moved} |"
        )
    return rows


HOLD_HEADER = [
    "| gate | precision | recall | F1 | false alarms / 100 stable | drops found | "
    "mean delay (nights) | hits / false alarms | hits held: delayed (drops) / lost (drops) | "
    "false alarms held: dropped / raised later |",
    "|---|---|---|---|---|---|---|---|---|---|",
]


def report(path: Path, at: float) -> str:
    groups = aligned_groups(path)
    alarms = gate_alarms(groups)
    return "\n".join(
        [
            f"Aligned groups (K = {runner_groups.K:g} noises; "
            f"a share ≥ {at:.0%} counts as shared).",
            "",
            *ALIGN_HEADER,
            *alignment_rows(groups),
            "",
            "Shared of total (mean share of the other series off on the same side):",
            "",
            *SHARE_HEADER,
            *share_rows(groups, alarms, at),
            "",
            "The false alarms:",
            "",
            "| runner | bench | night | side | run | share | back by the run's night 3 | night 4 |",
            "|---|---|---|---|---|---|---|---|",
            *false_alarm_rows(alarms),
            "",
            "The excursions:",
            "",
            "| runner | bench | first night | nights | side | share | the gate alarmed |",
            "|---|---|---|---|---|---|---|",
            *excursion_rows(groups, alarms),
            "",
            f"Runner-wide episodes (a share ≥ {at:.0%} of a group's series off on one side):",
            "",
            *EPISODE_HEADER,
            *episode_rows(groups, at),
            "",
            "The hold, scored as `bench_online.py --real` scores the gate:",
            "",
            *HOLD_HEADER,
            *hold_rows(groups, alarms),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", type=Path, required=True, help="real-histories series.json")
    parser.add_argument(
        "--k", type=float, default=runner_groups.K, help="noises off the level that count"
    )
    parser.add_argument("--shared", type=float, default=0.34, help="a share that is shared")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    args = parser.parse_args()
    runner_groups.K = args.k  # the groups' shares read it too
    publish(lambda: report(args.real, args.shared), args.markdown)


if __name__ == "__main__":
    main()
