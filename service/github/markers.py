"""Where roofguard's own comments and issues are recognised: the hidden marker on line one."""

from __future__ import annotations

from service.render.escape import marker_value


def opens_with(body: str | None, marker: str) -> bool:
    """Whether ``body``'s first line is ``marker``: where roofguard writes it, and only there.

    Anywhere in the body, a kernel name quoted in a table carried another device's marker,
    and that device's verdict then edited or deleted this comment.
    """
    return (body or "").split("\n", 1)[0].rstrip("\r") == marker


def with_marker(body: str, marker: str) -> str:
    """``body`` opening with ``marker`` (added as its first line when it does not)."""
    return body if opens_with(body, marker) else f"{marker}\n{body}"


def issue_marker(title: str) -> str:
    """Hidden marker of an issue roofguard maintains (the digest)."""
    return f"<!-- roofguard:issue title={marker_value(title)} -->"
