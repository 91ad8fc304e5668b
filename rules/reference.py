"""The rules reference: each rule's docstring plus a generated **Configuration** section.

Used by ``roofguard rules ID`` and the generated docs, so a rule documents itself once.
"""

from __future__ import annotations

import inspect
from typing import Any

from rules.base import Rule


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def toml_value(value: Any) -> str:
    """A default written as TOML (``true``, ``4.0``, ``"warn"``, ``[4, 8]``)."""
    value = getattr(value, "value", value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return '"' + str(value).replace('"', '\\"') + '"'


def options_table(rule: type[Rule]) -> list[tuple[str, str, str]]:
    """``(option, type, default)`` for every field of the rule's ``Options``."""
    return [
        (name, _type_name(field.annotation), toml_value(field.default))
        for name, field in rule.Options.model_fields.items()
    ]


def configuration_section(rule: type[Rule]) -> str:
    """The **Configuration** section: a TOML example and the options table."""
    rows = options_table(rule)
    if not rows:
        return "**Configuration**\n\nThis rule has no options.\n"
    lines = ["**Configuration**", "", "```toml", f"[rules.options.{rule.id}]"]
    lines += [f"{name} = {default}" for name, _, default in rows]
    lines += ["```", "", "| option | type | default |", "|---|---|---|"]
    lines += [f"| `{name}` | {kind} | `{default}` |" for name, kind, default in rows]
    return "\n".join(lines) + "\n"


def rule_markdown(rule: type[Rule]) -> str:
    """The full reference of one rule, as markdown."""
    doc = inspect.cleandoc(rule.__doc__ or "")
    meta = (
        f"`{rule.id}` · group `{rule.group}` · severity `{rule.default_severity.value}` · "
        f"{rule.stability.value}"
    )
    summary, _, body = doc.partition("\n")
    return f"## {rule.id}\n\n{summary}\n\n{meta}\n{body}\n\n{configuration_section(rule)}"
