"""Issue 16's reproduction through the real command line (a script, not a test).

The issue's new user: 30 nightly runs of 2,000 kernels with GPU-like noise, then 20 pull
requests that change nothing, and all 20 failed. Here the same, driven exactly as the GitHub
Action drives ``roofguard`` (``service.cli.run`` in-process, with the Action's arguments,
roofguard JSON reports on disk, a real store):

* every night: ``roofguard check NIGHT.json --kind nightly --branch main`` (the nightly job,
  which also stores the levels the next PR is judged against);
* every PR: ``roofguard check PR.json --pr N --suspects suspects.txt``, then the suspects
  measured again (fresh draws, only those kernels, as ``ncu -k regex:`` would) and
  ``roofguard check PR.json ... --rerun RERUN.json``; exit code 1 is a failed PR.

The noise is ``bench_fleet``'s (per-kernel CV 0.5-5%, log-uniform; Student t with 5 degrees
of freedom; 0.2% of measurements 5-30% slower, a clock dip). Besides the stable PRs:

* **slowed**: 5 kernels with noise <= 2% really 10% slower (both measurements);
* **one-night dip**: 5 kernels 30% slower in the PR's first measurement only.

Side by side in the same run, the reference: each PR checked without the re-measure step
(``check PR.json`` alone: suspects warn, only 25% at z >= 10 fails at once).

Run: ``python tests/bench/bench_pr_cli.py [--prs 20] [--kernels 2000] [--db URL]
 [--markdown FILE]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fleet import NIGHTS, Fleet, make_fleet, measure
from tables import publish

from collectors.schema import DeviceInfo, KernelRecord, ProfilerInfo, RunKind, RunRecord
from service.cli import run

REPO = "bench/fleet"
DEVICE = "H100-SXM5"
HBM = 3.35e12  # H100 SXM5 datasheet bandwidth, byte/s: every kernel here is memory-bound
PLANTED = 5
#: The first night, far enough back that the history and the PRs are in the past.
START = datetime.now(UTC) - timedelta(days=120)


def kernel_name(i: int) -> str:
    return f"void fleet_kernel_{i:04d}<cutlass::bfloat16_t>(Params)"


def report(
    fleet: Fleet, percent: np.ndarray, only: Sequence[int] | None = None
) -> tuple[KernelRecord, ...]:
    """Kernel records whose time puts kernel ``i`` at ``percent[i]`` of its HBM roof."""
    kernels = []
    for i in range(fleet.level.size) if only is None else only:
        nbytes = 1e6 * (1 + i % 97)
        kernels.append(
            KernelRecord(
                name=kernel_name(i),
                key=f"fleet_kernel_{i:04d}",
                duration_s=nbytes / HBM * 100.0 / float(percent[i]),
                flops={"fp32": nbytes * 0.25},
                bytes={"dram": nbytes},
            )
        )
    return tuple(kernels)


def write_run(
    path: Path, kernels: tuple[KernelRecord, ...], commit: str, day: int, kind: RunKind
) -> Path:
    record = RunRecord(
        repo=REPO,
        commit=commit,
        branch="main" if kind == RunKind.NIGHTLY else "feature",
        kind=kind,
        timestamp=START + timedelta(days=day),
        device=DeviceInfo(name="NVIDIA H100 80GB HBM3"),
        profiler=ProfilerInfo(tool="ncu"),
        kernels=kernels,
    )
    path.write_text(record.model_dump_json(), encoding="utf-8")
    return path


def quietly(args: list[str]) -> int:
    """``roofguard ARGS`` in-process, its one-line reports ("verdict written to ...") dropped."""
    with contextlib.redirect_stderr(io.StringIO()):
        return run(args)


def check_args(db: str, path: Path, commit: str, verdict: Path, *extra: str) -> list[str]:
    """``roofguard check`` as the Action's check step builds it."""
    return [
        "check",
        str(path),
        "--db",
        db,
        "--repo",
        REPO,
        "--commit",
        commit,
        "--format",
        "json",
        "--output",
        str(verdict),
        "--device",
        DEVICE,
        *extra,
    ]


def grow_history(db: str, work: Path, fleet: Fleet) -> float:
    """The nightly job on every night of the fleet's history; seconds per night."""
    start = time.perf_counter()
    for night in range(fleet.history.shape[1]):
        path = write_run(
            work / "night.json",
            report(fleet, fleet.history[:, night]),
            f"{night:040x}",
            night,
            RunKind.NIGHTLY,
        )
        nightly = ("--kind", "nightly", "--branch", "main")
        code = quietly(check_args(db, path, f"{night:040x}", work / "nightly.json", *nightly))
        if code not in (0, 1):
            raise SystemExit(f"nightly check of night {night} exited {code}")
    return (time.perf_counter() - start) / fleet.history.shape[1]


@dataclass
class Tally:
    """What the PRs of one kind did, with and without the re-measure step."""

    prs: int = 0
    failed: int = 0
    failed_without: int = 0
    suspects: list[int] = field(default_factory=list)
    planted_found: int = 0
    planted: int = 0
    false_regressed: int = 0
    improved: int = 0  # kernels the verdict calls improved (no PR here made any faster)
    seconds: list[float] = field(default_factory=list)


def with_status(verdict: Path, status: str) -> set[str]:
    kernels = json.loads(verdict.read_text(encoding="utf-8"))["kernels"]
    return {k["name"] for k in kernels if k.get("status") == status}


def regressed(verdict: Path) -> set[str]:
    return with_status(verdict, "regressed")


def pr_args(db: str, work: Path, fleet: Fleet, values: np.ndarray, tag: str, out: str) -> list[str]:
    """The PR's report written with ``values``, and its ``roofguard check`` arguments."""
    day = fleet.history.shape[1]
    pr = write_run(work / "pr.json", report(fleet, values), tag, day, RunKind.PR)
    verdict = work / out
    return check_args(db, pr, tag, verdict, "--pr", "1", "--kind", "pr", "--branch", "feature")


def judge_pr(
    db: str, work: Path, fleet: Fleet, first: np.ndarray, again: np.ndarray, tag: str
) -> tuple[int, int, set[str], float]:
    """One PR through the Action's loop; (exit code, suspects, regressed names, seconds)."""
    args, listed = pr_args(db, work, fleet, first, tag, "verdict.json"), work / "suspects.txt"
    start = time.perf_counter()
    code = quietly([*args, "--suspects", str(listed)])
    names = listed.read_text(encoding="utf-8").splitlines()  # one name per line, as reported
    if names:
        index = {kernel_name(i): i for i in range(fleet.level.size)}
        again_only = report(fleet, again, [index[n] for n in names])
        day = fleet.history.shape[1]
        rerun = write_run(work / "rerun.json", again_only, tag, day, RunKind.PR)
        code = quietly([*args, "--suspects", str(listed), "--rerun", str(rerun)])
    elapsed = time.perf_counter() - start
    if code not in (0, 1):
        raise SystemExit(f"check of {tag} exited {code}")
    return code, len(names), regressed(work / "verdict.json"), elapsed


def without_remeasure(db: str, work: Path, fleet: Fleet, first: np.ndarray, tag: str) -> int:
    """The same PR checked once, no re-measure step (the reference); its exit code."""
    return quietly(pr_args(db, work, fleet, first, tag, "alone.json"))


def one_pr(
    db: str, work: Path, fleet: Fleet, rng: np.random.Generator, kind: str, n: int, into: Tally
) -> None:
    first, again = measure(rng, fleet, ()), measure(rng, fleet, ())
    planted = np.zeros(fleet.level.size, dtype=bool)
    if kind != "stable":
        quiet = np.flatnonzero(fleet.cv <= 0.02) if kind == "slowed" else np.arange(planted.size)
        planted[rng.choice(quiet, PLANTED, replace=False)] = True
        first[planted] *= 0.9 if kind == "slowed" else 0.7
        again[planted] *= 0.9 if kind == "slowed" else 1.0
    code, suspects, names, seconds = judge_pr(db, work, fleet, first, again, f"{kind}{n:034x}")
    expected = {kernel_name(i) for i in np.flatnonzero(planted)} if kind == "slowed" else set()
    into.prs += 1
    into.failed += code == 1
    into.suspects.append(suspects)
    into.seconds.append(seconds)
    into.planted += len(expected)
    into.planted_found += len(names & expected)
    into.false_regressed += len(names - expected)
    into.improved += len(with_status(work / "verdict.json", "improved"))
    into.failed_without += without_remeasure(db, work, fleet, first, f"a{kind}{n:033x}") == 1


KINDS = {
    "stable": "stable (nothing changed)",
    "slowed": f"slowed ({PLANTED} kernels with noise <= 2% 10% slower)",
    "dip": f"one-night dip ({PLANTED} kernels 30% slower once)",
}


def table(tallies: dict[str, Tally], kernels: int, nights: int, per_night: float) -> str:
    lines = [
        f"{kernels:,} kernels x {nights} nights through `roofguard check` (nightly job: "
        f"{per_night:.2f} s a night), then each PR through the Action's loop:",
        "",
        "| PRs | failed, with the re-measure step | suspects per PR (most) | planted found "
        "| kernels regressed that were not planted | kernels called improved (none was) "
        "| failed, one measurement only (reference) | seconds per PR (both checks) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind, t in tallies.items():
        found = f"{t.planted_found} / {t.planted}" if t.planted else "-"
        lines.append(
            f"| {t.prs} {KINDS[kind]} | {t.failed} / {t.prs} | {np.mean(t.suspects):.1f} "
            f"({max(t.suspects)}) | {found} | {t.false_regressed} | {t.improved} "
            f"| {t.failed_without} / "
            f"{t.prs} | {np.median(t.seconds):.2f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=20, help="stable PRs (slowed, dip: a quarter)")
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--db", help="a store URL (default: a fresh SQLite file)")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    fleet = make_fleet(rng, args.kernels)

    def measure_all() -> str:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            db = args.db or f"sqlite:///{work / 'history.db'}"
            per_night = grow_history(db, work, fleet)
            counts = {
                "stable": args.prs,
                "slowed": max(1, args.prs // 4),
                "dip": max(1, args.prs // 4),
            }
            tallies = {kind: Tally() for kind in counts}
            for kind, count in counts.items():
                for n in range(count):
                    one_pr(db, work, fleet, rng, kind, n, tallies[kind])
            return table(tallies, args.kernels, NIGHTS, per_night)

    publish(measure_all, args.markdown)


if __name__ == "__main__":
    main()
