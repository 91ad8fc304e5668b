"""A new card's first nights: false alarms, and when a fall on the new card fails (a script).

A repository's nightly fleet moves from one real catalog card to another (A100 -> H100 by
default). ``--kernels`` kernels (memory-bound streams and bf16 tensor-core GEMMs, 40-90% of
the old card's roof) have 30 nights on the old card and 10 on the new one, each through the
real nightly check (``check_run`` on a SQLite store). Every night's time is the kernel's roof
time over its percent of roof, times its own noise (log-uniform 0.5-8%, lognormal), a clock
wobble of 1.5% a night shared by every kernel and the odd dip (1% of nights 5-20% slower), as
``bench_devices.py`` draws them. On the new card every kernel keeps up (memory-bound ones
within -5..+3% of their percent, compute-bound ones losing 0-12%), except a tenth of them,
which fall 20% (1.25x the time) on the new card from night 2, 3, 4 or 5 (a change of code, on
the same card). Then a pull request on top of each of the new card's first four nights, with a
tenth of the kernels 1.25x slower than that night.

Printed per seed and summed: kernel-nights of kernels that kept up which failed or warned
(roof-drop), the falls failed and on which night after the fall (0: the night itself), those
never failed in the ten nights, how many nights each fall failed (one change, one failure, as
on a settled card); and for the pull requests, the slowed kernels failed or warned
and the steady ones (neither slowed nor falling on main) failed or warned.

Usage::

    python tests/bench/bench_new_card_nights.py [--kernels 300] [--seeds 2]
        [--cards A100-SXM4-80GB,H100-SXM5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from factories import make_kernel, make_run  # noqa: E402

from collectors.schema import RunKind, RunRecord  # noqa: E402
from rules import Roof, builtin_catalog, place_run  # noqa: E402
from service.config import RoofguardConfig  # noqa: E402
from service.pipeline.check import check_run  # noqa: E402
from service.store.db import open_store, session_scope  # noqa: E402
from service.store.ingest import ingest_run  # noqa: E402

OLD_NIGHTS, NEW_NIGHTS, FALL = 30, 10, 1.25
FIRST = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)
REPO = "bench/new-card"


@dataclass(frozen=True)
class Kernel:
    """One kernel's work, percent of roof on each card, noise and the night it falls (0: never)."""

    key: str
    flops: dict[str, float]
    dram: float
    percent: dict[str, float]
    noise: float
    falls_on: int


def fleet(n: int, cards: tuple[str, str], rng: np.random.Generator) -> list[Kernel]:
    """``n`` kernels, a tenth of them falling on the new card from its night 2-5."""
    old, new = cards
    kernels = []
    for i in range(n):
        compute = i % 2 == 1
        dram = float(rng.uniform(1e8, 4e9))
        flops = {"tensor_bf16": dram * float(rng.uniform(300, 1000))} if compute else {}
        flops = flops or {"fp32": dram * float(rng.uniform(0.05, 2.0))}
        pct = float(rng.uniform(40, 90))
        kept = pct * float(rng.uniform(0.88, 1.0) if compute else rng.uniform(0.95, 1.03))
        noise = float(np.exp(rng.uniform(np.log(0.005), np.log(0.08))))
        falls_on = int(2 + i // 10 % 4) if i % 10 == 0 else 0
        kernels.append(Kernel(f"k{i:04d}", flops, dram, {old: pct, new: kept}, noise, falls_on))
    return kernels


def roof_time(kernel: Kernel, roof: Roof) -> float:
    """``T_roof`` of the kernel's work on ``roof``."""
    compute = max(f / roof.peak_flop_per_s[p] for p, f in kernel.flops.items())
    return max(compute, kernel.dram / roof.bandwidth_byte_per_s["dram"])


def night(
    kernels: list[Kernel], card: str, index: int, rng: np.random.Generator, own_night: int = 0
) -> RunRecord:
    """Night ``index`` on ``card`` (``own_night``: its number on the new card, 1 first)."""
    roof = builtin_catalog().lookup(card).roof()
    wobble = float(np.exp(rng.normal(0, 0.015)))
    records = []
    for k in kernels:
        time_s = roof_time(k, roof) / (k.percent[card] / 100) * wobble
        time_s *= float(np.exp(rng.normal(0, k.noise)))
        time_s *= float(rng.uniform(1.05, 1.2)) if rng.random() < 0.01 else 1.0
        time_s *= FALL if k.falls_on and own_night >= k.falls_on else 1.0
        records.append(make_kernel(k.key, flops=k.flops, dram_bytes=k.dram, time_s=time_s))
    return make_run(
        repo=REPO,
        commit=f"n{index:039d}",
        kind=RunKind.NIGHTLY,
        timestamp=FIRST + timedelta(days=index),
        device=card,
        kernels=records,
    )


def roof_drops(outcome: object) -> dict[str, str]:
    """Kernel -> severity of its roof-drop finding in ``outcome``'s verdict."""
    found = outcome.verdict.findings  # type: ignore[attr-defined]
    return {f.kernel: f.severity.value for f in found if f.rule == "roof-drop" and f.kernel}


def as_pr(record: RunRecord, slowed: set[str], number: int) -> RunRecord:
    """``record`` an hour later as pull request ``number``, ``slowed`` kernels 1.25x slower."""
    kernels = tuple(
        k.model_copy(update={"duration_s": k.duration_s * FALL}) if k.key in slowed else k
        for k in record.kernels
    )
    return record.model_copy(
        update={
            "kernels": kernels,
            "kind": RunKind.PR,
            "branch": "feature",
            "pull_request": number,
            "commit": f"p{number:039d}",
            "timestamp": record.timestamp + timedelta(hours=1),
        }
    )


@dataclass(frozen=True)
class Swap:
    """One fleet's kernels, each new-card night's roof-drops, and each PR's slowed and drops."""

    kernels: list[Kernel]
    nightly: list[dict[str, str]]
    prs: list[tuple[set[str], dict[str, str]]]


def one_seed(n: int, seed: int, cards: tuple[str, str]) -> Swap:
    """The nightly and pull-request figures of one fleet."""
    rng = np.random.default_rng(seed)
    kernels = fleet(n, cards, rng)
    old, new = cards
    config = RoofguardConfig()
    with tempfile.TemporaryDirectory() as tmp:
        engine = open_store(f"sqlite:///{Path(tmp) / 'history.db'}")
        roof = builtin_catalog().lookup(old).roof()
        with session_scope(engine) as session:
            for i in range(OLD_NIGHTS - 1):
                run = night(kernels, old, i, rng)
                ingest_run(session=session, run=run, placements=place_run(run, roof), roof=roof)
        with session_scope(engine) as session:  # stores the levels the next check reads
            check_run(session=session, run=night(kernels, old, OLD_NIGHTS - 1, rng), config=config)
        nightly, prs = _new_card(engine, kernels, new, rng, config)
        engine.dispose()
    return Swap(kernels, nightly, prs)


def _new_card(
    engine: sa.Engine,
    kernels: list[Kernel],
    card: str,
    rng: np.random.Generator,
    config: RoofguardConfig,
) -> tuple[list[dict[str, str]], list[tuple[set[str], dict[str, str]]]]:
    """Each night's roof-drops on the new card, and those of a PR on each of its first four."""
    nightly, prs = [], []
    steady = [k.key for k in kernels if not k.falls_on]
    for own in range(1, NEW_NIGHTS + 1):
        record = night(kernels, card, OLD_NIGHTS + own - 1, rng, own_night=own)
        with session_scope(engine) as session:
            nightly.append(roof_drops(check_run(session=session, run=record, config=config)))
        if own <= 4:
            slowed = set(rng.choice(steady, size=len(kernels) // 10, replace=False).tolist())
            with session_scope(engine) as session:
                pr = check_run(session=session, run=as_pr(record, slowed, own), config=config)
            prs.append((slowed, roof_drops(pr)))
    return nightly, prs


def nightly_summary(kernels: list[Kernel], nightly: list[dict[str, str]]) -> dict[str, object]:
    """False fails and warnings of kernels that kept up; each fall's delay and nights failed."""
    falls = {k.key: k.falls_on for k in kernels if k.falls_on}
    false = Counter(s for found in nightly for key, s in found.items() if key not in falls)
    by_night = [
        sum(1 for key, s in found.items() if key not in falls and s == "warn") for found in nightly
    ]
    delays: Counter[str] = Counter()
    failures: Counter[int] = Counter()
    for key, on in falls.items():
        failed = [n for n, found in enumerate(nightly, 1) if found.get(key) == "fail"]
        after = [n - on for n in failed if n >= on]
        delays[str(after[0]) if after else "never"] += 1
        failures[len(after)] += 1
    return {
        "false_fail": false["fail"],
        "false_warn": false["warn"],
        "false_warn_by_night": by_night,
        "delays": dict(delays),
        "nights_failed_per_fall": dict(sorted(failures.items())),
    }


def pr_summary(kernels: list[Kernel], prs: list[tuple[set[str], dict[str, str]]]) -> list[str]:
    """Per PR on the new card's night 1-4: slowed kernels failed / warned, steady ones failed.

    Kernels falling on main's nights are neither: main's own fall is the nightly's to judge.
    """
    falls = {k.key for k in kernels if k.falls_on}
    lines = []
    for own, (slowed, found) in enumerate(prs, 1):
        caught = sum(1 for key in slowed if found.get(key) == "fail")
        warned = sum(1 for key in slowed if found.get(key) == "warn")
        steady = Counter(s for key, s in found.items() if key not in slowed | falls)
        lines.append(
            f"night {own}: {caught}/{len(slowed)} slowed fail, {warned} warn; "
            f"steady ones: {steady['fail']} fail, {steady['warn']} warn"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--cards", default="A100-SXM4-80GB,H100-SXM5")
    args = parser.parse_args()
    old, new = args.cards.split(",")
    for seed in range(1, args.seeds + 1):
        swap = one_seed(args.kernels, seed, (old, new))
        print(f"seed {seed}, {old} -> {new}, {args.kernels} kernels x {NEW_NIGHTS} nights:")
        print("  ", nightly_summary(swap.kernels, swap.nightly))
        for line in pr_summary(swap.kernels, swap.prs):
            print("   PR on", line)


if __name__ == "__main__":
    main()
