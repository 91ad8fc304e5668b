"""The size budgets ruff has no rule for: functions ≤ 40 lines, modules ≤ 400 lines.

ruff holds the others (C901 complexity ≤ 10, PLR0911/0912/0913/0915: returns, branches, args,
statements). A function's lines run from its ``def`` to its last line, without its docstring;
for a typer command (``*_command`` in ``service/cli/*_cmd.py``) and a FastAPI route
(``@router.<method>`` in ``service/api/routes/``) the signature is left out too, since its
parameters are the command's flags and the route's dependencies. There is no allowlist: the
restructuring split everything that was over, so a new over-budget function fails at once.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("collectors", "rules", "service")
EXCLUDED = ("service/store/migrations",)
MAX_FUNCTION_LINES = 40
MAX_MODULE_LINES = 400


@dataclass(frozen=True)
class Size:
    """A module or function and its length as the budget counts it."""

    name: str
    lines: int
    limit: int


def _modules() -> list[Path]:
    files = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]
    return [p for p in files if not p.relative_to(ROOT).as_posix().startswith(EXCLUDED)]


def _docstring_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    first = node.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return (first.end_lineno or first.lineno) - first.lineno + 1
    return 0


def _is_route(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    calls = [d.func if isinstance(d, ast.Call) else d for d in node.decorator_list]
    return any(
        isinstance(c, ast.Attribute) and isinstance(c.value, ast.Name) and c.value.id == "router"
        for c in calls
    )


def _signature_excluded(path: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    command = path.startswith("service/cli/") and path.endswith("_cmd.py")
    if command and node.name.endswith("_command"):
        return True
    return path.startswith("service/api/routes/") and _is_route(node)


def function_lines(path: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of ``node`` as the budget counts them (see the module docstring)."""
    end = node.end_lineno or node.lineno
    start = node.body[0].lineno if _signature_excluded(path, node) else node.lineno
    return end - start + 1 - _docstring_lines(node)


def _functions(path: str, tree: ast.Module) -> list[Size]:
    sizes: list[Size] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                lines = function_lines(path, child)
                sizes.append(Size(f"{path}::{name}", lines, MAX_FUNCTION_LINES))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return sizes


def sizes() -> list[Size]:
    """Every module and function of the three packages with its budget."""
    found: list[Size] = []
    for file in _modules():
        path = file.relative_to(ROOT).as_posix()
        text = file.read_text(encoding="utf-8")
        found.append(Size(path, len(text.splitlines()), MAX_MODULE_LINES))
        found.extend(_functions(path, ast.parse(text, filename=path)))
    return found


SIZES = {s.name: s for s in sizes()}


def test_everything_fits_its_budget():
    over = [f"{s.name}: {s.lines} lines > {s.limit}" for s in SIZES.values() if s.lines > s.limit]
    assert not over, "over budget (split it):\n" + "\n".join(over)


def _lines_of(source: str, path: str = "service/x.py") -> dict[str, int]:
    tree = ast.parse(source)
    return {s.name.split("::")[1]: s.lines for s in _functions(path, tree)}


def test_the_count_leaves_out_docstrings_and_command_signatures():
    source = '''
def plain(
    a,
    b,
):
    """Doc
    string."""
    return a + b


@router.get("/x")
def route(
    a,
    b,
):
    """Doc."""
    x = a
    return x
'''
    assert _lines_of(source) == {"plain": 5, "route": 6}
    assert _lines_of(source, "service/api/routes/r.py") == {"plain": 5, "route": 2}
    command = (
        "def go_command(\n    a,\n):\n    return a\n\n\ndef helper(\n    a,\n):\n    return a\n"
    )
    assert _lines_of(command, "service/cli/go_cmd.py") == {"go_command": 1, "helper": 4}
