"""The command registry: each module registers exactly the names COMMANDS lists for it."""

import re
import subprocess
import sys

import click
import pytest
import typer

from service.cli import COMMANDS, build_app, modules_for
from service.cli.overview import SUMMARIES, summary


def registered_names(app: typer.Typer) -> set[str]:
    command = typer.main.get_command(app)
    return set(command.commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("module", sorted(COMMANDS))
def test_each_module_registers_the_names_listed_for_it(module):
    assert registered_names(build_app([module])) == set(COMMANDS[module])


def test_command_names_are_unique_across_modules():
    names = [n for ns in COMMANDS.values() for n in ns]
    assert len(names) == len(set(names))


def test_a_command_line_loads_only_its_module():
    assert modules_for(["check", "x.csv", "--repo", "a/b"]) == ["service.cli.check_cmd"]
    assert modules_for(["--help"]) == []
    assert modules_for(["no-such-command"]) == []


def test_the_overview_lists_what_the_modules_register_in_their_order():
    command = typer.main.get_command(build_app())
    registered = {
        name: summary(command.commands[name].help)  # type: ignore[attr-defined]
        for name in command.list_commands(None)  # type: ignore[arg-type]
    }
    assert list(registered.items()) == list(SUMMARIES.items())


def last_line_of(code: str) -> str:
    """The last line a fresh Python process running ``code`` prints."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return proc.stdout.strip().splitlines()[-1]


def test_check_does_not_import_the_web_stack_or_plotting():
    code = (
        "import sys\n"
        "from service.cli import run\n"
        "run(['check', '--help'])\n"
        "heavy = ('fastapi', 'matplotlib', 'torch', 'uvicorn')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    assert last_line_of(code) == "[]"


def test_top_level_help_lists_every_command(capsys):
    from service.cli import run

    assert run(["--help"]) == 0
    out = capsys.readouterr().out
    for names in COMMANDS.values():
        for name in names:
            assert name in out


def test_top_level_help_imports_no_command_module():
    code = (
        "import sys\n"
        "from service.cli import run\n"
        "assert run(['--help']) == 0\n"
        "assert run(['no-such-command']) == 2\n"
        "heavy = ('pandas', 'sqlalchemy', 'pydantic', 'rules', 'collectors', 'service.errors')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    assert last_line_of(code) == "[]"


def test_main_freezes_the_start_up_objects_and_keeps_collecting():
    code = (
        "import gc, sys\n"
        "sys.argv = ['roofguard', 'check', '--help']\n"
        "from service.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(gc.isenabled(), gc.get_freeze_count() > 10_000)"
    )
    assert last_line_of(code) == "True True"


def _helps(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command line whose ``--help`` is a page of its own (groups' subcommands too)."""
    subcommands = getattr(command, "commands", {})
    found = [path] if path else []
    for name, sub in subcommands.items():
        found += _helps(sub, (*path, name))
    return found


def test_every_help_shows_its_bracketed_text_and_reflows_its_prose(capsys, monkeypatch):
    """Rich markup read ``[devices.*]`` as a style tag and printed nothing in its place."""
    from service.cli import run

    monkeypatch.setenv("COLUMNS", "200")
    command = typer.main.get_command(build_app())
    for path in _helps(command):
        run([*path, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        target = command
        for name in path:
            target = target.commands[name]  # type: ignore[attr-defined]
        for param in target.params:
            for bracketed in re.findall(r"\[[^\]]+\]", getattr(param, "help", None) or ""):
                assert bracketed in out, (path, param.name)
    run(["check", "--help"])
    assert "kernels worse beyond noise are suspects (--suspects writes them)" in (
        capsys.readouterr().out
    )
