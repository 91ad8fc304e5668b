"""A time ratio in words: one that rounds to 1 is the same speed, not "1.00× slower".

A kernel that did not keep up with a new card read "expected 1.64× faster on H100-SXM5,
measured 1.00× slower" for a time ratio of 1.0007.
"""

from __future__ import annotations

import pytest

from rules.measures import speed


@pytest.mark.parametrize(
    ("ratio", "digits", "words"),
    [
        (0.61, 2, "1.64× faster"),
        (1.2, 2, "1.20× slower"),
        (1.0007, 2, "the same speed, 1.00×"),
        (0.9996, 2, "the same speed, 1.00×"),
        (1.04, 1, "the same speed, 1.0×"),
        (1.06, 1, "1.1× slower"),
    ],
)
def test_speed_in_words(ratio: float, digits: int, words: str) -> None:
    assert speed(ratio, digits) == words
