"""A run-level note added to a verdict: the one way the check's notes are appended."""

from __future__ import annotations

from rules import Verdict


def with_note(verdict: Verdict, note: str) -> Verdict:
    """``verdict`` with ``note`` after its run-level notes."""
    return verdict.model_copy(update={"notes": (*verdict.notes, note)})
