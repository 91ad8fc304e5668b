"""The digest's accepted regressions as rows: the change, and who accepted it, when and why."""

from __future__ import annotations

from collections.abc import Callable

from rules import one_decimal
from service.digest.acceptance import AcceptedChange
from service.digest.model import Digest
from service.render.escape import escape_text
from service.render.figures import time_change


def _percent(a: AcceptedChange) -> str:
    if a.relative_change is None or a.before is None or a.after is None:
        return "–"
    levels = f"{one_decimal(a.before)} % → {one_decimal(a.after)} %"
    return f"{a.relative_change * 100:+.1f} % ({levels})"


def _row(
    a: AcceptedChange, esc: Callable[[str], str], text: Callable[[str], str]
) -> dict[str, str]:
    return {
        "kernel": esc(a.kernel),
        "device": esc(a.device),
        "change": _percent(a),
        "time": time_change(a.after_s, a.before_s) if a.after_s is not None else "–",
        "since": a.since.strftime("%Y-%m-%d"),
        "commits": f"{a.from_commit[:8]}…{a.to_commit[:8]}",
        "by": text(a.accepted_by),
        "on": a.accepted_at.strftime("%Y-%m-%d"),
        "card": "every card" if a.every_device else "this card",
        "reason": text(a.reason) if a.reason.strip() else "–",
    }


def accepted_rows(
    digest: Digest, esc: Callable[[str], str], *, markdown: bool
) -> list[dict[str, str]]:
    """One row per accepted regression; ``markdown``: free text escaped for a GFM table cell.

    A login is written without its ``@`` (and escaped): the weekly issue mentions nobody.
    """
    text = escape_text if markdown else (lambda s: s)
    return [_row(a, esc, text) for a in digest.accepted]
