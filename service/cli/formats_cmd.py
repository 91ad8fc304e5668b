"""``roofguard formats``: every input format, what it reads, and a command that produces it.

Every collector describes itself (class attributes ``name``, ``description`` and ``example``,
required by ``collectors.base.Collector``), so a plugin format is listed like a built-in one.
"""

from __future__ import annotations

from typing import Annotated

import typer

from collectors import all_collectors


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
        suffixes = ", ".join(collector.suffixes) or "any"
        lines = [f"{collector.name}  ({suffixes})", f"  reads:   {collector.description}"]
        if collector.example:
            lines.append(f"  example: {collector.example}")
        blocks.append("\n".join(lines))
    typer.echo("\n\n".join(blocks))
    typer.echo("\nThe format is detected from the content; the suffix is only a hint.")


def register(app: typer.Typer) -> None:
    """Add ``formats`` to ``app``."""
    app.command("formats")(formats_command)
