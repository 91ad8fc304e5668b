"""No option's help holds text the help's markdown would take for an HTML tag and drop.

``plot run --help`` read "(default: .svg)": the ``<run>`` of "(default: <run>.svg)" was
swallowed as a tag, and the real default is ``roofline-<stem>.svg``.
"""

from __future__ import annotations

import re
from typing import Any

import typer

from service.cli import build_app

_TAG = re.compile(r"<[A-Za-z][^<>]*>")


def _helps(command: Any, path: str) -> list[tuple[str, str]]:
    """``(command path and option, help)`` of every option of ``command`` and below.

    (typer carries its own click: its classes are matched by what they have, not by type.)
    """
    found = [
        (f"{path} {param.name}", param.help or "")
        for param in command.params
        if getattr(param, "param_type_name", "") == "option"
    ]
    for name, sub in getattr(command, "commands", {}).items():
        found += _helps(sub, f"{path} {name}")
    return found


def test_no_help_holds_a_tag_the_markdown_drops() -> None:
    helps = _helps(typer.main.get_command(build_app()), "roofguard")
    assert len(helps) > 50  # every command was walked
    tagged = [(where, text) for where, text in helps if _TAG.search(text)]
    assert tagged == []
