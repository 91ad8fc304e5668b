"""The roofline chart of a large run as an SVG, beside a bare matplotlib scatter (a script).

``--kernels`` GEMM-like kernels under an H100's roofs, each moved a few percent from its
baseline (as noise moves every kernel of a nightly run), one of them flagged, drawn by
``roofline_chart`` and saved by ``figure_bytes``: the chart ``check --charts``, ``plot run``
and the run and compare pages draw. Side by side in the same process, the reference is a
bare matplotlib figure of the same points (one log-log scatter, no roofs, names or arrows)
saved as SVG. Wall seconds (best of ``--repeat``) and the SVG's size.

Usage::

    python tests/bench/bench_chart.py [--kernels 200 2000] [--repeat 3] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from matplotlib.figure import Figure
from tables import publish

from rules.roofline import Roof
from service.render.chart_bytes import figure_bytes
from service.render.charts import KernelPoint, roofline_chart

ROOF = Roof("H100-SXM5", "datasheet", {"tensor_bf16": 989e12}, {"dram": 3.35e12})


def fleet(count: int) -> list[KernelPoint]:
    """``count`` kernels under the roof, each 0-4 % off its baseline; the eighth flagged."""
    rng = random.Random(5)
    points = []
    for i in range(count):
        intensity = 10 ** rng.uniform(0.5, 3)
        achieved = min(3.35e12 * intensity, 989e12) * rng.uniform(0.3, 0.9)
        baseline = (intensity, achieved * rng.uniform(0.96, 1.04))
        share = rng.uniform(1e-4, 1e-3)
        points.append(
            KernelPoint(f"k{i}", intensity, achieved, share, "tensor_bf16", baseline, None, None)
        )
    if count > 7:
        points[7] = KernelPoint(**{**points[7].__dict__, "flagged": True})
    return points


def bare(points: list[KernelPoint]) -> bytes:
    """The reference: the same points on a log-log scatter, saved as SVG."""
    fig = Figure(figsize=(8, 5.5))
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.scatter([p.intensity for p in points], [p.achieved_flop_per_s for p in points], s=20)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg")
    return buffer.getvalue()


def best(make: Callable[[], bytes], repeat: int) -> tuple[float, int]:
    """(best wall seconds, bytes) of ``make()`` over ``repeat`` runs."""
    times, size = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        size = len(make())
        times.append(time.perf_counter() - started)
    return min(times), size


def table(args: argparse.Namespace) -> str:
    rows = [
        "| kernels | roofguard chart (s) | SVG | bare scatter (s) | SVG |",
        "|--:|--:|--:|--:|--:|",
    ]
    for count in args.kernels:
        points = fleet(count)
        chart = best(lambda: figure_bytes(roofline_chart(ROOF, points)), args.repeat)  # noqa: B023
        reference = best(lambda: bare(points), args.repeat)  # noqa: B023
        rows.append(
            f"| {count:,} | {chart[0]:.2f} | {chart[1] / 1e6:.2f} MB "
            f"| {reference[0]:.2f} | {reference[1] / 1e6:.2f} MB |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    publish(lambda: table(parser.parse_args()), parser.parse_args().markdown)


if __name__ == "__main__":
    main()
