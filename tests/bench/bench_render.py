"""Rendering a 2,000-kernel verdict with findings, and its share of the check (a script).

The PR run and nightly history of ``bench_check_inprocess.py`` (2,000 kernels, ``--nights``
nights; the gate's stored levels), with every ``--slow-every``-th kernel 30-70 % slower so
the verdict has findings (250 kernels failing at the defaults: the comment is cut to fit
GitHub's size limit). Timed in CPU seconds of the process, best of ``--repeat``:

* ``evaluate``: the rules (``rules.engine.evaluate``), for the share;
* ``markdown``: ``render_verdict``, the PR comment the check and the service store;
* ``text``: ``render_verdict_text``, the terminal verdict (``--format text``);
* ``summary``: ``render_job_summary`` in 1 MiB, the job summary (every kernel; a tree
  without it shows ``-``);
* ``share``: markdown / (evaluate + markdown), the rendering's part of the in-process check.

Each render runs once first (the template compiled, as in a long-running service) and each
timed one starts with the escaping cache cleared, so one verdict's own strings are escaped.
Side by side in the same run, ``--reference-tree DIR`` runs the same in a fresh process on
the code in ``DIR`` (e.g. ``git archive e020e42 | tar -x -C DIR``); the rendered markdown
and text of both trees are compared byte for byte.

Usage::

    python tests/bench/bench_render.py [--kernels 2000] [--nights 90] [--repeat 5]
        [--reference-tree DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from treerun import run_on_tree

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
# ``--code DIR`` (the reference's child) puts that tree first, here and in the module below.
from bench_check_inprocess import check_context, history, pr_run  # noqa: E402


def slowed(run: Any, every: int) -> Any:
    """``run`` with every ``every``-th kernel 30-70 % slower (regressions to report)."""
    kernels = list(run.kernels)
    for i in range(0, len(kernels), every):
        slower = kernels[i].duration_s * (1.3 + (i % 5) * 0.1)
        kernels[i] = kernels[i].model_copy(update={"duration_s": slower})
    return run.model_copy(update={"kernels": tuple(kernels)})


def context(n: int, nights: int, every: int) -> Any:
    """The check's context for the slowed run, with the base branch's levels stored."""
    import numpy as np

    rng = np.random.default_rng(7)
    run = pr_run(n, rng)
    frame = history(run, nights, rng)
    return check_context(slowed(run, every), frame)


def best_cpu(repeat: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """The least CPU seconds of ``repeat`` calls of ``fn``, and its last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        times.append(time.process_time() - start)
    return min(times), result


def _cold(render: Callable[[Any], str]) -> Callable[[Any], str]:
    """``render`` with the escaping cache (absent before it) cleared first."""
    from service.render import escape

    def call(verdict: Any) -> str:
        for name in ("_escaped_short_text", "_escaped_text"):  # the cache's name by version
            cache_clear = getattr(getattr(escape, name, None), "cache_clear", None)
            if cache_clear is not None:
                cache_clear()
        return render(verdict)

    return call


def _renderers() -> list[tuple[str, Callable[[Any], str]]]:
    """What is timed: the comment, the terminal text, and the job summary where it exists."""
    from service.render import markdown
    from service.render.text import render_verdict_text

    found = [("markdown", markdown.render_verdict), ("text", render_verdict_text)]
    summary = getattr(markdown, "render_job_summary", None)
    if summary is not None:
        found.append(("summary", lambda v: summary(v, max_bytes=1024 * 1024)))
    return found


def _child(args: argparse.Namespace) -> None:
    from rules import engine

    ctx = context(args.one, args.nights, args.slow_every)
    evaluate, judged = best_cpu(args.repeat, lambda: engine.evaluate(dataclasses.replace(ctx)))
    verdict = judged.verdict
    figures = {"evaluate": evaluate, "findings": len(verdict.findings)}
    out = Path(args.out)
    for name, render in _renderers():
        render(verdict)  # the template compiled once, as in a running service
        cold = _cold(render)
        figures[name], text = best_cpu(args.repeat, lambda cold=cold: cold(verdict))
        (out / name).write_text(text, encoding="utf-8")
    figures["share"] = figures["markdown"] / (figures["evaluate"] + figures["markdown"])
    print(json.dumps(figures))


def _run(tree: Path, n: int, args: argparse.Namespace, out: Path) -> dict[str, float]:
    flags = ["--one", str(n), "--nights", str(args.nights), "--repeat", str(args.repeat)]
    return run_on_tree(
        HERE, tree, [*flags, "--slow-every", str(args.slow_every), "--out", str(out)]
    )


COLUMNS = ("evaluate", "markdown", "text", "summary")


def _cell(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", default="2000")
    parser.add_argument("--nights", type=int, default=90)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--slow-every", type=int, default=8)
    parser.add_argument("--reference-tree", type=Path)
    parser.add_argument("--code", type=Path)  # the tree measured (set for the child)
    parser.add_argument("--one", type=int)  # child: one size, figures as JSON
    parser.add_argument("--out")  # child: where the rendered verdicts go
    args = parser.parse_args()
    if args.one:
        _child(args)
        return
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print(
        "| code | kernels | findings | " + " (CPU s) | ".join(COLUMNS) + " (CPU s) | share | same |"
    )
    print("|---|--:|--:|" + "--:|" * len(COLUMNS) + "--:|---|")
    trees = [("this", HERE.parents[2])]
    if args.reference_tree:
        trees.append(("reference", args.reference_tree.resolve()))
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.kernels.split(",")):
            written = []
            for name, tree in trees:
                out = Path(tmp) / f"{name}-{n}"
                out.mkdir()
                figures = _run(tree, n, args, out)
                written.append([(out / kind).read_bytes() for kind in ("markdown", "text")])
                same = "identical" if written[0] == written[-1] else "DIFFERENT"
                cells = " | ".join(_cell(figures.get(c)) for c in COLUMNS)
                share = f"{100 * figures['share']:.0f}%"
                print(f"| {name} | {n:,} | {figures['findings']} | {cells} | {share} | {same} |")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
