"""Every row of a digest section has its trend, however many rows the section lists.

A runner swap moved 30 kernels at once. Only the first 20 rows of each section got a
sparkline, so the table of new regressions showed trends, then "–" between them for the rows
another section (unresolved, oldest first) did not list among its first 20.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from rules.frames import HISTORY_COLUMNS
from service.digest.build import build_digest

FIRST_NIGHT = datetime(2026, 11, 1, 2, tzinfo=UTC)
KERNELS = 30
NIGHTS = 16


def _row(kernel: int, night: int, pct: float) -> dict[str, object]:
    return {
        "run_id": night + 1,
        "commit": f"{night:040x}",
        "timestamp": FIRST_NIGHT + timedelta(days=night),
        "kind": "nightly",
        "kernel_key": f"k{kernel:02d}",
        "kernel_name": f"k{kernel:02d}",
        "device": "A100-SXM4-80GB",
        "roof_source": "datasheet",
        "percent_of_roof": pct,
        "regime": "memory-bound",
        "binding": "dram",
        "time_s": 2e8 / (2.039e12 * pct / 100),
        "total_flops": 2.5e7,
        "bytes_dram": 2e8,
        "bytes_l2": np.nan,
        "bytes_l1": np.nan,
        "driver": "560.35",
        "clock_control": "base",
        "cache_control": "all",
        "trusted": True,
    }


def _swapped_runner() -> pd.DataFrame:
    """30 kernels whose nights from the 14th on are 7% lower (the new runner's)."""
    rng = np.random.default_rng(3)
    rows = [
        _row(k, night, (20 + 2 * k) * (0.93 if night >= 13 else 1) * (1 + 0.003 * rng.normal()))
        for k in range(KERNELS)
        for night in range(NIGHTS)
    ]
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))


def test_every_listed_row_has_its_sparkline() -> None:
    end = FIRST_NIGHT + timedelta(days=NIGHTS - 1, hours=1)
    digest = build_digest(_swapped_runner(), start=end - timedelta(days=7), end=end)
    assert len(digest.regressions) == KERNELS
    sections = (digest.regressions, digest.unresolved)
    assert all(len(m.sparkline) > 1 for section in sections for m in section)
