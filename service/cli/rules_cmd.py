"""``roofguard rules [ID]``: the rule catalogue, or one rule's reference."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from rules import all_rules, get_rule, options_table, rule_markdown


def _listing() -> str:
    rows = [
        (r.id, r.group, r.default_severity.value, r.stability.value, r.summary)
        for r in all_rules().values()
    ]
    width = max(len(r[0]) for r in rows)
    lines = [f"{'rule':<{width}}  {'group':<12}{'severity':<10}{'stability':<11}summary"]
    lines += [f"{i:<{width}}  {g:<12}{s:<10}{st:<11}{summary}" for i, g, s, st, summary in rows]
    return "\n".join(lines)


def _as_json(rule_id: str | None) -> str:
    chosen = [get_rule(rule_id)] if rule_id else list(all_rules().values())
    return json.dumps(
        [
            {
                "id": r.id,
                "group": r.group,
                "severity": r.default_severity.value,
                "stability": r.stability.value,
                "summary": r.summary,
                "options": [{"name": n, "type": t, "default": d} for n, t, d in options_table(r)],
            }
            for r in chosen
        ],
        indent=2,
    )


def rules_command(
    rule_id: Annotated[str | None, typer.Argument(metavar="ID", help="A rule id.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Write JSON.")] = False,
) -> None:
    """List the rules, or show one rule: what triggers it, the advice, its options."""
    if as_json:
        typer.echo(_as_json(rule_id))
    elif rule_id is None:
        typer.echo(_listing())
    else:
        typer.echo(rule_markdown(get_rule(rule_id)))


def register(app: typer.Typer) -> None:
    """Add ``rules`` to ``app``."""
    app.command("rules")(rules_command)
