"""A history's usual binding and regime, from the index's codes, are what ``usual`` says."""

from __future__ import annotations

import random

import pandas as pd

from rules.history import HistoryIndex
from rules.timing import usual


def test_the_usual_label_from_codes_is_the_counters() -> None:
    rng = random.Random(3)
    choices = ["dram", "tensor_bf16", "fp32", "", None]
    rows = []
    for kernel in range(300):
        n = rng.choice([0, 1, 2, 5, 9])
        labels = [rng.choice(choices[: rng.choice([2, 3, 5])]) for _ in range(n)]
        rows += [
            {"kernel_key": f"k{kernel}", "timestamp": t, "binding": b, "regime": b}
            for t, b in enumerate(labels)
        ]
    frame = pd.DataFrame(rows).assign(
        percent_of_roof=1.0, time_s=1.0, total_flops=1.0, bytes_dram=1.0
    )
    index = HistoryIndex(frame)
    ties = 0
    for key in list(index.keys()):
        history = index.get((key,))
        assert history.usual_binding == usual(history.binding)
        assert history.usual_regime == usual(history.regime)
        counts = pd.Series([b for b in history.binding if b]).value_counts()
        ties += len(counts) > 1 and counts.iloc[0] == counts.iloc[1]
    assert ties >= 10  # the latest of tied labels is exercised
