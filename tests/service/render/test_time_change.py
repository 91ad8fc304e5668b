"""A kernel's time change reads in units that keep both times (``figures.time_change``).

A 20,000-kernel verdict read ``7.19 → 0.00 ms (0.00×)`` for a kernel now at 4 µs: the
smaller time in the larger one's unit, and the ratio, both lost to two decimals.
"""

from __future__ import annotations

from service.render.figures import fmt_ratio, time_change


def test_times_far_apart_each_get_their_own_unit() -> None:
    assert time_change(4.0e-6, 7.19e-3) == "7.19 ms → 4.00 µs (0.00056×)"
    assert time_change(7.19e-3, 4.0e-6) == "4.00 µs → 7.19 ms (1797.5×)"


def test_times_of_one_scale_share_a_unit() -> None:
    assert time_change(5.10e-3, 0.338e-3) == "0.34 → 5.10 ms (15.1×)"
    assert time_change(0.98e-3, 1.0e-3) == "1.00 → 0.98 ms (0.98×)"


def test_small_ratios_keep_two_significant_digits() -> None:
    assert fmt_ratio(0.0123) == "0.01×" and fmt_ratio(0.00123) == "0.0012×"
