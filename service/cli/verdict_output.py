"""Where a verdict goes: a rich table on a terminal, markdown or JSON elsewhere.

``--format auto`` (the default) prints the terminal view when the verdict goes to a terminal
and markdown when it goes to a file or a pipe (``roofguard check ... > verdict.md``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import typer

from rules import Verdict, shown_conclusion
from service.errors import BadInput

FORMATS = ("auto", "text", "markdown", "json")
FORMAT_HELP = "auto (text on a terminal, else markdown), text, markdown or json."


def resolve_format(fmt: str, output: Path | None) -> str:
    """The concrete format of ``fmt`` for this destination.

    Raises:
        typer.BadParameter: ``fmt`` is not one of ``FORMATS``.
    """
    if fmt not in FORMATS:
        raise typer.BadParameter(f"must be one of {', '.join(FORMATS)}", param_hint="--format")
    if fmt != "auto":
        return fmt
    return "text" if output is None and sys.stdout.isatty() else "markdown"


def refuse_unwritable_outputs(
    output: Path | None, suspects: Path | None, suspects_regex: Path | None
) -> None:
    """Refuse what ``check`` and ``upload`` would write where they cannot, before storing.

    Found when the verdict was written, the run was stored and judged already, and the
    error was an unexpected FileNotFoundError.

    Raises:
        BadInput: A folder given for a file, or a file in a folder that does not exist.
    """
    paths = {"--output": output, "--suspects": suspects, "--suspects-regex": suspects_regex}
    for flag, path in paths.items():
        if path is None:
            continue
        if path.is_dir():
            raise BadInput(f"{flag} {path}: is a folder; give a file name")
        if not path.parent.is_dir():
            raise BadInput(f"{flag} {path}: no folder {path.parent} to write it in")


def verdict_text(verdict: Verdict, markdown: str, fmt: str) -> str:
    """The verdict in a concrete format (``text`` without colours)."""
    if fmt == "json":
        return verdict.model_dump_json(indent=2)
    if fmt == "markdown":
        return markdown
    from service.render.text import render_verdict_text  # rich tables, on demand

    return render_verdict_text(verdict).rstrip("\n")


def write_verdict(
    verdict: Verdict, markdown: Callable[[], str], fmt: str, output: Path | None
) -> None:
    """Write the verdict to ``output`` (or stdout): colours only on a terminal.

    ``markdown`` renders the verdict's markdown: called only for the markdown format.
    """
    concrete = resolve_format(fmt, output)
    if concrete == "text" and output is None and sys.stdout.isatty():
        from rich.console import Console  # on demand: a file or a pipe needs none of rich

        from service.render.text import print_verdict

        print_verdict(verdict, Console(highlight=False))
        return
    text = verdict_text(verdict, markdown() if concrete == "markdown" else "", concrete)
    if output is None:
        typer.echo(text)
    else:
        output.write_text(text + "\n", encoding="utf-8")
        shown = shown_conclusion(verdict.conclusion, verdict.judged_nothing)
        typer.echo(f"verdict ({shown}) written to {output}", err=True)
