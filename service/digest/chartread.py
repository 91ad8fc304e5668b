"""The rows the digest's HTML charts draw, from the compact history: a few series, last nights.

The trend charts draw the listed kernels' series and the rooflines each card's last night and
the regressed kernels' nights before their change, with their work counters. Before, the HTML
read the whole history with every column for them (``nightly_history``: about 5 KB a
measurement); here those rows are taken from the compact history (``compact_history`` with its
ids), in its order, and only their counters are read. Each listed series keeps all its rows, so
its reference binding (the chart's axis label) is the one the full history gives it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from rules import series_references
from service.digest.devices import nanoseconds
from service.digest.model import Digest
from service.store.digestread import run_work
from service.store.sessions import StoreSession

_STRINGS = ("commit", "kernel_key", "kernel_name", "device", "regime", "binding")


def _listed_rows(frame: pd.DataFrame, digest: Digest) -> npt.NDArray[np.bool_]:
    """Rows of every (kernel, device) series the digest lists, time regressions included."""
    sections = (digest.regressions, digest.improvements, digest.unresolved, digest.time_regressions)
    pairs = {(m.kernel, m.device) for section in sections for m in section}
    if not pairs:
        return np.zeros(len(frame), dtype=bool)
    index = pd.MultiIndex.from_arrays([frame["kernel_key"], frame["device"]])
    return np.asarray(index.isin(list(pairs)), dtype=bool)


def _last_nights(frame: pd.DataFrame, digest: Digest) -> npt.NDArray[np.bool_]:
    """Each card's rows at its last timestamp up to the period's end (its last night)."""
    stamps = nanoseconds(frame["timestamp"])
    codes = np.asarray(pd.factorize(frame["device"])[0], dtype=np.intp)
    upto = (stamps <= pd.Timestamp(digest.end).value) & (codes >= 0)
    last = pd.Series(stamps[upto]).groupby(codes[upto]).max()
    latest = np.full(int(codes.max()) + 2 if len(codes) else 1, np.iinfo(np.int64).min)
    latest[last.index.to_numpy()] = last.to_numpy()
    found: npt.NDArray[np.bool_] = upto & (stamps == latest[codes])
    return found


def chart_history(session: StoreSession, frame: pd.DataFrame, digest: Digest) -> pd.DataFrame:
    """The rows ``service.render.digest_charts`` draws for ``digest``, with their columns.

    Args:
        session: An open session on the store.
        frame: The compact history with its ids (``compact_history(..., with_ids=True)``).
        digest: The digest built from it.
    """
    rows = np.flatnonzero(_listed_rows(frame, digest) | _last_nights(frame, digest))
    run_id = frame["run_id"].to_numpy()[rows]
    chart = pd.DataFrame(
        {
            **{c: frame[c].array.take(rows).astype(object) for c in _STRINGS},
            "timestamp": frame["timestamp"].array.take(rows),
            "kind": "nightly",
            "run_id": run_id,
            "percent_of_roof": frame["percent_of_roof"].to_numpy()[rows],
            "time_s": frame["time_s"].to_numpy()[rows],
            **run_work(session, run_id, frame["kernel_id"].to_numpy()[rows]),
        }
    )
    return chart.assign(reference_binding=series_references(chart))
