"""The declared-work evaluator (whitelist, bounds, hostile input) and apply_work_models."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from collectors import collect
from collectors.errors import MalformedReport
from collectors.workmodel import (
    ExpressionError,
    WorkModel,
    apply_work_models,
    compile_expression,
    evaluate,
    identifier,
)
from rules.hardware import builtin_catalog
from rules.placement import place_kernel

DATA = Path(__file__).parent / "data" / "micro"
GEMM = WorkModel(
    pattern="BM_gemm*",
    flops={"tensor_bf16": "2*arg0*arg1*arg2"},
    bytes={"dram": "2*(arg0*arg2 + arg2*arg1 + arg0*arg1)"},
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2*M*N*K", 2 * 1024 * 512 * 64),
        ("2*(M*K + K*N + M*N)", 2 * (1024 * 64 + 64 * 512 + 1024 * 512)),
        ("M / 4 - -K", 1024 / 4 + 64),
        ("2**10 + +1", 1025),
        ("max(M, N, K) - min(M, 2*N)", 0),
        ("1.5e3 * K", 96000),
        ("((((M))))", 1024),
    ],
)
def test_evaluates_arithmetic(text, expected):
    assert evaluate(text, {"M": 1024, "N": 512, "K": 64}) == pytest.approx(expected)


HOSTILE = {
    "attribute": "().__class__",
    "dunder-call": "__import__('os').system('true')",
    "tower": "9**9**9",
    "big-exponent": "2**100000",
    "huge-result": "10**20 * 10**20",
    "parens-1000": "(" * 1000 + "1" + ")" * 1000,
    "unary-depth": "-" * 200 + "1",
    "huge-literal": "9" * 400,
    "float-literal": "1e999",
    "subscript": "M[0]",
    "lambda": "lambda: 1",
    "comprehension": "[M for M in N]",
    "string": "'abc'",
    "bool": "True",
    "complex": "1j",
    "compare": "M < N",
    "if-expression": "M if N else K",
    "other-call": "abs(M)",
    "min-one-arg": "min(M)",
    "min-keywords": "min(M, N, key=K)",
    "bare-function": "max",
    "walrus": "(x := 1)",
    "bitwise": "M ^ N",
    "floor-division": "M // N",
    "empty": "   ",
    "too-long": "1+" * 300 + "1",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_expressions_are_refused(name):
    with pytest.raises(ExpressionError):
        evaluate(HOSTILE[name], {"M": 2.0, "N": 3.0, "K": 4.0})


def test_division_by_zero_and_unknown_names_are_explained():
    with pytest.raises(ExpressionError, match="division by zero"):
        evaluate("M / (N - 3)", {"M": 1.0, "N": 3.0})
    with pytest.raises(ExpressionError, match=r"unknown parameter 'Q' \(known: M, N\)"):
        evaluate("M * Q", {"M": 1.0, "N": 3.0})


def test_compile_lists_names_without_functions():
    assert compile_expression("max(M, N) * K").names == frozenset({"M", "N", "K"})


def test_identifier_for_axis_names_with_spaces():
    assert identifier("Num Threads") == "Num_Threads"
    assert identifier("Elem/s") == "Elem_s"
    assert identifier("2x") == "_2x"


# A safe arithmetic expression and the value Python gives it.
_names = {"a": 3.0, "b": 7.0, "c": 0.5}
_leaf = st.one_of(st.integers(0, 1000).map(str), st.sampled_from(sorted(_names)))


def _combine(children):
    binary = st.tuples(children, st.sampled_from(["+", "-", "*"]), children).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"
    )
    divided = st.tuples(children, st.integers(1, 50)).map(lambda t: f"({t[0]} / {t[1]})")
    calls = st.tuples(st.sampled_from(["min", "max"]), children, children).map(
        lambda t: f"{t[0]}({t[1]}, {t[2]})"
    )
    negated = children.map(lambda c: f"-{c}")
    return st.one_of(binary, divided, calls, negated)


@settings(max_examples=200, deadline=None)
@given(st.recursive(_leaf, _combine, max_leaves=12))
def test_matches_python_arithmetic_on_safe_input(text):
    expected = eval(text, {"__builtins__": {}, "min": min, "max": max}, dict(_names))
    assert evaluate(text, _names) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_work_model_refuses_bad_expressions_when_declared():
    with pytest.raises(ValidationError, match=r"tensor_bf16: expression 'M\.real'"):
        WorkModel(pattern="*", flops={"tensor_bf16": "M.real"})
    with pytest.raises(ValidationError):
        WorkModel(pattern="*", flops={"fp33": "1"})


def test_declared_work_places_plain_timing_benchmarks_on_the_roofline():
    run = collect(DATA / "gbench_gemm_gpu.json")
    gemm_before = run.kernel("BM_gemm[arg0=4096,arg1=4096,arg2=4096]")
    assert not gemm_before.flops and not gemm_before.declared_flops
    declared = apply_work_models(run, [GEMM], "roofguard.toml")
    gemm = declared.kernel(gemm_before.key)
    assert gemm.declared_flops == {"tensor_bf16": 2 * 4096**3}
    assert gemm.declared_bytes == {"dram": 2 * 3 * 4096**2}
    assert gemm.provenance["declared_flops.tensor_bf16"].kind == "declared"
    assert "roofguard.toml: work_models[0].flops.tensor_bf16" in (
        gemm.provenance["declared_flops.tensor_bf16"].note
    )
    roof = builtin_catalog().lookup(declared.device.name).roof()
    placed = place_kernel(gemm, roof)
    assert placed.regime == "compute-bound"
    t_compute = 2 * 4096**3 / roof.peak_flop_per_s["tensor_bf16"]
    assert placed.percent_of_roof == pytest.approx(100 * t_compute / 0.0002291)


def test_declared_work_no_device_could_do_is_refused_naming_the_model():
    """``check`` refused it later naming the report's ``kernels.0.declared_flops``, and
    ``inspect`` drew it 10^13 times above the roof."""
    huge = WorkModel(pattern="BM_gemm*", flops={"tensor_bf16": "2*arg0*arg1*arg2*1e15"})
    with pytest.raises(MalformedReport) as refused:
        apply_work_models(collect(DATA / "gbench_gemm_gpu.json"), [huge], "r.toml")
    text = str(refused.value)
    assert "r.toml" in text and "work_models[0].flops.tensor_bf16" in text
    assert "1.37e+26 FLOP in 0.000229 s" in text and "no device comes near 1e+18 FLOP/s" in text


def test_measured_counts_stay_next_to_declared_ones():
    run = collect(DATA / "gbench_gemm_gpu.json")
    model = WorkModel(pattern="BM_rmsnorm*", flops={"fp32": "4*M*N"}, bytes={"dram": "2*M*N*2"})
    norm = apply_work_models(run, [model], "cfg").kernel("BM_rmsnorm[M=8192,N=8192]")
    assert norm.bytes["dram"] == pytest.approx(3.033e12 * 88.5e-6)  # SetBytesProcessed
    assert norm.declared_bytes == {"dram": 4 * 8192 * 8192}
    assert norm.declared_flops == {"fp32": 4 * 8192 * 8192}
    assert norm.work() == ({"fp32": 4 * 8192 * 8192}, {"dram": norm.bytes["dram"]})


def test_counters_and_axis_names_with_spaces_are_parameters(corpus_dir):
    run = collect(corpus_dir / "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.csv")
    model = WorkModel(pattern="Image to Grayscale*", flops={"fp32": "5 * Num_Elements / 3"})
    declared = apply_work_models(run, [model], "cfg")
    first = declared.kernels[0]
    assert first.declared_flops == {"fp32": pytest.approx(5 * 12 / 3)}
    assert first.bytes == {"dram": 16.0}  # measured bytes untouched


def test_first_matching_model_wins():
    run = collect(DATA / "gbench_gemm_gpu.json")
    first = WorkModel(pattern="BM_gemm*", flops={"fp32": "1"})
    declared = apply_work_models(run, [first, GEMM], "cfg")
    assert declared.kernel("BM_gemm[arg0=4096,arg1=4096,arg2=4096]").declared_flops == {"fp32": 1}


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("M * Q", "unknown parameter 'Q'"),
        ("M / (N - N)", "division by zero"),
        ("0 - M", "is negative"),
    ],
)
def test_bad_declarations_name_source_benchmark_and_field(expression, reason):
    run = collect(DATA / "gbench_gemm_gpu.json")
    model = WorkModel(pattern="BM_rmsnorm*", bytes={"dram": expression})
    with pytest.raises(MalformedReport) as err:
        apply_work_models(run, [model], "roofguard.toml")
    assert err.value.path == "roofguard.toml"
    assert err.value.row == "BM_rmsnorm[M=8192,N=8192]"
    assert err.value.field == "work_models[0].bytes.dram"
    assert reason in str(err.value) and expression in str(err.value)
