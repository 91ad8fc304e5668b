"""Text that is not UTF-8: one error naming the line and the byte, or its surrogates replaced."""

from __future__ import annotations

import re

from collectors.errors import MalformedReport

_LONE = re.compile("[\ud800-\udfff]")


def replace_surrogates(text: str) -> str:
    """``text`` with lone surrogates (undecodable bytes a library let through) as U+FFFD.

    Such a ``str`` cannot be encoded to UTF-8, so a record holding it could not be stored.
    """
    return _LONE.sub("\ufffd", text) if _LONE.search(text) else text


def undecodable(path: str, exc: UnicodeDecodeError) -> MalformedReport:
    """The error for a byte that is not UTF-8, naming its line (found by reading again)."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as bad:
                byte = raw[bad.start : bad.start + 1].hex()
                reason = f"not UTF-8 text: byte 0x{byte} at column {bad.start + 1} ({bad.reason})"
                return MalformedReport(path, number, None, reason)
    return MalformedReport(path, None, None, f"not a text file ({exc.reason})")
