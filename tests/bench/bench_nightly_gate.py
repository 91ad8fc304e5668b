"""The nightly gate's replay and judgement, batched over kernels, beside the tree before.

A nightly run is judged by ``judge_latest_replayed`` (each kernel's newest night, after the
gate's replay of its last nights) and leaves the next PR its levels (``current_levels`` with
those replays). Each tree (this one, and ``--before``, a checkout of the tree before, e.g.
``git worktree add /tmp/before e23b7f5``) runs in its own process on the same seeded
histories, the trees alternating ``--rounds`` times so the machine's load moves both alike.
Each process reports the best of ``--repeat`` (CPU and wall seconds) of:

* ``replay``: the gate's replay of every kernel without its newest night (``replayed_many``
  here; before, ``runs.replayed`` one kernel at a time), the change-point starts given;
* ``nightly``: ``judge_latest_replayed`` and ``current_levels`` with its replays, the nightly
  judgement and the levels kept for the next PR,

and a digest of every judgement and level (``repr``, each float in full): the two trees
must print the same.

Run: ``python tests/bench/bench_nightly_gate.py --before /tmp/before [--kernels 2000,20000]
[--nights 60] [--repeat 3] [--rounds 2]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()


def histories(kernels: int, nights: int) -> list[np.ndarray]:
    """t(5) noise of 0.5-5%; a tenth with a 5-30% step, a tenth with a 1-3 night burst."""
    rng = np.random.default_rng(29)
    cv = np.exp(rng.uniform(np.log(0.005), np.log(0.05), kernels))
    rows = [60 * (1 + c * rng.standard_t(5, nights)) for c in cv]
    for i, row in enumerate(rows):
        at = int(rng.integers(nights // 3, nights))
        if i % 10 == 3:
            row[at:] *= rng.choice([0.7, 0.85, 0.95, 1.05, 1.2])
        elif i % 10 == 7:
            row[at : at + int(rng.integers(1, 4))] *= rng.choice([0.75, 1.3])
    return rows


def best(repeat: int, work: Callable[[], object]) -> tuple[float, float, object]:
    """Best CPU and wall seconds of ``repeat`` calls, and the last result."""
    cpu, wall, result = np.inf, np.inf, None
    for _ in range(repeat):
        started, clock = time.process_time(), time.perf_counter()
        result = work()
        cpu = min(cpu, time.process_time() - started)
        wall = min(wall, time.perf_counter() - clock)
    return cpu, wall, result


def _replay_all(rows: list[np.ndarray], starts: list[int], opts: object) -> list[object]:
    try:
        from rules.stats.batchreplay import replayed_many
    except ImportError:  # the tree before: one kernel at a time
        from rules.stats.runs import replayed

        return [replayed(r, opts, s) for r, s in zip(rows, starts, strict=True)]
    return list(replayed_many(rows, opts, starts))


def measure(kernels: int, nights: int, repeat: int) -> dict[str, object]:
    """The figures of the tree on ``sys.path`` (a child process)."""
    from rules.stats import GateOptions, current_levels, judge_latest_replayed
    from rules.stats.levels import segment_starts

    series = histories(kernels, nights)
    opts = GateOptions(family_size=kernels)
    judge_latest_replayed(series[:50], options=opts)  # the thresholds, once
    older = [s[:-1] for s in series]
    starts, _ = segment_starts([s[:-1] for s in older], opts.confirm_runs)
    replay_cpu, replay_wall, replays = best(repeat, lambda: _replay_all(older, starts, opts))

    def nightly() -> tuple[object, object]:
        judged, kept = judge_latest_replayed(series, options=opts)
        return judged, current_levels(series, options=opts, replays=kept)

    cpu, wall, (judged, levels) = best(repeat, nightly)
    digest = hashlib.sha256(repr((judged, levels, replays)).encode()).hexdigest()[:12]
    figures = {"replay": replay_cpu, "replay wall": replay_wall, "nightly": cpu}
    return {**figures, "nightly wall": wall, "digest": digest}


def _run(tree: Path, kernels: int, args: argparse.Namespace) -> dict[str, object]:
    command = [sys.executable, str(HERE), "--one", str(kernels), "--nights", str(args.nights)]
    command += ["--repeat", str(args.repeat)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    figures: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


COLUMNS = ("replay", "replay wall", "nightly", "nightly wall")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="a checkout of the tree before")
    parser.add_argument("--kernels", default="2000,20000")
    parser.add_argument("--nights", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--one", type=int)  # child: one size, figures as JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.nights, args.repeat)))
        return
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("| tree | kernels | " + " (s) | ".join(COLUMNS) + " (s) | digest |")
    print("|---|--:|" + "--:|" * len(COLUMNS) + "---|")
    trees = [("this", HERE.parents[2])]
    if args.before:
        trees.append(("before", args.before.resolve()))
    for kernels in (int(k) for k in args.kernels.split(",")):
        for _ in range(args.rounds):
            for name, tree in trees:
                figures = _run(tree, kernels, args)
                cells = " | ".join(f"{float(figures[c]):.2f}" for c in COLUMNS)
                print(f"| {name} | {kernels:,} | {cells} | {figures['digest']} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
