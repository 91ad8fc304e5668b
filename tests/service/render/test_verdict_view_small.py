"""Figures of kernels far below the roof read as numbers, not as 0.0; a group its target gap."""

from __future__ import annotations

import pytest

from rules import BaselineSummary, one_decimal
from service.render.verdict_view import baseline_text, change_text, fmt_pct, target_text


@pytest.mark.parametrize(
    ("value", "sign", "text"),
    [
        (71.44, False, "71.4"),
        (0.186, False, "0.2"),
        (0.0431, False, "0.043"),
        (-0.0431, True, "-0.043"),
        (0.0031, True, "+0.0031"),
        (0.0, True, "+0.0"),
        (0.00001, False, "0.0"),  # below 1e-4: not worth the digits
    ],
)
def test_one_decimal_keeps_two_digits_where_one_decimal_reads_zero(value, sign, text) -> None:
    assert one_decimal(value, sign=sign) == text


def test_a_launch_bound_kernel_s_drop_reads_in_points_not_as_zero() -> None:
    """0.186% -> 0.143% of roof: the comment said "−0.0 pts" and "±0.0"."""
    base = BaselineSummary(n=5, center=0.186, spread=0.0031, relative_change=-0.2306)
    assert change_text(base, 0.143) == "−0.043 pts (−23.1%)"
    assert baseline_text(base) == "0.2% ±0.0031 (n=5)"
    assert fmt_pct(0.043) == "0.043%"


@pytest.mark.parametrize(
    ("target", "now", "text"),
    [
        (65.0, 4.8, "65.0% (60.2 pts below)"),
        (80.0, 79.97, "80.0% (0.03 pts below)"),
        (80.0, 80.0, "80.0%"),  # at the target: met
        (80.0, 86.3, "80.0%"),
        (None, 50.0, "—"),
        (80.0, None, "80.0%"),  # no percent of roof (a group of time records)
        (80.0, float("nan"), "80.0%"),
    ],
)
def test_a_group_below_its_target_says_by_how_much(target, now, text) -> None:
    assert target_text(target, now) == text
