"""Which work model made a kernel's declared work, read back off its record.

``_declare`` (``collectors.workmodel``) writes each declared figure's expression into the
kernel's provenance; a stored record so says which model made its work, and the service
compares it with the run being judged (``service.pipeline.workchange``).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping

from collectors.schema import KernelRecord


def declared_definition(kernel: KernelRecord) -> dict[str, str]:
    """The expressions of the declared work ``kernel``'s roofline uses, by ``flops.<slot>``.

    Read off the provenance ``_declare`` wrote (``... = <expression>``), so a stored record
    says which model made its work: the service judges a kernel's nights before an edit on
    the new work (a FLOP count fixed in roofguard.toml is no regression).
    """
    notes = {name: origin.note for name, origin in kernel.provenance.items()}
    return definition_of(bool(kernel.flops), bool(kernel.bytes), notes)


def definition_of(
    measured_flops: bool, measured_bytes: bool, notes: Mapping[str, str | None]
) -> dict[str, str]:
    """``declared_definition`` from a kernel's parts (a stored record's, not validated).

    Measured work wins over declared (``KernelRecord.work``): then the declared expressions
    do not count. ``notes``: each provenance entry's note, by its name.
    """
    used = {"flops": not measured_flops, "bytes": not measured_bytes}
    found: dict[str, str] = {}
    for name, note in notes.items():
        what, _, slot = name.removeprefix("declared_").partition(".")
        if name.startswith("declared_") and used.get(what) and note:
            found[f"{what}.{slot}"] = _expression_of(note)
    return found


@functools.lru_cache(maxsize=4096)
def _expression_of(note: str) -> str:
    """The expression ``_declare``'s note ends with, as ``ast`` writes it back.

    The note is ``<config>: <field> (pattern '<glob>') = <expression>``: the expression is
    what follows the first `` = `` after which the rest parses, so a `` = `` in the glob or in
    a ``#`` comment is no cut. Written back, spacing and comments are no change of model.
    """
    start = 0
    while (at := note.find(" = ", start)) >= 0:
        try:
            return ast.unparse(ast.parse(note[at + 3 :].strip(), mode="eval"))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            start = at + 1
    return note
