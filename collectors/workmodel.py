"""Declared work models: FLOPs and bytes as arithmetic over a benchmark's parameters.

Most microbenchmarks time a kernel without counting its work, but their authors know it
(a GEMM of M, N, K does ``2*M*N*K`` FLOPs). A work model declares, per benchmark name
pattern, FLOPs per precision and bytes per tier as expressions. Expressions are parsed with
``ast`` and evaluated by walking an explicit whitelist (numbers, names, ``+ - * / **``,
unary minus, parentheses, ``min``/``max``); nothing is ever passed to ``eval``. Size,
nesting, exponents and magnitudes are bounded so hostile input is refused quickly.
"""

from __future__ import annotations

import ast
import fnmatch
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from collectors.errors import MalformedReport
from collectors.physics import kernel_fault
from collectors.schema import KernelRecord, Precision, Provenance, ProvenanceKind, RunRecord, Tier

#: Longest expression accepted, in characters.
MAX_EXPRESSION_LENGTH = 500
#: Deepest expression tree accepted (a GEMM's byte model needs about 6).
MAX_DEPTH = 32
#: Largest absolute exponent of ``**``.
MAX_EXPONENT = 64.0
#: Largest absolute literal and (intermediate) result: far above any real FLOP or byte count.
MAX_MAGNITUDE = 1e30

_FUNCTIONS: dict[str, Callable[..., float]] = {"min": min, "max": max}
_IDENT_UNSAFE = re.compile(r"\W")


class ExpressionError(ValueError):
    """An expression that is not allowed, or that cannot be evaluated."""


def _pow(base: float, exponent: float) -> float:
    if abs(exponent) > MAX_EXPONENT:
        raise ExpressionError(f"exponent {exponent:g} is larger than {MAX_EXPONENT:g}")
    if base == 0 and exponent < 0:
        raise ExpressionError("division by zero (0 raised to a negative power)")
    if base < 0 and not float(exponent).is_integer():
        raise ExpressionError("a negative number raised to a fractional power")
    try:
        return math.pow(base, exponent)
    except OverflowError as exc:
        raise ExpressionError(f"result larger than {MAX_MAGNITUDE:g}") from exc


def _div(left: float, right: float) -> float:
    if right == 0:
        raise ExpressionError("division by zero")
    return left / right


_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: _div,
    ast.Pow: _pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _check_node(node: ast.AST, depth: int) -> None:
    """Refuse every node outside the whitelist (recursively, with a depth bound)."""
    if depth > MAX_DEPTH:
        raise ExpressionError(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(node, ast.Constant):
        _check_constant(node.value)
    elif isinstance(node, ast.Name):
        if node.id in _FUNCTIONS:
            raise ExpressionError(f"{node.id} is a function; call it as {node.id}(a, b)")
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        _check_node(node.left, depth + 1)
        _check_node(node.right, depth + 1)
    elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        _check_node(node.operand, depth + 1)
    elif isinstance(node, ast.Call):
        _check_call(node, depth)
    else:
        raise ExpressionError(f"not allowed: {_describe(node)}")


def _check_constant(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ExpressionError(f"literal {value!r} is not allowed (numbers only)")
    if not abs(value) <= MAX_MAGNITUDE:  # also catches NaN
        raise ExpressionError(f"literal larger than {MAX_MAGNITUDE:g}")


def _check_call(node: ast.Call, depth: int) -> None:
    if not (isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS):
        raise ExpressionError("only min(...) and max(...) may be called")
    if node.keywords or len(node.args) < 2:
        raise ExpressionError(f"{node.func.id}() takes two or more plain arguments")
    for arg in node.args:
        _check_node(arg, depth + 1)


def _describe(node: ast.AST) -> str:
    names = {
        ast.Attribute: "attribute access",
        ast.Subscript: "subscripts",
        ast.Lambda: "lambda",
        ast.ListComp: "comprehensions",
        ast.GeneratorExp: "comprehensions",
        ast.SetComp: "comprehensions",
        ast.DictComp: "comprehensions",
        ast.Compare: "comparisons",
        ast.BoolOp: "and/or",
        ast.IfExp: "if-expressions",
    }
    for kind, text in names.items():
        if isinstance(node, kind):
            return text
    if isinstance(node, ast.BinOp | ast.UnaryOp):
        return f"operator {type(node.op).__name__}"
    return type(node).__name__


@dataclass(frozen=True)
class Expression:
    """A checked expression, ready to evaluate.

    Attributes:
        text: The expression as written.
        tree: Its checked syntax tree.
        names: The parameter or counter names it uses.
    """

    text: str
    tree: ast.expr
    names: frozenset[str]

    def evaluate(self, values: Mapping[str, float]) -> float:
        """The value of the expression with ``values`` for its names.

        Raises:
            ExpressionError: A name has no value, a division by zero, or a bound is exceeded.
        """
        unknown = sorted(self.names - values.keys())
        if unknown:
            known = ", ".join(sorted(values)) or "none"
            raise ExpressionError(f"unknown parameter {unknown[0]!r} (known: {known})")
        return _evaluate(self.tree, values)


def _bounded(value: float) -> float:
    if not abs(value) <= MAX_MAGNITUDE:
        raise ExpressionError(f"result larger than {MAX_MAGNITUDE:g}")
    return value


def _evaluate(node: ast.expr, values: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)  # type: ignore[arg-type]  # checked numeric at compile
    if isinstance(node, ast.Name):
        return _bounded(float(values[node.id]))
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, values), _evaluate(node.right, values)
        return _bounded(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, values))
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)  # checked at compile
    return _FUNCTIONS[node.func.id](*(_evaluate(arg, values) for arg in node.args))


def compile_expression(text: str) -> Expression:
    """Parse and check ``text`` against the whitelist.

    Raises:
        ExpressionError: Too long, not valid syntax, too deep, or a construct outside the
            whitelist (attribute access, subscripts, strings, calls other than min/max ...).
    """
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise ExpressionError(f"longer than {MAX_EXPRESSION_LENGTH} characters")
    if not text.strip():
        raise ExpressionError("empty expression")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
        reason = exc.msg if isinstance(exc, SyntaxError) else "too complex"
        raise ExpressionError(f"not a valid expression: {reason}") from None
    _check_node(tree, 0)
    names = frozenset(
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in _FUNCTIONS
    )
    return Expression(text, tree, names)


def evaluate(text: str, values: Mapping[str, float]) -> float:
    """Compile and evaluate ``text`` in one step (see ``compile_expression``)."""
    return compile_expression(text).evaluate(values)


def identifier(name: str) -> str:
    """A parameter name usable in expressions: ``"Num Threads"`` -> ``Num_Threads``."""
    safe = _IDENT_UNSAFE.sub("_", name.strip())
    return f"_{safe}" if safe[:1].isdigit() else safe


def _check_expressions(exprs: dict[Any, str]) -> dict[Any, str]:
    for key, text in exprs.items():
        try:
            compile_expression(text)
        except ExpressionError as exc:
            raise ValueError(f"{key}: expression {text!r}: {exc}") from None
    return exprs


class WorkModel(BaseModel):
    """The declared work of the benchmarks whose name or key matches ``pattern``.

    Attributes:
        pattern: A glob (``fnmatch``, case-sensitive) on the benchmark name or identity key,
            e.g. ``"BM_gemm*"``.
        flops: FLOPs per precision, e.g. ``{"tensor_bf16": "2*M*N*K"}``.
        bytes: Bytes per memory tier, e.g. ``{"dram": "2*(M*K + K*N + M*N)"}``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    pattern: str = Field(min_length=1)
    flops: dict[Precision, str] = Field(default_factory=dict)
    bytes: dict[Tier, str] = Field(default_factory=dict)

    _check_flops = field_validator("flops")(_check_expressions)
    _check_bytes = field_validator("bytes")(_check_expressions)

    def matches(self, kernel: KernelRecord) -> bool:
        """Whether this model applies to ``kernel`` (by name or identity key)."""
        return fnmatch.fnmatchcase(kernel.name, self.pattern) or fnmatch.fnmatchcase(
            kernel.key, self.pattern
        )


def kernel_values(kernel: KernelRecord) -> dict[str, float]:
    """The names an expression may use for ``kernel``: numeric params, then counters.

    Each name is also offered as an identifier (spaces and punctuation become ``_``).
    """
    values: dict[str, float] = {}
    for source in (kernel.params, kernel.counters):
        for name, value in source.items():
            number = _as_number(value)
            if number is not None:
                values.setdefault(name, number)
                values.setdefault(identifier(name), number)
    return values


def _as_number(value: str | float) -> float | None:
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value)
    except ValueError:
        return None


def _declare(kernel: KernelRecord, model: WorkModel, index: int, source: str) -> KernelRecord:
    values = kernel_values(kernel)
    declared: dict[str, dict[str, float]] = {"flops": {}, "bytes": {}}
    provenance = dict(kernel.provenance)
    for what, exprs in (("flops", model.flops), ("bytes", model.bytes)):
        for slot, text in exprs.items():
            field = f"work_models[{index}].{what}.{slot}"
            declared[what][slot] = _value(text, values, source, kernel, field)
            provenance[f"declared_{what}.{slot}"] = Provenance(
                kind=ProvenanceKind.DECLARED,
                metrics=tuple(sorted(compile_expression(text).names)),
                note=f"{source}: {field} (pattern {model.pattern!r}) = {text}",
            )
    declaring = kernel.model_copy(
        update={
            "declared_flops": {**kernel.declared_flops, **declared["flops"]},
            "declared_bytes": {**kernel.declared_bytes, **declared["bytes"]},
            "provenance": provenance,
        }
    )
    _check_rates(declaring, model, index, source)
    return declaring


def _check_rates(kernel: KernelRecord, model: WorkModel, index: int, source: str) -> None:
    """Refuse declared work no device could do in the kernel's time, naming the model's field.

    ``check`` refused it later naming the report (``kernels.0.declared_flops``), and
    ``inspect`` drew it 10^13 times above the roof.
    """
    fault = kernel_fault(kernel)
    if fault is None or not fault[0].startswith("declared_"):
        return
    what, _, slot = fault[0].removeprefix("declared_").partition(".")
    text = (model.flops if what == "flops" else model.bytes)[slot]
    raise MalformedReport(
        source,
        kernel.key,
        f"work_models[{index}].{what}.{slot}",
        f"expression {text!r} for benchmark {kernel.key!r}: {fault[1]}",
    )


def _value(
    text: str, values: Mapping[str, float], source: str, kernel: KernelRecord, field: str
) -> float:
    try:
        result = compile_expression(text).evaluate(values)
    except ExpressionError as exc:
        raise MalformedReport(
            source, kernel.key, field, f"expression {text!r} for benchmark {kernel.key!r}: {exc}"
        ) from None
    if result < 0:
        raise MalformedReport(
            source,
            kernel.key,
            field,
            f"expression {text!r} for benchmark {kernel.key!r} is negative ({result:g})",
        )
    return result


def apply_work_models(run: RunRecord, models: Sequence[WorkModel], source: str) -> RunRecord:
    """Fill ``declared_flops``/``declared_bytes`` of every kernel a model matches.

    The first matching model wins (list specific patterns first). Measured ``flops`` and
    ``bytes`` are left as they are, so a record can carry both.

    Args:
        run: The run as a collector produced it.
        models: The work models, in the order they were declared.
        source: Where the models came from (a config path), named in errors and provenance.

    Raises:
        MalformedReport: An expression names an unknown parameter, divides by zero or is
            negative; names ``source``, the benchmark and the ``work_models[i]`` field.
    """
    kernels = []
    for kernel in run.kernels:
        index = next((i for i, m in enumerate(models) if m.matches(kernel)), None)
        if index is not None:
            kernel = _declare(kernel, models[index], index, source)
        kernels.append(kernel)
    return run.model_copy(update={"kernels": tuple(kernels)})
