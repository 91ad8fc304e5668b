"""Pull-request comment commands, e.g. ``/roofguard accept decode_gemv -- fused on purpose``."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: author_association values GitHub gives people allowed to accept a baseline change.
MAINTAINER_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})

_ACCEPT = re.compile(r"^/roofguard\s+accept(?:\s+(?P<kernel>.+?))?\s+--\s+(?P<reason>\S.*)$")
_ACCEPT_NO_REASON = re.compile(r"^/roofguard\s+accept\b")
_ANY_COMMAND = re.compile(r"^/roofguard(?:\s+(?P<name>\S+)|\s*$)")
#: Every command roofguard reads in a comment, as its usage line.
KNOWN_COMMANDS = ("/roofguard accept [KERNEL] -- REASON",)


@dataclass(frozen=True)
class AcceptCommand:
    """``/roofguard accept [kernel] -- reason``: accept a change as the new baseline.

    Attributes:
        kernel: The kernel's identity key, or None for every regressed kernel of the run.
        reason: Why the change is accepted (recorded with who accepted it).
    """

    kernel: str | None
    reason: str


class CommandSyntaxError(ValueError):
    """A ``/roofguard`` command that cannot be understood; the message says the syntax."""


def parse_accept(comment: str) -> AcceptCommand | None:
    """The accept command in a comment body, None when the comment has none.

    Only a line that starts with ``/roofguard accept`` counts, so quoting a command in a
    sentence does not trigger it.

    Raises:
        CommandSyntaxError: The line starts like the command but gives no ``-- reason``, or
            the comment's only ``/roofguard`` lines name a command roofguard does not know.
    """
    unknown: str | None = None
    for line in comment.splitlines():
        line = line.strip()
        match = _ACCEPT.match(line)
        if match:
            kernel = match.group("kernel")
            return AcceptCommand(
                kernel=kernel.strip("` ") if kernel else None, reason=match.group("reason").strip()
            )
        if _ACCEPT_NO_REASON.match(line):
            raise CommandSyntaxError("usage: /roofguard accept [KERNEL] -- REASON")
        unknown = unknown or _unknown_command(line)
    if unknown:
        raise CommandSyntaxError(unknown)
    return None


def _unknown_command(line: str) -> str | None:
    """Why a ``/roofguard`` line that is no known command is not acted on (None: not one)."""
    match = _ANY_COMMAND.match(line)
    if match is None:
        return None
    name = match.group("name")
    # a bare "no command" answer sent people looking for a typo in a command roofguard lacks
    what = f"unknown /roofguard command {name!r}" if name else "/roofguard names no command"
    return f"{what}; known commands: {', '.join(KNOWN_COMMANDS)}"
