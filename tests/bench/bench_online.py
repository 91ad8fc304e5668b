"""Online detection: at every night, is the newest point a regression? roofguard's gate vs peers.

The offline benchmark (``bench_detection.py``) asks where the changes are in a finished
series. The gate has to answer every night, on the series so far: this benchmark replays
every labelled series point by point and asks each method, at each night ``t``, whether
night ``t`` raises an alert. Consecutive alerts are one event, reported at its first night;
an event within ``[c - 1, c + 3]`` finds the change at ``c``.

Methods, all run the same way (on the prefix ending at the newest night):

* roofguard: ``rules.stats.judge_latest`` with its shipped defaults (``confirm_runs`` 2);
  an alert is a confirmed change (regressed or improved) on the newest night. It sees what
  ``roofguard check`` hands it: the newest ``baseline.gate_window`` nights (60), tonight's
  included, not the whole prefix.
* conbench: lookback z-score, mean and standard deviation of the previous <= 100 points,
  alert at ``|z| >= 5`` (conbench's default threshold).
* Apache Otava re-run on the prefix: an alert when a newer change point appears, with the
  parameters tuned offline per noise level on the training seed (``bench_detection``).
* fixed ratio versus the previous night, ratio tuned per noise level on the training seed.

Scores: precision, recall, F1, false alarms per 100 stable points (and how many of them are
late: a labelled change the method missed, found 4-8 nights after it; they count as false
alarms all the same), median detection delay (nights after the change), and the share of
labelled one-night dips flagged (an alert on the dip's night or the next). Also run on the
real GPU histories (``--real``, values normalised, higher is better; ``ignore`` zones count
neither way). Then a paired bootstrap over the series (``paired.py``) says how often the gate
is ahead of every peer, so that a margin of one change in a hundred series is not read as a
result.

Run: ``python tests/bench/bench_online.py [--series 100] [--real PATH] [--markdown FILE]``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_detection import (
    EARLY,
    LATE,
    MAX_DELAY,
    NOISES,
    OTAVA_GRID,
    RATIO_GRID,
    Score,
    fixed_ratio,
    make_dataset,
    otava,
    tune_per_noise,
)
from paired import HEADER as PAIRED_HEADER
from paired import compare
from paired import row as paired_row
from tables import publish

from rules.stats import judge_latest_many
from service.config import BaselineOptions

START = 5  # nights of history before the first judged night
#: The nightly check's window of base-branch runs for the gate (the judged night included).
GATE_WINDOW = BaselineOptions().gate_window
Alerts = Callable[[np.ndarray], np.ndarray]  # one series -> bool per night


@dataclass
class Labelled:
    """A series with its labels: changes (first index of the new level), dips, ignore zones."""

    values: np.ndarray
    changes: tuple[int, ...]
    dips: tuple[int, ...] = ()
    ignore: tuple[tuple[int, int], ...] = ()
    drops: tuple[int, ...] = ()


def roofguard_alerts(batch: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The nightly gate on every prefix of every series (one batch for all of them)."""
    starts = [(v, max(0, t + 1 - GATE_WINDOW), t) for v in batch for t in range(START, v.size)]
    prefixes = [v[first : t + 1] for v, first, t in starts]
    judged = iter(judge_latest_many(prefixes))
    out = []
    for v in batch:
        flags = np.zeros(v.size, dtype=bool)
        for t in range(START, v.size):
            j = next(judged)
            flags[t] = j.regressed or j.improved
        out.append(flags)
    return out


def conbench_alerts(values: np.ndarray, z: float = 5.0, lookback: int = 100) -> np.ndarray:
    """conbench's lookback z-score: mean and SD of up to ``lookback`` previous points."""
    flags = np.zeros(values.size, dtype=bool)
    for t in range(START, values.size):
        prev = values[max(0, t - lookback) : t]
        sd = prev.std(ddof=1)
        flags[t] = sd > 0 and abs(values[t] - prev.mean()) / sd >= z
    return flags


def otava_alerts(max_pvalue: float, min_magnitude: float) -> Alerts:
    """Otava re-run on each prefix: an alert when its newest change point is a new one."""
    detect = otava(max_pvalue, min_magnitude)

    def alerts(values: np.ndarray) -> np.ndarray:
        flags = np.zeros(values.size, dtype=bool)
        newest = -1
        for t in range(START, values.size):
            found = detect(values[: t + 1])
            latest = max(found, default=-1)
            flags[t] = latest > newest
            newest = max(newest, latest)
        return flags

    return alerts


def ratio_alerts(ratio: float) -> Alerts:
    """A fixed ratio versus the previous night."""
    detect = fixed_ratio(ratio)

    def alerts(values: np.ndarray) -> np.ndarray:
        flags = np.zeros(values.size, dtype=bool)
        flags[[i for i in detect(values) if i >= START]] = True
        return flags

    return alerts


# --- scoring -----------------------------------------------------------------------------


@dataclass
class OnlineScore(Score):
    """Counts of one method over a set of series; precision, recall and F1 as offline."""

    dips: int = 0
    dips_flagged: int = 0
    drops: int = 0
    drops_found: int = 0
    late: int = 0  # false alarms that are a labelled change found after the window

    @property
    def late_per_100(self) -> float:
        return 100.0 * self.late / self.stable_points if self.stable_points else 0.0

    @property
    def dip_share(self) -> float:
        return self.dips_flagged / self.dips if self.dips else 0.0


def _events(flags: np.ndarray) -> list[int]:
    return [int(i) for i in np.flatnonzero(flags & ~np.roll(flags, 1))]


def _near(t: int, c: int) -> bool:
    return c - EARLY <= t <= c + LATE


def _late(events: Sequence[int], missed: Sequence[int]) -> int:
    """False alarms that find a missed labelled change after the window (one per change)."""
    return sum(any(c + LATE < t <= c + MAX_DELAY for t in events) for c in missed)


def _match(events: Sequence[int], changes: Sequence[int]) -> tuple[dict[int, int], list[int]]:
    """Each change's first unmatched alert within its window (change -> alert), and the missed."""
    found: dict[int, int] = {}
    missed = []
    for c in changes:
        hits = [t for t in events if _near(t, c) and t not in found.values()]
        if hits:
            found[c] = hits[0]
        else:
            missed.append(c)
    return found, missed


def score_series(s: Labelled, flags: np.ndarray, into: OnlineScore) -> None:
    """Add one series' alerts to ``into``."""
    ignored = np.zeros(s.values.size, dtype=bool)
    for a, b in s.ignore:
        ignored[a : b + 1] = True
    in_window = np.zeros(s.values.size, dtype=bool)
    for c in s.changes:
        in_window[max(0, c - EARLY) : c + LATE + 1] = True
    events = [t for t in _events(flags) if not ignored[t]]
    found, missed = _match(events, s.changes)
    matched = set(found.values())
    into.delays += tuple(t - c for c, t in found.items())
    into.drops_found += sum(c in s.drops for c in found)
    into.tp += len(matched)
    into.fp += len(events) - len(matched)
    into.late += _late([t for t in events if t not in matched], missed)
    into.changes += len([c for c in s.changes if c >= START])
    into.drops += len([c for c in s.drops if c >= START])
    into.stable_points += int(np.sum(~in_window[START:] & ~ignored[START:]))
    # One-night dips only: a dip on two nights in a row is not one (the gate may confirm it).
    lonely = [d for d in s.dips if d - 1 not in s.dips and d + 1 not in s.dips]
    dips = [d for d in lonely if d >= START and not in_window[d] and not ignored[d]]
    into.dips += len(dips)
    into.dips_flagged += sum(bool(flags[d : d + 2].any()) for d in dips)


def score(series: Sequence[Labelled], flags: Sequence[np.ndarray]) -> OnlineScore:
    result = OnlineScore()
    for s, f in zip(series, flags, strict=True):
        score_series(s, f, result)
    return result


def per_series(series: Sequence[Labelled], flags: Sequence[np.ndarray]) -> np.ndarray:
    """Each series' counts (true and false alarms, changes, stable points), for resampling."""
    counts = []
    for s, f in zip(series, flags, strict=True):
        one = OnlineScore()
        score_series(s, f, one)
        counts.append((one.tp, one.fp, one.changes, one.stable_points))
    return np.asarray(counts, dtype=float)


def paired_comparison(
    label: str, series: Sequence[Labelled], runs: Sequence[Sequence[np.ndarray]]
) -> str:
    """The paired-bootstrap row of the gate (``runs[0]``) against the peers (the rest)."""
    gate, *peers = (per_series(series, flags) for flags in runs)
    return paired_row(label, compare(gate, peers))


# --- data ----------------------------------------------------------------------------------


def generated(seed: int, noise: float, count: int) -> list[Labelled]:
    """``bench_detection``'s labelled series at one noise level."""
    return [
        Labelled(s.values, () if s.change is None else (s.change,), s.dips)
        for s in make_dataset(seed, noise, count)
    ]


def real(path: Path) -> list[Labelled]:
    """The real GPU histories: labelled steps and ignore zones (values higher-is-better)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for entry in data["series"]:
        steps = [e for e in entry["events"] if e["kind"] == "step"]
        zones = [(e["index"], e["end"]) for e in entry["events"] if e["kind"] == "ignore"]
        drops = tuple(e["index"] for e in steps if e["direction"] == "drop")
        values = np.asarray(entry["values"], dtype=float)
        out.append(Labelled(values, tuple(e["index"] for e in steps), (), tuple(zones), drops))
    return out


# --- the report ----------------------------------------------------------------------------

HEADER = [
    "| data | method | precision | recall | F1 | false alarms / 100 stable | of them late | "
    "delay | dips flagged | parameters |",
    "|---|---|---|---|---|---|---|---|---|---|",
]


def _row(label: str, method: str, s: OnlineScore, params: str) -> str:
    return (
        f"| {label} | {method} | {s.precision:.2f} | {s.recall:.2f} | {s.f1:.2f} | "
        f"{s.false_alarms_per_100:.2f} | {s.late_per_100:.2f} | {s.delay:.0f} | "
        f"{s.dip_share:.1%} | {params} |"
    )


@dataclass(frozen=True)
class Peers:
    """Peer parameters tuned on the training seed at one noise level."""

    otava: tuple[float, float]
    ratio: float


def tune_peers(train_seed: int, count: int) -> dict[float, Peers]:
    """Otava (offline F1) and the fixed ratio (online F1) per noise level, training seed."""
    tuned = {}
    for noise in NOISES:
        offline = make_dataset(train_seed, noise, count)
        params = tune_per_noise(offline, OTAVA_GRID, otava)
        train = generated(train_seed, noise, count)
        ratio = max(
            RATIO_GRID, key=lambda r: score(train, [ratio_alerts(r)(s.values) for s in train]).f1
        )
        tuned[noise] = Peers(params, ratio)  # type: ignore[arg-type]
    return tuned


def method_rows(label: str, series: list[Labelled], peers: Peers) -> tuple[list[str], str]:
    """The methods' rows at one noise level, and the gate's paired comparison with the peers."""
    values = [s.values for s in series]
    pvalue, magnitude = peers.otava
    runs = (
        ("roofguard gate", roofguard_alerts(values), "shipped defaults, confirm_runs=2"),
        ("conbench z-score", [conbench_alerts(v) for v in values], "lookback 100, z 5"),
        (
            "Apache Otava (prefix)",
            [otava_alerts(pvalue, magnitude)(v) for v in values],
            f"max_pvalue={pvalue:g}, min_magnitude={magnitude:g}",
        ),
        ("fixed ratio", [ratio_alerts(peers.ratio)(v) for v in values], f"ratio {peers.ratio:g}"),
    )
    rows = [_row(label, m, score(series, flags), p) for m, flags, p in runs]
    return rows, paired_comparison(label, series, [flags for _, flags, _ in runs])


def _nearest(tuned: dict[float, Peers], series: Labelled) -> Peers:
    diffs = np.abs(np.diff(series.values))
    noise = 1.4826 * float(np.median(diffs)) / math.sqrt(2) / float(np.median(series.values))
    return tuned[min(tuned, key=lambda n: abs(math.log(n / max(noise, 1e-4))))]


def real_rows(path: Path, tuned: dict[float, Peers]) -> tuple[list[str], str]:
    """Each real series with the peers' parameters of its nearest noise level (and paired)."""
    series = real(path)
    by_level: dict[float, list[Labelled]] = {}
    for s in series:
        by_level.setdefault(_nearest_key(tuned, s), []).append(s)
    flags: dict[str, list[tuple[Labelled, np.ndarray]]] = {}
    for noise, group in by_level.items():
        peers = tuned[noise]
        values = [s.values for s in group]
        runs = {
            "roofguard gate": roofguard_alerts(values),
            "conbench z-score": [conbench_alerts(v) for v in values],
            "Apache Otava (prefix)": [otava_alerts(*peers.otava)(v) for v in values],
            "fixed ratio": [ratio_alerts(peers.ratio)(v) for v in values],
        }
        for method, found in runs.items():
            flags.setdefault(method, []).extend(zip(group, found, strict=True))
    rows = []
    for method, pairs in flags.items():
        s = score([p[0] for p in pairs], [p[1] for p in pairs])
        found = f"drops found {s.drops_found}/{s.drops}"
        rows.append(_row(f"real ({len(series)})", method, s, f"per nearest noise level; {found}"))
    ordered = [p[0] for p in next(iter(flags.values()))]  # every method saw the same order
    runs = [[p[1] for p in pairs] for pairs in flags.values()]
    return rows, paired_comparison(f"real ({len(series)})", ordered, runs)


def _nearest_key(tuned: dict[float, Peers], series: Labelled) -> float:
    peers = _nearest(tuned, series)
    return next(n for n, p in tuned.items() if p is peers)


def report(series: int, train_seed: int, test_seed: int, real_path: Path | None) -> str:
    tuned = tune_peers(train_seed, series)
    lines = [
        f"Online: every night of {series} labelled series per noise level (test seed "
        f"{test_seed}; peers tuned on seed {train_seed}); delay in nights after the change.",
        "",
        *HEADER,
    ]
    comparisons = []
    for noise in NOISES:
        rows, compared = method_rows(
            f"{noise:.1%} noise", generated(test_seed, noise, series), tuned[noise]
        )
        lines += rows
        comparisons.append(compared)
    if real_path is not None and real_path.exists():
        rows, compared = real_rows(real_path, tuned)
        lines += rows
        comparisons.append(compared)
    lines += ["", PAIRED_INTRO, "", *PAIRED_HEADER, *comparisons]
    return "\n".join(lines) + "\n"


PAIRED_INTRO = (
    "Paired bootstrap (the series resampled 2,000 times, the same resample for every method): "
    "how often the gate is ahead of every peer."
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=100, help="series per noise level")
    parser.add_argument("--train-seed", type=int, default=1)
    parser.add_argument("--test-seed", type=int, default=2)
    parser.add_argument("--real", type=Path, help="real-histories series.json")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    publish(lambda: report(args.series, args.train_seed, args.test_seed, args.real), args.markdown)


if __name__ == "__main__":
    main()
