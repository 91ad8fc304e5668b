"""A history's usual binding and regime, from the index's codes, are what ``usual`` says."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
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


def test_a_kernels_own_history_is_the_merged_one_of_its_name_alone() -> None:
    """The views of a kernel's key group hold every field a merged history has, equal."""
    frame = pd.DataFrame(
        {
            "kernel_key": ["a", "b", "a", "c", "b", "a"],
            "timestamp": [3, 1, 1, 2, 2, 2],
            "percent_of_roof": [1.0, 2.0, 3.0, np.nan, 5.0, 6.0],
            "time_s": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            "total_flops": 7.0,
            "bytes_dram": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
            "binding": "dram",
            "regime": "memory-bound",
        }
    )
    index = HistoryIndex(frame)
    for key in ("a", "b", "c"):
        whole, merged = index.get((key,)), index.get((key, "renamed-away"))
        assert whole.group >= 0 and merged.group == -1
        for field in dataclasses.fields(whole):
            if field.name not in ("group", "labels"):
                assert np.array_equal(
                    getattr(whole, field.name), getattr(merged, field.name), equal_nan=True
                )
        assert np.array_equal(whole.dram_intensity(), merged.dram_intensity(), equal_nan=True)
        assert whole.usual_binding == merged.usual_binding
    assert index.get(("a",)).percent_of_roof.tolist() == [3.0, 6.0, 1.0]  # oldest first


def test_a_label_the_newest_two_runs_agree_on_is_the_usual_one() -> None:
    """Main broke a fusion two nights ago and kept it: its regime is memory-bound now."""
    regimes = ["compute-bound"] * 7 + ["memory-bound"] * 2
    frame = pd.DataFrame(
        {"kernel_key": "mlp", "timestamp": range(9), "binding": "dram", "regime": regimes}
    ).assign(percent_of_roof=1.0, time_s=1.0, total_flops=1.0, bytes_dram=1.0)
    history = HistoryIndex(frame).get(("mlp",))
    assert history.usual_regime == ("memory-bound", 2)
    one_night = HistoryIndex(frame.iloc[:8]).get(("mlp",))
    assert one_night.usual_regime == ("compute-bound", 7)  # one night is not kept yet
