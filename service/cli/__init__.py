"""The ``roofguard`` command line. Thin: each command lives in its own module.

Adding a command group is one module with ``register(app)`` plus one line in ``COMMANDS`` and
its summary in ``service.cli.overview.SUMMARIES`` (what ``roofguard --help`` lists).
Errors from every layer are mapped to exit codes in one place, ``main()``:
0 success (check: pass or warn), 1 check failed, 2 bad input, usage or any other error.
An unexpected error is one line with exit 2 too, never a traceback with exit 1: CI must not
read a crash as a failing verdict (``ROOFGUARD_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any

import click
import typer

from service.cli.overview import HELP_MARKUP, overview

#: One line per command module (each exposes ``register(app: typer.Typer) -> None``) with the
#: top-level command names it registers. A command line imports only the module of its command,
#: so `roofguard check` does not pay for FastAPI, matplotlib or torch; tests/service/test_cli.py
#: checks that the names match what each module registers.
COMMANDS: dict[str, tuple[str, ...]] = {
    "service.cli.roofline_cmd": ("roofline", "devices", "schema"),
    "service.cli.inspect_cmd": ("inspect",),
    "service.cli.db_cmd": ("db",),
    "service.cli.ingest_cmd": ("ingest",),
    "service.cli.comment_cmd": ("comment",),
    "service.cli.artifact_cmd": ("artifact",),
    "service.cli.check_cmd": ("check",),
    "service.cli.demo_cmd": ("demo",),
    "service.cli.rules_cmd": ("rules",),
    "service.cli.digest_cmd": ("digest",),
    "service.cli.serve_cmd": ("serve",),
    "service.cli.token_cmd": ("token",),
    "service.cli.upload_cmd": ("upload",),
    "service.cli.plot_cmd": ("plot",),
    "service.cli.calibrate_cmd": ("calibrate",),
    "service.cli.formats_cmd": ("formats",),
    "service.cli.compare_cmd": ("compare",),
}

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
#: Typer's exit code for Ctrl-C (and here for SIGTERM), 128 + SIGINT as shells give it.
EXIT_INTERRUPTED = 130
INTERRUPTED = (
    "roofguard: interrupted; the store is written in one transaction, all of it or nothing, "
    "so running the command again is safe"
)
#: What a command that stores nothing says when interrupted: the line above would promise a
#: transaction to someone who ran `roofguard inspect`.
INTERRUPTED_PLAIN = "roofguard: interrupted"
#: The command lines that write a store, by their first words (``calibrate`` with ``--store``).
STORING_COMMANDS = frozenset(
    {
        ("ingest",),
        ("check",),
        ("demo",),
        ("db", "upgrade"),
        ("token", "create"),
        ("token", "revoke"),
    }
)

# Recent typer vendors its own copy of click (typer._click); older ones use click itself.
# Catch both so usage errors always exit 2 with one message.
_EXIT: tuple[type[BaseException], ...] = (click.exceptions.Exit, typer.Exit)
_ABORT: tuple[type[BaseException], ...] = (click.exceptions.Abort, typer.Abort)
_USAGE: tuple[type[BaseException], ...] = (
    click.ClickException,
    getattr(typer, "TyperException", click.ClickException),
)


def _print_version(value: bool) -> None:
    if value:
        from service import __version__

        click.echo(f"roofguard {__version__}")
        raise typer.Exit()


_VersionOpt = Annotated[
    bool,
    typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version."),
]


def _root(version: _VersionOpt = False) -> None:
    """Roofline-based performance-regression checks for GPU kernels."""


def modules_for(argv: Sequence[str]) -> list[str]:
    """The command module a command line needs; none for the overview or an unknown name."""
    name = next((arg for arg in argv if not arg.startswith("-")), None)
    if name is None and "--version" in argv:
        return []  # the root's flag: no command module to load
    for module, names in COMMANDS.items():
        if name in names:
            return [module]
    return []


def build_app(modules: Sequence[str] | None = None) -> typer.Typer:
    """The Typer application with the commands of ``modules`` (default: all) registered."""
    app = typer.Typer(
        name="roofguard",
        help="Roofline-based performance-regression checks for GPU kernels.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=HELP_MARKUP,
    )
    # A callback keeps the app a group even when only one command module is loaded.
    app.callback()(_root)
    for module in COMMANDS if modules is None else modules:
        importlib.import_module(module).register(app)
    return app


def _error(message: str) -> int:
    click.echo(f"roofguard: error: {message}", err=True)
    return EXIT_USAGE


def _unexpected(exc: Exception) -> int:
    """One line naming an unexpected error (its first line, cut), exit 2."""
    if os.environ.get("ROOFGUARD_DEBUG"):
        traceback.print_exception(exc)
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else ""
    text = text if len(text) <= 300 else f"{text[:300]}..."
    return _error(f"unexpected {type(exc).__name__}: {text} (ROOFGUARD_DEBUG=1 shows where)")


#: Options that take every word after them up to the next option: ``compare A B --against
#: C D`` reads as ``--against C --against D`` (click gives an option one value per flag).
GREEDY_OPTIONS: dict[str, str] = {"compare": "--against"}


def expand_greedy(args: Sequence[str]) -> list[str]:
    """``args`` with each word after a greedy option given that option again (see above)."""
    name = next((arg for arg in args if not arg.startswith("-")), None)
    flag = GREEDY_OPTIONS.get(name or "")
    if flag is None or flag not in args:
        return list(args)
    out: list[str] = []
    greedy = False
    for arg in args:
        if arg == flag:
            greedy = True
            continue
        if arg.startswith("-"):
            greedy = False
        out += [flag, arg] if greedy else [arg]
    return out


def run(argv: list[str] | None = None) -> int:
    """Run the CLI on ``argv`` and return the exit code (used by tests and ``main``)."""
    args = expand_greedy(sys.argv[1:] if argv is None else argv)
    modules = modules_for(args)
    if not modules:  # `roofguard --help`, or a name no module registers: no module imported
        return _invoke(overview(), args)
    # Imported here, not at the top, so that main() imports them with the command's modules
    # (rules.errors loads the whole rules package, pandas included).
    from collectors import CollectorError
    from rules import RuleError
    from service.errors import ServiceError

    try:
        return _invoke(typer.main.get_command(build_app(modules)), args)
    except (CollectorError, RuleError) as exc:
        return _error(str(exc))
    except ServiceError as exc:
        click.echo(f"roofguard: error: {exc}", err=True)
        return exc.exit_code
    except Exception as exc:  # the one place an unexpected error becomes exit 2
        return _unexpected(exc)


def _invoke(command: Any, args: list[str]) -> int:
    """Run ``command`` on ``args``; click's exits and usage errors as exit codes.

    ``command`` is a click command, of click itself (the overview) or of the copy Typer vendors.
    """
    try:
        result = command.main(args=args, prog_name="roofguard", standalone_mode=False)
    except _EXIT as exc:
        return int(getattr(exc, "exit_code", 0))
    except _ABORT:
        return _error("aborted")
    except _USAGE as exc:
        exc.show()  # type: ignore[attr-defined]
        return EXIT_USAGE
    if result == EXIT_INTERRUPTED:  # Typer's answer to KeyboardInterrupt: silent before
        click.echo(interrupted_message(args), err=True)
    return result if isinstance(result, int) else EXIT_OK


def interrupted_message(args: Sequence[str]) -> str:
    """What an interrupted command line says: the transaction's promise only where it stores."""
    words = tuple(arg for arg in args if not arg.startswith("-"))
    stores = words[:1] in STORING_COMMANDS or words[:2] in STORING_COMMANDS
    stores = stores or (words[:1] == ("calibrate",) and "--store" in args)
    return INTERRUPTED if stores else INTERRUPTED_PLAIN


@contextmanager
def _outside_gc() -> Iterator[None]:
    """Import without the cyclic garbage collector, then freeze what the imports made.

    Importing SQLAlchemy, pandas, numpy and the pydantic models makes some 120,000 objects
    that live as long as the process. Every full collection walks them all for nothing: two
    or three during the imports and one or two during a check, 0.1-0.2 s of `roofguard check`.
    Frozen, later collections skip them; garbage the command makes is collected as usual.
    Only for a process's own entry point: in a long-lived caller (the tests' ``run``),
    freezing would keep that caller's uncollected garbage alive.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM as Ctrl-C: the transaction rolls back and temporary files go, then exit 130."""
    raise KeyboardInterrupt


def main() -> None:
    """Console-script entry point."""
    signal.signal(signal.SIGTERM, _interrupt)  # a cancelled CI job's
    args = sys.argv[1:]
    modules = modules_for(args)
    errors = ("collectors.errors", "rules.errors", "service.errors") if modules else ()
    with _outside_gc():
        for module in (*errors, *modules):
            importlib.import_module(module)
    sys.exit(run(args))
