"""Online detection by kind of runner noise: the gate and its peers on each kind, each level.

``bench_online.py`` replays ``bench_detection``'s mixed series; this one replays the series of
``noise_kinds.py``, one kind at a time (clean, one-night outliers, bursts of 2-4 outliers,
two-level sticky runners, heavy tails, drift), every night judged as ``roofguard check`` would,
and reports for every noise level and kind, for the gate and every peer of ``bench_online``
(conbench's z-score, Apache Otava's e-divisive re-run on the prefix, the fixed ratio): F1 and
false alarms per 100 stable nights, and for the gate the drops of 10% or more found within
3 nights. The peers are tuned per noise level on the training seed's series of every kind;
the figures are on ``noise_kinds.HELD_OUT_SEED``, which no setting was chosen on.

The peers' tuning and alerts do not change while the gate is tuned, and they cost 9-15 minutes
a run, so they are kept in a cache directory (``$ROOFGUARD_BENCH_CACHE``, else
``~/.cache/roofguard-bench``; ``--no-cache`` ignores it): keyed by a hash of what they are
computed from (the series' values, the method, its parameters and the grids), so a change of
the generator or of a peer's code path that changes its inputs computes them again.

The frontier column says whether the gate is on it: F1 at least every peer's, and false alarms
at most those of every peer whose recall is at least half the gate's (a peer that hardly
alerts is quiet, not better).

Run: ``python tests/bench/bench_kinds.py [--series 40] [--gate-only] [--no-cache]
[--markdown FILE]`` (``--series``: per kind and noise level; ``--gate-only`` skips the peers).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_detection import NOISES, OTAVA_GRID, RATIO_GRID, tune_per_noise
from bench_online import (
    Labelled,
    OnlineScore,
    Peers,
    conbench_alerts,
    otava,
    otava_alerts,
    ratio_alerts,
    roofguard_alerts,
    score,
)
from noise_kinds import HELD_OUT_SEED, KINDS, KindSeries, make_kind_dataset
from tables import publish

BIG_DROP = -0.10  # "drops of 10% or more": magnitude at most this
Runs = dict[str, list[np.ndarray]]
#: Bumped when a peer's code changes in a way its inputs do not show (it empties the cache).
CACHE_VERSION = 1


def cache_dir() -> Path | None:
    """Where the peers' results are kept (None: ``--no-cache``)."""
    if os.environ.get("ROOFGUARD_BENCH_CACHE") == "":
        return None
    default = Path.home() / ".cache" / "roofguard-bench"
    return Path(os.environ.get("ROOFGUARD_BENCH_CACHE", default))


def _key(*parts: object, series: Sequence[np.ndarray] = ()) -> str:
    digest = hashlib.sha256(repr((CACHE_VERSION, parts)).encode())
    for values in series:
        digest.update(np.ascontiguousarray(values, dtype=float).tobytes())
    return digest.hexdigest()[:32]


def cached(key: str, compute: Callable[[], object]) -> object:
    """``compute()``, or what it gave before under ``key`` (JSON in ``cache_dir``)."""
    folder = cache_dir()
    path = folder / f"{key}.json" if folder else None
    if path is not None and path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    value = compute()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")
    return value


def peer_alerts(
    name: str,
    params: object,
    alerts: Callable[[np.ndarray], np.ndarray],
    values: Sequence[np.ndarray],
) -> list[np.ndarray]:
    """One peer's alerts on every series (cached by the series' values and the parameters)."""
    flags = cached(
        _key("alerts", name, params, series=values),
        lambda: [np.flatnonzero(alerts(v)).tolist() for v in values],
    )
    out = []
    for v, hits in zip(values, flags, strict=True):  # type: ignore[call-overload]
        row = np.zeros(v.size, dtype=bool)
        row[hits] = True
        out.append(row)
    return out


def labelled(series: Sequence[KindSeries]) -> list[Labelled]:
    """The series as ``bench_online`` scores them; ``drops``: the changes of -10% or more."""
    return [
        Labelled(
            s.values,
            () if s.change is None else (s.change,),
            s.dips,
            ignore=s.ignore,
            drops=(s.change,) if s.change is not None and s.magnitude <= BIG_DROP else (),
        )
        for s in series
    ]


def tune(train_seed: int, count: int) -> dict[float, Peers]:
    """Otava (offline F1) and the fixed ratio (online F1) per noise level, every kind pooled."""
    tuned = {}
    for noise in NOISES:
        train = [s for k in KINDS for s in make_kind_dataset(train_seed, noise, k, count)]
        key = _key("tune", OTAVA_GRID, RATIO_GRID, series=[s.values for s in train])
        pvalue, magnitude, ratio = cached(key, lambda train=train: _tune_one(train))  # type: ignore[misc]
        tuned[noise] = Peers((pvalue, magnitude), ratio)
    return tuned


def _tune_one(train: list[KindSeries]) -> list[float]:
    params = tune_per_noise(train, OTAVA_GRID, otava)
    online = labelled(train)
    ratio = max(
        RATIO_GRID, key=lambda r: score(online, [ratio_alerts(r)(s.values) for s in online]).f1
    )
    return [*params, ratio]  # type: ignore[misc]


def runs(series: list[Labelled], peers: Peers | None) -> Runs:
    """Each method's alerts on ``series`` (the gate alone without ``peers``)."""
    values = [s.values for s in series]
    out: Runs = {"roofguard gate": roofguard_alerts(values)}
    if peers is not None:
        out["conbench z-score"] = peer_alerts("conbench", (), conbench_alerts, values)
        otava_run = otava_alerts(*peers.otava)
        out["Apache Otava (prefix)"] = peer_alerts("otava", peers.otava, otava_run, values)
        ratio_run = ratio_alerts(peers.ratio)
        out["fixed ratio"] = peer_alerts("ratio", peers.ratio, ratio_run, values)
    return out


def on_frontier(scores: dict[str, OnlineScore]) -> str:
    """Whether the gate's F1 is at least every peer's and its false alarms at most those of
    every peer that finds at least half as much; else which peer is ahead, and how."""
    gate, *peers = scores.items()
    misses = []
    for name, s in peers:
        if s.f1 > gate[1].f1:
            misses.append(f"{name} F1")
        if s.recall >= gate[1].recall / 2 and s.false_alarms_per_100 < gate[1].false_alarms_per_100:
            misses.append(f"{name} quieter")
    return "yes" if not misses else "no: " + ", ".join(misses)


def _cells(s: OnlineScore) -> str:
    return f"{s.f1:.2f} / {s.false_alarms_per_100:.2f}"


def row(noise: str, kind: str, scores: dict[str, OnlineScore]) -> str:
    gate = scores["roofguard gate"]
    found = f"{gate.drops_found}/{gate.drops}"
    cells = [_cells(s) for name, s in scores.items() if name != "roofguard gate"]
    if len(scores) > 1:
        cells.append(on_frontier(scores))
    return " | ".join([f"| {noise}", kind, _cells(gate), found, *cells]) + " |"


def header(methods: Sequence[str]) -> list[str]:
    cols = ["noise", "kind", "gate F1 / false alarms", "gate: drops ≥ 10% found"]
    cols += [f"{m} F1 / false alarms" for m in methods[1:]]
    cols += ["frontier"] if len(methods) > 1 else []
    return ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]


def report(count: int, train_seed: int, test_seed: int, gate_only: bool) -> str:
    tuned = None if gate_only else tune(train_seed, count)
    lines: list[str] = []
    totals: dict[str, dict[str, OnlineScore]] = {k: {} for k in KINDS}
    for noise in NOISES:
        for kind in KINDS:
            series = labelled(make_kind_dataset(test_seed, noise, kind, count))
            scores = {m: score(series, f) for m, f in runs(series, tuned and tuned[noise]).items()}
            lines.append(row(f"{noise:.1%}", kind, scores))
            for method, s in scores.items():
                total = totals[kind].setdefault(method, OnlineScore())
                for field in ("tp", "fp", "changes", "stable_points", "drops", "drops_found"):
                    setattr(total, field, getattr(total, field) + getattr(s, field))
    lines += [row("all", kind, totals[kind]) for kind in KINDS]
    intro = (
        f"Online, by kind: {count} series per kind and noise level (seed {test_seed}; peers "
        f"tuned on seed {train_seed}). F1 / false alarms per 100 stable nights."
    )
    return "\n".join([intro, "", *header(list(totals[KINDS[0]])), *lines]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=40, help="series per kind and noise level")
    parser.add_argument("--train-seed", type=int, default=1)
    parser.add_argument("--test-seed", type=int, default=HELD_OUT_SEED)
    parser.add_argument("--gate-only", action="store_true", help="the gate alone (no peers)")
    parser.add_argument("--no-cache", action="store_true", help="compute the peers again")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    if args.no_cache:
        os.environ["ROOFGUARD_BENCH_CACHE"] = ""
    publish(
        lambda: report(args.series, args.train_seed, args.test_seed, args.gate_only),
        args.markdown,
    )


if __name__ == "__main__":
    main()
