"""The documentation covers the public contracts, and its examples are what the code does.

Config keys, rule ids and options, CLI commands and flags, the verdict and digest JSON keys and
the Action's inputs and outputs are public contracts: each must be documented in the file that
owns it (README.md links to those files). Every ``roofguard`` command in a shell code block (or
a workflow snippet's ``run:`` step) of a README or CONTRIBUTING.md must resolve to a real
command with real options (parsed with ``--help`` added, so nothing runs), every input a
document gives the Action must be one of its inputs, and the verdict the README shows must be
the beginning of the demo's output. That every reference resolves (paths, links, dotted names,
nothing outside the repository) is ``test_doc_references.py``'s.
"""

from __future__ import annotations

import re
import shlex
import types
import typing
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import click
import pytest
import typer
import yaml
from pydantic import BaseModel
from typer.testing import CliRunner

from rules.registry import all_rules
from rules.verdict import Verdict
from service.cli import build_app
from service.config import RoofguardConfig
from service.digest.model import Digest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RULES_DOC = ROOT / "rules" / "README.md"
SERVICE_DOC = ROOT / "service" / "README.md"
ACTION_DIR = ROOT / ".github" / "actions" / "roofguard"
#: The user README, the reference files it links to, the Action's and the benchmarks'.
MAIN_DOCS = (
    README,
    ROOT / "collectors" / "README.md",
    RULES_DOC,
    SERVICE_DOC,
    ROOT / "deploy" / "README.md",
    ROOT / ".github" / "CONTRIBUTING.md",
    ACTION_DIR / "README.md",
    ROOT / "tests" / "bench" / "README.md",
)
#: The demo's output, which the README shows the beginning of.
DEMO_GOLDEN = ROOT / "tests" / "service" / "golden"
#: Folders that are not the project's own text (environments, caches, generated output).
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "build", "dist", "golden", "__pycache__"}
SHELL_LANGS = {"bash", "sh", "shell", "console"}
#: Workflow snippets: their ``run:`` steps are shell commands too.
YAML_LANGS = {"yaml", "yml"}
#: Spelled in two parts so that this file does not match itself.
OUTSIDE = ".." + "/shared"


def _files(*patterns: str) -> list[Path]:
    found: set[Path] = set()
    for pattern in patterns:
        for path in ROOT.rglob(pattern):
            parts = path.relative_to(ROOT).parts
            if any(p in SKIP_DIRS or (p.startswith(".") and p != ".github") for p in parts[:-1]):
                continue
            found.add(path)
    return sorted(found)


def _doc_files() -> list[Path]:
    return _files("README*.md", "CONTRIBUTING.md")


def _text(*paths: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in paths)


# ---- configuration keys


def _models_in(annotation: object) -> Iterator[type[BaseModel]]:
    """Pydantic models inside an annotation: ``X``, ``X | None``, ``list[X]``, ``tuple[X, ...]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from _models_in(arg)


def _is_sequence(annotation: object) -> bool:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_is_sequence(a) for a in typing.get_args(annotation))
    return origin in (list, tuple)


def config_keys(model: type[BaseModel] = RoofguardConfig, prefix: str = "") -> list[str]:
    """Every key of the configuration model, dotted, with ``[]`` for tables in an array."""
    keys: list[str] = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{field.alias or name}"
        keys.append(key)
        sep = "[]." if _is_sequence(field.annotation) else "."
        for sub in _models_in(field.annotation):
            keys.extend(config_keys(sub, key + sep))
    return keys


def documented_key(key: str, text: str) -> bool:
    """A key is documented as `key`, or as the head of a longer one (`key.<...>`, `key[]...`)."""
    return re.search("`" + re.escape(key) + r"(`|\.<|\[\]|\.)", text) is not None


def test_config_walk_reaches_nested_models() -> None:
    keys = config_keys()
    assert {"baseline.window", "keys.strip_template_args", "work_models[].pattern"} <= set(keys)
    assert {"rules.groups[].target_percent", "rules.ignore[].kernels", "rules.fail_on"} <= set(keys)


def test_every_config_key_is_documented() -> None:
    text = _text(RULES_DOC, README)
    missing = [k for k in config_keys() if not documented_key(k, text)]
    assert not missing, f"config keys not documented in rules/README.md or README.md: {missing}"


# ---- rules


def test_every_rule_is_documented() -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    missing = [
        rule_id
        for rule_id, rule in all_rules().items()
        if not re.search(
            rf"^\| {re.escape(rule_id)}( \(preview\))? \| {re.escape(rule.group)} \|",
            text,
            re.MULTILINE,
        )
    ]
    assert not missing, f"rules without a row (id, group) in rules/README.md's table: {missing}"


def test_every_rule_option_is_documented() -> None:
    rows = [line for line in RULES_DOC.read_text(encoding="utf-8").splitlines() if line[:2] == "| "]
    missing = []
    for rule_id, rule in all_rules().items():
        options = getattr(rule, "Options", None)
        for option in options.model_fields if options else ():
            if not any(r.startswith(f"| {rule_id} |") and f"`{option}`" in r for r in rows):
                missing.append(f"{rule_id}.{option}")
    assert not missing, f"rule options not in rules/README.md's option table: {missing}"


# ---- the command line


@cache
def _app() -> typer.Typer:
    """The whole command line, built once (every command module registered)."""
    return build_app()


def _cli() -> click.Command:
    return typer.main.get_command(_app())


def commands(cmd: click.Command | None = None, path: tuple[str, ...] = ()) -> Iterator[tuple]:
    """(path, command) for every leaf command of the app, e.g. (("db", "upgrade"), cmd)."""
    cmd = cmd or _cli()
    subcommands = getattr(cmd, "commands", None)
    if subcommands is None:
        yield path, cmd
        return
    for name, sub in subcommands.items():
        yield from commands(sub, (*path, name))


def test_command_walk_reaches_subcommands() -> None:
    paths = {" ".join(p) for p, _ in commands()}
    assert {"check", "db upgrade", "token revoke", "plot kernel"} <= paths


def test_every_command_and_flag_is_documented() -> None:
    text = SERVICE_DOC.read_text(encoding="utf-8")
    everywhere = _text(*MAIN_DOCS)
    missing = []
    for path, cmd in commands():
        name = "roofguard " + " ".join(path)
        if name not in text:
            missing.append(name)
        for param in cmd.params:
            flags = [*param.opts, *[o for o in param.secondary_opts if not o.startswith("--no-")]]
            missing += [f"{name} {f}" for f in flags if f.startswith("--") and f not in everywhere]
    assert not missing, f"commands or flags not documented in service/README.md: {missing}"


# ---- JSON contracts


def json_keys(model: type[BaseModel], seen: frozenset[type] = frozenset()) -> set[str]:
    """The keys of a model's JSON, nested models included (each once: one may nest itself)."""
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        keys.add(field.alias or name)
        for sub in _models_in(field.annotation):
            if sub not in seen | {model}:
                keys |= json_keys(sub, seen | {model})
    return keys


@pytest.mark.parametrize("model", [Verdict, Digest], ids=lambda m: m.__name__)
def test_every_json_key_is_documented(model: type[BaseModel]) -> None:
    text = SERVICE_DOC.read_text(encoding="utf-8")
    missing = sorted(k for k in json_keys(model) if f"`{k}`" not in text)
    assert not missing, f"{model.__name__} JSON keys not documented in service/README.md: {missing}"


def test_verdict_keys_cover_kernels_and_findings() -> None:
    keys = json_keys(Verdict)
    assert {"conclusion", "kernels", "percent_of_roof", "status", "rule", "severity"} <= keys


# ---- commands in code blocks


def shell_blocks(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line number, language, code) of every fenced shell block of a markdown file."""
    lang, start, body = None, 0, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = re.match(r"^\s*```(\S*)", line)
        if fence and lang is None:
            lang, start, body = fence.group(1) or "text", number, []
        elif fence:
            if lang in SHELL_LANGS | YAML_LANGS:
                yield start, lang, "\n".join(body)
            lang = None
        elif lang is not None:
            body.append(line)


def run_steps(code: str) -> str:
    """The shell of a workflow snippet's ``run:`` steps (``run: |`` blocks included)."""
    out, block_indent = [], None
    for line in code.splitlines():
        indent = len(line) - len(line.lstrip())
        if block_indent is not None and (indent > block_indent or not line.strip()):
            out.append(line.strip())
            continue
        block_indent = None
        step = re.match(r"^(\s*)(?:- )?run:\s*(.*)$", line)
        if step and step.group(2).strip() in ("|", ">"):
            block_indent = len(step.group(1))
        elif step:
            out.append(step.group(2))
    return "\n".join(out)


def command_lines(lang: str, code: str) -> Iterator[str]:
    """Logical command lines: continuations joined; in console blocks only ``$`` prompts."""
    if lang in YAML_LANGS:
        code = re.sub(r"\$\{\{[^}]*\}\}", "X", run_steps(code))  # ${{ expressions }}
    code = code.replace("\\\n", " ")
    for line in code.splitlines():
        if lang == "console":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        yield line


def roofguard_calls(line: str) -> Iterator[list[str]]:
    """The argument lists of every ``roofguard`` (or ``python -m service``) call in a line."""
    inner = re.findall(r"\$\(([^()]*)\)", line)  # command substitutions run too
    pieces = [re.sub(r"\$\([^()]*\)", "X", line), *inner]
    for piece in pieces:
        lexer = shlex.shlex(piece, posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
        words: list[str] = []
        for token in [*tokens, ";"]:
            if token and set(token) <= set(";&|<>()"):
                yield from _call(words)
                words = []
            else:
                words.append(token)


def _call(words: list[str]) -> Iterator[list[str]]:
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        words = words[1:]  # environment assignments before the command
    if words[:1] == ["exec"]:
        words = words[1:]
    if words[:1] == ["roofguard"]:
        yield words[1:]
    elif words[:3] == ["python", "-m", "service"]:
        yield words[3:]


def documented_calls() -> list[tuple[str, list[str]]]:
    calls = []
    for path in _doc_files():
        for start, lang, code in shell_blocks(path):
            for line in command_lines(lang, code):
                for args in roofguard_calls(line):
                    calls.append((f"{path.relative_to(ROOT)}:{start}", args))
    return calls


def parse_error(args: list[str]) -> str | None:
    """Why ``roofguard ARGS`` does not parse (None when it does); nothing is run.

    ``--help`` goes right after the command's name, so an option missing its value is an error
    instead of swallowing ``--help`` and running the command.
    """
    cmd, depth = _cli(), 0
    while (subcommands := getattr(cmd, "commands", None)) is not None:
        if depth == len(args):
            return f"{' '.join(['roofguard', *args])!r} needs a subcommand"
        if args[depth] not in subcommands:
            return f"no such command {' '.join(args[: depth + 1])!r}"
        name = args[depth]
        cmd, depth = subcommands[name], depth + 1
    argv = [*args[:depth], "--help", *args[depth:]]
    result = CliRunner().invoke(_app(), argv, standalone_mode=False)
    if result.exit_code == 0 and "Usage:" in result.output:
        return None
    return str(result.exception) or repr(result.exception)


def test_code_blocks_hold_roofguard_commands() -> None:
    calls = documented_calls()
    assert len(calls) >= 20, calls
    assert any(args[:1] == ["demo"] for _, args in calls)


def test_every_documented_command_parses() -> None:
    failures = []
    for where, args in documented_calls():
        error = parse_error(args)
        if error:
            failures.append(f"{where}: roofguard {shlex.join(args)}: {error}")
    assert not failures, "\n".join(failures)


def test_parse_check_refuses_unknown_commands_and_flags() -> None:
    assert parse_error(["check", "report.csv", "--repo", "a/b"]) is None
    assert parse_error(["db", "upgrade"]) is None
    assert parse_error(["chek", "report.csv"])
    assert parse_error(["check", "report.csv", "--no-such-flag"])
    assert parse_error(["db", "downgrade"])
    assert parse_error(["db"])
    assert parse_error(["check", "report.csv", "--output"])  # a value is missing: not run


def test_readme_keeps_the_test_command() -> None:
    blocks = [code for _, lang, code in shell_blocks(README) if lang in SHELL_LANGS]
    assert any("python -m pytest" in code for code in blocks), "README lost `python -m pytest`"


# ---- the demo's verdict in the README


def fenced_block(path: Path, lang: str) -> list[str]:
    """The lines of the first fenced ``lang`` block of a markdown file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"```{lang}") + 1
    return lines[start : lines.index("```", start)]


def is_beginning(shown: list[str], output: str) -> bool:
    """Whether ``shown`` is the first lines of ``output`` (trailing spaces aside)."""
    lines = [line.rstrip() for line in output.splitlines()]
    return bool(shown) and [line.rstrip() for line in shown] == lines[: len(shown)]


def test_is_beginning_needs_the_first_lines_in_order() -> None:
    assert is_beginning(["a  ", "b"], "a\nb\nc")
    assert not is_beginning(["b"], "a\nb") and not is_beginning(["a", "c"], "a\nb\nc")
    assert not is_beginning([], "a")


@pytest.mark.parametrize(
    ("lang", "golden"), [("text", "demo-verdict.txt"), ("markdown", "demo-verdict.md")]
)
def test_the_readme_shows_the_demos_own_verdict(lang: str, golden: str) -> None:
    # The goldens are what `roofguard demo` prints (tests/service/render/test_time_verdict.py).
    output = (DEMO_GOLDEN / golden).read_text(encoding="utf-8")
    if lang == "markdown":  # its first line is the comment's hidden marker, not shown on GitHub
        output = output.split("\n", 1)[1]
    shown = fenced_block(README, lang)
    assert is_beginning(shown, output), f"README's ```{lang} verdict is not how {golden} begins"


# ---- the Action's inputs and outputs


def _action() -> dict[str, Any]:
    return yaml.safe_load((ACTION_DIR / "action.yml").read_text(encoding="utf-8"))


def test_every_action_input_and_output_is_documented() -> None:
    spec, text = _action(), (ACTION_DIR / "README.md").read_text(encoding="utf-8")
    missing = [name for name in [*spec["inputs"], *spec["outputs"]] if f"`{name}`" not in text]
    assert not missing, f"Action inputs or outputs not in its README.md: {missing}"


def input_table_names(text: str) -> set[str]:
    """The inputs a table's first column names (rows such as ``| `pr`, `sha` | ...``)."""
    rows = [line.split("|")[1] for line in text.splitlines() if line.startswith("| `")]
    return {name for cell in rows for name in re.findall(r"`([\w-]+)`", cell)}


def snippet_inputs(path: Path) -> set[str]:
    """The ``with:`` keys of the workflow snippets' steps that use the roofguard Action."""
    steps = [
        step
        for _, lang, code in shell_blocks(path)
        if lang in YAML_LANGS
        for step in yaml.safe_load(code)
        if "roofguard@" in step.get("uses", "")
    ]
    return {key for step in steps for key in step.get("with", {})}


def test_every_action_input_a_document_uses_exists() -> None:
    named = input_table_names((ACTION_DIR / "README.md").read_text(encoding="utf-8"))
    used = snippet_inputs(README)
    assert len(named) >= 20 and {"reports", "database-url"} <= used, (named, used)
    unknown = sorted((named | used) - set(_action()["inputs"]))
    assert not unknown, f"not inputs of action.yml: {unknown}"
