"""The PR gate's re-measure step on the command line: ``--suspects`` and ``--rerun``.

Shared by ``roofguard check`` and ``roofguard upload`` (the service judges, the command writes
what it answered), so the Action drives both the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer

from rules import KernelStatus, Verdict

SuspectsOpt = Annotated[
    Path | None,
    typer.Option(
        help="Write the suspects here, one kernel name per line (empty when none), for a "
        "re-measure step; no kernel then fails on one measurement."
    ),
]
SuspectsRegexOpt = Annotated[
    Path | None,
    typer.Option(
        help="Also write the suspects as one regular expression (the names escaped, joined "
        "with |), for `ncu --kernel-name-base demangled -k regex:...` or `--benchmark_filter`."
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


#: What a name's regex escapes: the characters special outside a bracket expression in both
#: POSIX extended and ECMAScript expressions, and nothing else. ``]`` and ``}`` are ordinary
#: once ``[`` and ``{`` are escaped, and escaping an ordinary character is undefined in POSIX
#: (a strict std::regex, as Google Benchmark's filter may be, refuses it).
_SPECIAL = re.compile(r"[\[\\.*^$+?(){|]")


def suspects_regex(names: Iterable[str]) -> str:
    """``names`` as one alternation that matches each of them literally (anywhere in a name)."""
    return "|".join(_SPECIAL.sub(lambda m: "\\" + m.group(), name) for name in names)


def suspect_keys(verdict: Verdict) -> set[str]:
    """Kernels to re-measure: suspects, and kernels with a suspect finding beside a failure.

    A GEMM off the tensor cores fails ``regime-flip`` at once (what binds it changed: not
    noise), which makes it ``regressed``; its drop of percent of roof and of time is still a
    suspect that says "re-measure to confirm", and it must be re-measured to be confirmed.
    """
    keys = {k.key for k in verdict.kernels if k.status == KernelStatus.SUSPECT}
    found = {f.kernel for f in verdict.findings if f.status == KernelStatus.SUSPECT}
    return keys | {key for key in found if key is not None}


def write_suspects(verdict: Verdict, path: Path, regex: Path | None = None) -> None:
    """The suspects, one kernel name per line as the report names it (empty when none).

    ``regex``: also the suspects as one regular expression (``suspects_regex``).
    """
    keys = suspect_keys(verdict)
    names = [k.name for k in verdict.kernels if k.key in keys]
    path.write_text("".join(f"{name}\n" for name in names), encoding="utf-8")
    if regex is not None:
        regex.write_text(suspects_regex(names), encoding="utf-8")
    typer.echo(f"{len(names)} suspect(s) written to {path}", err=True)
