"""``roofguard formats``: every input format, what it reads, and a command that produces it.

Collectors may describe themselves (class attributes ``description`` and ``example``); for
those that do not yet, ``KNOWN`` below holds the text, keyed by collector name. A plugin
collector without either is still listed, with its name and file suffixes.
"""

from __future__ import annotations

from typing import Annotated

import typer

from collectors.base import Collector
from collectors.registry import all_collectors

#: name -> (what it reads, an example command that produces it).
KNOWN: dict[str, tuple[str, str]] = {
    "ncu-rep": (
        "Nsight Compute binary report (needs the [ncu] extra: the ncu_report module)",
        "ncu --set full -o report ./my_app   # writes report.ncu-rep",
    ),
    "ncu-csv-raw": (
        "Nsight Compute raw page as CSV: one row per launch, one column per metric",
        "ncu --csv --page raw --set full ./my_app > report.csv",
    ),
    "ncu-csv-details": (
        "Nsight Compute details page as CSV (ncu --csv's default page): one row per metric",
        "ncu --csv --set full ./my_app > report.csv",
    ),
    "ncu-text": (
        "Nsight Compute's printed text report (the default console output)",
        "ncu --set full ./my_app > report.txt",
    ),
    "nvbench-json": (
        "NVBench JSON results (per-state times, element and byte counts)",
        "./my_nvbench_bench --json results.json",
    ),
    "nvbench-csv": (
        "NVBench CSV results",
        "./my_nvbench_bench --csv results.csv",
    ),
    "nvbench-md": (
        "NVBench markdown tables (its default console output)",
        "./my_nvbench_bench --md results.md",
    ),
    "gbench-json": (
        "Google Benchmark JSON (times, user counters, params from the names)",
        "./my_bench --benchmark_format=json --benchmark_out=results.json",
    ),
    "pytest-benchmark-json": (
        "pytest-benchmark JSON (stats per test, extra_info as counters)",
        "pytest --benchmark-json=results.json",
    ),
    "kineto-trace": (
        "PyTorch profiler (Kineto) Chrome trace: GPU kernel events and device properties",
        "torch.profiler.profile(...).export_chrome_trace('trace.json')",
    ),
    "roofguard-json": (
        "roofguard's own RunRecord JSON (schema: `roofguard schema`)",
        "roofguard inspect --json report.ncu-rep > run.json",
    ),
    "roofguard-csv": (
        "roofguard's own CSV: one row per kernel with time, FLOPs and bytes",
        "see collectors/README.md for the columns; any script can write it",
    ),
}


def describe(collector: type[Collector]) -> tuple[str, str]:
    """What ``collector`` reads and an example producing it (its own attributes first)."""
    known = KNOWN.get(collector.name, ("", ""))
    description = getattr(collector, "description", None) or known[0]
    example = getattr(collector, "example", None) or known[1]
    if not description:
        doc = (collector.__doc__ or "").strip().splitlines()
        description = doc[0] if doc else "(no description)"
    return description, example


def formats_command(
    names: Annotated[bool, typer.Option("--names", help="Only the format names.")] = False,
) -> None:
    """List every input format: its name, what it reads, and a command that produces it."""
    collectors = sorted(all_collectors(), key=lambda c: c.name)
    if names:
        typer.echo("\n".join(c.name for c in collectors))
        return
    blocks = []
    for collector in collectors:
        description, example = describe(collector)
        suffixes = ", ".join(collector.suffixes) or "any"
        lines = [f"{collector.name}  ({suffixes})", f"  reads:   {description}"]
        if example:
            lines.append(f"  example: {example}")
        blocks.append("\n".join(lines))
    typer.echo("\n\n".join(blocks))
    typer.echo("\nThe format is detected from the content; the suffix is only a hint.")


def register(app: typer.Typer) -> None:
    """Add ``formats`` to ``app``."""
    app.command("formats")(formats_command)
