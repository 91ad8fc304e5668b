"""Kernels the configuration ignores, left out of the digest as they are of every check.

``rules.ignore_kernels`` promises "not judged, not listed": a warm-up or a memset a team
ignores was still listed by the digest as a regression, below its target or mislabelled.
The patterns are matched once per distinct key and name, not per row (29 M rows hold a few
thousand kernels).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rules import is_ignored


def _matching(values: pd.Series, patterns: Sequence[str]) -> list[object]:
    """The distinct ``values`` any of ``patterns`` matches."""
    distinct = values.cat.categories if isinstance(values.dtype, pd.CategoricalDtype) else values
    return [v for v in pd.unique(distinct) if is_ignored(str(v), patterns)]


def without_ignored(frame: pd.DataFrame, patterns: Sequence[str]) -> pd.DataFrame:
    """``frame``'s rows but those of kernels whose key or name one of ``patterns`` matches."""
    if not patterns or frame.empty:
        return frame
    ignored = pd.Series(False, index=frame.index)
    for column in ("kernel_key", "kernel_name"):
        if column in frame:
            ignored |= frame[column].isin(_matching(frame[column], patterns))
    if not ignored.any():
        return frame
    return frame[~ignored.to_numpy()].reset_index(drop=True)
