"""The top-level ``roofguard --help`` without importing a single command module.

Listing the commands through Typer would import every command module, and with them pandas,
SQLAlchemy, matplotlib and github3: 1,600 modules and 1-2 s for a page of text. The overview
is a plain click group built from this table instead, so it costs little more than importing
Typer itself; ``tests/service/cli/test_cli.py`` holds the table equal to what the modules
register. A command's own ``--help`` still comes from its module, with Typer's formatting.
"""

from __future__ import annotations

from typing import Final

import click

HELP = "Roofline-based performance-regression checks for GPU kernels."
#: How every Typer app renders its commands' help. The docstrings are prose wrapped in the
#: source: markdown reflows each paragraph to the terminal (rich keeps the source's line
#: breaks, ragged on 80 columns) and leaves ``[devices.*]`` as written (rich read it as a
#: style tag and printed nothing).
HELP_MARKUP: Final = "markdown"
#: ``--device`` of every command that reads reports: the device a report names wins
#: (``service.pipeline.roofs``), so the option names only the device of reports that name none.
DEVICE_HELP: Final = "Device of reports that name none (a report naming another is an error)."

#: Every command's summary (the first paragraph of its help), in the order the overview lists
#: them: the commands first, then the command groups.
SUMMARIES: dict[str, str] = {
    "roofline": (
        "Place a kernel on a roofline: intensity, ridge, regime, roof time, percent of roof."
    ),
    "devices": "List the hardware catalog: dense peaks and bandwidths with their sources.",
    "schema": "Print the JSON Schema of RunRecord (roofguard's own JSON format).",
    "inspect": "Read reports without storing them and place every kernel on its roofline.",
    "ingest": "Store a run's reports in the history store; the same content twice is a no-op.",
    "comment": "Post a verdict as the PR's sticky comment plus a check run or commit status.",
    "check": "Ingest the run, judge it kernel by kernel on percent of roof, and write the verdict.",
    "demo": "Judge a pull request against a month of nightly history (example data shipped).",
    "rules": "List the rules, or show one rule: what triggers it, the advice, its options.",
    "digest": "The regression digest of a period: regressions, improvements, flips, unresolved.",
    "serve": "Serve the upload API, the dashboard and the GitHub webhook.",
    "upload": "Upload reports to a roofguard service and write the verdict it returns.",
    "calibrate": "Measure this runner's roofline (bandwidth, peaks, ridge), or check its health.",
    "formats": "List every input format: its name, what it reads, and a command that produces it.",
    "compare": "Two runs' reports kernel by kernel, or every kernel on every card of a repository.",
    "db": "Manage the history store's database.",
    "artifact": "Pack reports for the fork-safe pair, or unpack them strictly.",
    "token": "Create, list and revoke API tokens of the roofguard service.",
    "plot": "Draw roofline and trend charts (SVG or PNG).",
}


def summary(help_text: str | None) -> str:
    """The first paragraph of a command's help, on one line (what the overview shows)."""
    first = (help_text or "").strip().split("\n\n", 1)[0]
    return " ".join(first.split())


class _InTableOrder(click.Group):
    """A group that lists its commands in the order they were added (click sorts them)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


def overview() -> click.Group:
    """The top level alone: the commands' names and summaries, nothing to run.

    A command name it does not know is click's usual usage error (exit 2), as before.
    """
    from service import __version__

    group = _InTableOrder("roofguard", help=HELP, no_args_is_help=True)
    for name, text in SUMMARIES.items():
        group.add_command(click.Command(name, help=text, short_help=text))
    version = click.version_option(
        __version__, "--version", prog_name="roofguard", message="%(prog)s %(version)s"
    )
    return version(group)
