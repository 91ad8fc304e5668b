"""The PR gate's re-measure step on the command line: ``--suspects`` and ``--rerun``.

Shared by ``roofguard check`` and ``roofguard upload`` (the service judges, the command writes
what it answered), so the Action drives both the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rules.verdict import Verdict

SuspectsOpt = Annotated[
    Path | None,
    typer.Option(
        help="Write the suspects here, one kernel name per line (empty when none), for a "
        "re-measure step; no kernel then fails on one measurement."
    ),
]
RerunOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--rerun",
        help="A re-measurement of the same commit (repeatable): confirms or clears suspects.",
        exists=True,
        dir_okay=False,
    ),
]


def write_suspects(verdict: Verdict, path: Path) -> None:
    """The suspects, one kernel name per line as the report names it (empty when none)."""
    names = [k.name for k in verdict.kernels if k.status == "suspect"]
    path.write_text("".join(f"{name}\n" for name in names), encoding="utf-8")
    typer.echo(f"{len(names)} suspect(s) written to {path}", err=True)
