"""The rules' share of ``roofguard check`` in-process, by stage (a script, not a test).

A PR run of 2,000 and 20,000 kernels is judged against the nights of its kernels (a history
frame built directly, as the store hands it to the rules: the newest 14 runs as the baseline,
the newest 60 as the gate's, out of ``--nights``), with the base branch's levels stored (a PR
check reads them). Timed, best of
``--repeat``, each on a fresh context (what a context computes on first use is counted), in
CPU seconds of the process (the box is shared; ``evaluate wall`` is the wall time):

* ``gate``: the gate's pass (every rule's batches judged: the PR gate's ``decide``);
* ``rules``: every rule's ``check``;
* ``rows``: the verdict's kernel rows (baseline summaries, statuses);
* ``verdict``: groups, the run's baseline and the verdict itself;
* ``evaluate``: all of it (``rules.engine.evaluate``);
* ``markdown``: the verdict's PR comment (``service.render.markdown.render_verdict``);
* ``check``: ``evaluate`` and ``markdown``, the in-process check less its store (the file
  read and placed, the baseline read: ``bench_check.py``, ``bench_store.py``).

Side by side in the same run, two references:

* ``--reference-tree DIR``: the same stages on the code in ``DIR`` (a checkout of an older
  commit, e.g. ``git archive 354e004 | tar -x -C DIR``), in a fresh process right after;
* ``groupby median``: a bare pandas ``groupby("kernel_key").median()`` of percent of roof over
  the same history, the floor any per-kernel baseline pays.

The verdicts of both trees are written as JSON and compared byte for byte.

Usage::

    python tests/bench/bench_check_inprocess.py [--kernels 2000,20000] [--nights 90]
        [--repeat 3] [--reference-tree DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from treerun import run_on_tree

# The tree whose ``rules`` are measured: ``--code DIR`` (the reference's child), else this one.
sys.path.insert(
    0,
    sys.argv[sys.argv.index("--code") + 1]
    if "--code" in sys.argv
    else str(Path(__file__).parents[2]),
)

from collectors.schema import DeviceInfo, KernelRecord, ProfilerInfo, RunKind, RunRecord
from rules import engine
from rules.context import RuleContext
from rules.frames import HISTORY_COLUMNS
from rules.hardware import builtin_catalog
from rules.levelstore import StoredLevels
from rules.placement import place_run
from service.render.markdown import render_verdict

HERE = Path(__file__).resolve()
#: The runs the check hands the rules (``[baseline]``'s defaults): the baseline's window and the
#: gate's longer one, cut from the newest nights as ``service.pipeline.check`` cuts them.
WINDOW, GATE_WINDOW = 14, 60
ROOF = builtin_catalog().lookup("H100-SXM5").roof()
START = datetime(2025, 1, 1, tzinfo=UTC)


def pr_run(n: int, rng: np.random.Generator) -> RunRecord:
    """A PR run of ``n`` memory- and compute-bound kernels (as ``bench_check.py``)."""
    jitter = rng.lognormal(0, 0.02, n)
    kernels = []
    for i in range(n):
        nbytes = 1e6 * (1 + i % 97)
        flops = nbytes * (0.5 if i % 3 else 400.0)
        roof_t = max(nbytes / 3.35e12, flops / 989.4e12)
        kernels.append(
            KernelRecord(
                name=f"void kernel_{i}<cutlass::bfloat16_t, {64 + i % 7 * 32}>(Params)",
                key=f"kernel_{i}<cutlass::bfloat16_t, {64 + i % 7 * 32}>",
                duration_s=roof_t / 0.8 * float(jitter[i]),
                flops={"tensor_bf16": flops},
                bytes={"dram": nbytes},
            )
        )
    return RunRecord(
        repo="bench/llm",
        commit="f" * 40,
        branch="pr",
        kind=RunKind.PR,
        pull_request=1,
        timestamp=START + timedelta(days=400),
        device=DeviceInfo(name="NVIDIA H100 80GB HBM3"),
        profiler=ProfilerInfo(tool="ncu"),
        kernels=tuple(kernels),
    )


def history(run: RunRecord, nights: int, rng: np.random.Generator) -> pd.DataFrame:
    """``nights`` nightly runs of ``run``'s kernels, times jittered by ~2 %, as the store reads."""
    placed = place_run(run, ROOF)
    keys = [k.key for k in run.kernels]
    n = len(keys)
    t_roof = np.array([placed[k].t_roof_s for k in keys])
    times = (t_roof / 0.8)[None, :] * rng.lognormal(0, 0.02, (nights, n))
    flops = np.array([sum(k.flops.values()) for k in run.kernels])
    nbytes = np.array([k.bytes["dram"] for k in run.kernels])
    night = np.repeat(np.arange(nights), n)
    frame = pd.DataFrame(
        {
            "run_id": night + 1,
            "commit": [f"{j:040x}" for j in night],
            "timestamp": [START + timedelta(days=int(j)) for j in night],
            "kind": "nightly",
            "kernel_key": np.tile(keys, nights),
            "kernel_name": np.tile([k.name for k in run.kernels], nights),
            "device": ROOF.device,
            "roof_source": ROOF.source,
            "percent_of_roof": (100 * t_roof[None, :] / times).ravel(),
            "regime": np.tile([str(placed[k].regime) for k in keys], nights),
            "binding": np.tile([placed[k].binding for k in keys], nights),
            "time_s": times.ravel(),
            "total_flops": np.tile(flops, nights),
            "peak_flop_time_s": np.nan,
            "bytes_dram": np.tile(nbytes, nights),
            "bytes_l2": np.nan,
            "bytes_l1": np.nan,
            "driver": None,
            "clock_control": None,
            "cache_control": None,
            "trusted": True,
        }
    )
    return frame[list(HISTORY_COLUMNS)]


def stages(ctx: RuleContext) -> tuple[dict[str, float], Any]:
    """Wall seconds of each stage of ``evaluate`` on ``ctx``, and the verdict."""
    # As evaluate runs them: without the collector's pauses where it pauses it.
    with getattr(engine, "paused_collection", contextlib.nullcontext)():
        return _stages(ctx)


def _stages(ctx: RuleContext) -> tuple[dict[str, float], Any]:
    summarise = getattr(engine, "kernel_baselines", None)  # absent before the block rows
    times: dict[str, float] = {}
    wall, start = time.perf_counter(), time.process_time()
    first = start

    def lap(name: str) -> None:
        nonlocal start
        now = time.process_time()
        times[name] = now - start
        start = now

    rules, levels = engine.runnable_rules(ctx), engine._levels(ctx.stored_levels)
    gate, crashed = engine.gate_pass(ctx, rules, levels)
    lap("gate")
    findings = engine._findings(ctx, rules, gate, crashed)
    lap("rules")
    done = summarise(ctx, gate) if summarise else None
    extra = (done,) if summarise else ()
    kernels = _rows(ctx, findings, gate, extra)
    kernels += engine.missing_verdicts(ctx, findings)
    lap("rows")
    groups = tuple(engine.group_verdict(ctx, f, gate) for f in ctx.groups.values())
    # Trees since the short-baseline headline pass the runs the gate needs; older ones do not.
    needed = (engine.min_runs(rules),) if hasattr(engine, "min_runs") else ()
    verdict = engine.across_devices(ctx, engine._verdict(ctx, findings, kernels, groups, *needed))
    lap("verdict")
    times["evaluate"] = time.process_time() - first
    times["evaluate wall"] = time.perf_counter() - wall
    render_verdict(verdict)
    lap("markdown")
    times["check"] = times["evaluate"] + times["markdown"]
    return times, verdict


def _rows(ctx: RuleContext, findings: Any, gate: Any, extra: tuple[Any, ...]) -> list[Any]:
    """The kernel rows as ``evaluate`` builds them in the tree measured."""
    if hasattr(engine, "kernel_verdicts"):  # all rows in one call (absent before the columns)
        rows: list[Any] = engine.kernel_verdicts(ctx, findings, gate, *extra)
        return rows
    by_kernel = getattr(engine, "findings_by_kernel", None)  # absent before the block rows
    of_kernel = by_kernel(findings) if by_kernel else {}
    return [
        engine.kernel_verdict(
            ctx, key, of_kernel.get(key, ()) if by_kernel else findings, gate, *extra
        )
        for key in ctx.kernels
    ]


def best(repeat: int, fn: Callable[[], dict[str, float]]) -> dict[str, float]:
    runs = [fn() for _ in range(repeat)]
    return {name: min(r[name] for r in runs) for name in runs[0]}


def check_context(run: RunRecord, frame: pd.DataFrame) -> RuleContext:
    """The check's context for ``run`` against ``frame``, the base branch's levels stored.

    The windows are cut from the newest nights as the check cuts them; the levels are those a
    first evaluation stores, as the nightly check leaves them for a PR check to read.
    """
    newest = int(frame["run_id"].max())
    base = RuleContext(
        run=run,
        roof=ROOF,
        history=frame[frame["run_id"] > newest - WINDOW],
        gate_history=frame[frame["run_id"] > newest - GATE_WINDOW],
        placed=place_run(run, ROOF),
    )
    stored = engine.evaluate(dataclasses.replace(base, stored_levels=StoredLevels()))
    return dataclasses.replace(base, stored_levels=StoredLevels(known=stored.levels_to_store))


def measure(n: int, nights: int, repeat: int, out: Path) -> dict[str, float]:
    """The stages for ``n`` kernels; the verdict written to ``out``."""
    rng = np.random.default_rng(7)
    run = pr_run(n, rng)
    frame = history(run, nights, rng)
    ctx = check_context(run, frame)
    verdict = None

    def once() -> dict[str, float]:
        nonlocal verdict
        times, verdict = stages(dataclasses.replace(ctx))
        return times

    figures = best(repeat, once)
    out.write_text(verdict.model_dump_json() if verdict else "")
    figures["groupby median"] = best(repeat, lambda: _groupby(frame))["t"]
    return figures


def _groupby(frame: pd.DataFrame) -> dict[str, float]:
    start = time.process_time()
    frame.groupby("kernel_key", sort=False)["percent_of_roof"].median()
    return {"t": time.process_time() - start}


def _child(args: argparse.Namespace) -> None:
    figures = measure(args.one, args.nights, args.repeat, Path(args.verdict))
    print(json.dumps(figures))


def _run(tree: Path, n: int, args: argparse.Namespace, verdict: Path) -> dict[str, float]:
    flags = ["--one", str(n), "--nights", str(args.nights), "--repeat", str(args.repeat)]
    return run_on_tree(HERE, tree, [*flags, "--verdict", str(verdict)])


COLUMNS = (
    "gate",
    "rules",
    "rows",
    "verdict",
    "evaluate",
    "evaluate wall",
    "markdown",
    "check",
    "groupby median",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", default="2000,20000")
    parser.add_argument("--nights", type=int, default=90)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reference-tree", type=Path)
    parser.add_argument("--code", type=Path)  # the tree measured (set for the child)
    parser.add_argument("--one", type=int)  # child: one size, figures as JSON
    parser.add_argument("--verdict")
    args = parser.parse_args()
    if args.one:
        _child(args)
        return
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("| code | kernels | measurements | " + " (s) | ".join(COLUMNS) + " (s) | verdict |")
    print("|---|--:|--:|" + "--:|" * len(COLUMNS) + "---|")
    trees = [("this", HERE.parents[2])]
    if args.reference_tree:
        trees.append(("reference", args.reference_tree.resolve()))
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.kernels.split(",")):
            written = []
            for name, tree in trees:
                verdict = Path(tmp) / f"{name}-{n}.json"
                figures = _run(tree, n, args, verdict)
                written.append(verdict.read_bytes())
                same = "identical" if written[0] == written[-1] else "DIFFERENT"
                cells = " | ".join(f"{figures[c]:.3f}" for c in COLUMNS)
                print(f"| {name} | {n:,} | {n * args.nights:,} | {cells} | {same} |")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
