"""How fast the work-model evaluator refuses hostile input, next to a normal evaluation.

Run with ``python -m pytest tests/bench/bench_workmodel.py --benchmark-only``: the normal test
run passes ``--benchmark-skip``, which ``--benchmark-enable`` does not lift. The refusals should
cost about as much as evaluating a GEMM model: bounds are checked before any large number is
built.
"""

from __future__ import annotations

import pytest

from collectors.workmodel import ExpressionError, evaluate

VALUES = {"M": 4096.0, "N": 4096.0, "K": 4096.0}
HOSTILE = {
    "tower": "9**9**9",
    "parens": "(" * 1000 + "1" + ")" * 1000,
    "attribute": "().__class__.__mro__",
    "huge-literal": "9" * 400,
}


def test_reference_gemm_model(benchmark):
    assert benchmark(evaluate, "2*(M*K + K*N + M*N)", VALUES) > 0


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_refusal(benchmark, name):
    def refuse() -> None:
        with pytest.raises(ExpressionError):
            evaluate(HOSTILE[name], VALUES)

    benchmark(refuse)
