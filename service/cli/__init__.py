"""The ``roofguard`` command line. Thin: each command lives in its own module.

Adding a command group is one module with ``register(app)`` plus one line in ``COMMANDS``.
Errors from every layer are mapped to exit codes in one place, ``main()``:
0 success (check: pass or warn), 1 check failed, 2 bad input or usage.
"""

from __future__ import annotations

import importlib
import sys

import click
import typer

from collectors.errors import CollectorError
from rules.errors import RuleError
from service.errors import ServiceError

#: One line per command module; each exposes ``register(app: typer.Typer) -> None``.
COMMANDS: tuple[str, ...] = (
    "service.cli.roofline_cmd",
    "service.cli.inspect_cmd",
    "service.cli.db_cmd",
    "service.cli.ingest_cmd",
    "service.cli.comment_cmd",
    "service.cli.check_cmd",
    "service.cli.demo_cmd",
    "service.cli.rules_cmd",
    "service.cli.digest_cmd",
    "service.cli.serve_cmd",
    "service.cli.token_cmd",
    "service.cli.upload_cmd",
    "service.cli.plot_cmd",
    "service.cli.calibrate_cmd",
)

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

# Recent typer vendors its own copy of click (typer._click); older ones use click itself.
# Catch both so usage errors always exit 2 with one message.
_EXIT: tuple[type[BaseException], ...] = (click.exceptions.Exit, typer.Exit)
_ABORT: tuple[type[BaseException], ...] = (click.exceptions.Abort, typer.Abort)
_USAGE: tuple[type[BaseException], ...] = (
    click.ClickException,
    getattr(typer, "TyperException", click.ClickException),
)


def build_app() -> typer.Typer:
    """The Typer application with every command registered."""
    app = typer.Typer(
        name="roofguard",
        help="Roofline-based performance-regression checks for GPU kernels.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    for module in COMMANDS:
        importlib.import_module(module).register(app)
    return app


def _error(message: str) -> int:
    click.echo(f"roofguard: error: {message}", err=True)
    return EXIT_USAGE


def run(argv: list[str] | None = None) -> int:
    """Run the CLI on ``argv`` and return the exit code (used by tests and ``main``)."""
    command = typer.main.get_command(build_app())
    try:
        result = command.main(args=argv, prog_name="roofguard", standalone_mode=False)
    except _EXIT as exc:
        return int(getattr(exc, "exit_code", 0))
    except _ABORT:
        return _error("aborted")
    except _USAGE as exc:
        exc.show()  # type: ignore[attr-defined]
        return EXIT_USAGE
    except (CollectorError, RuleError) as exc:
        return _error(str(exc))
    except ServiceError as exc:
        click.echo(f"roofguard: error: {exc}", err=True)
        return exc.exit_code
    return result if isinstance(result, int) else EXIT_OK


def main() -> None:
    """Console-script entry point."""
    sys.exit(run())
