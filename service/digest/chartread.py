"""The rows the digest's HTML charts draw, from the compact history: a few series, last nights.

The trend charts draw the listed kernels' series and the rooflines each card's last night and
the regressed kernels' nights before their change, with their work counters. Before, the HTML
read the whole history with every column for them (``nightly_history``: about 5 KB a
measurement); here those rows are taken from the compact history (``compact_history`` with its
ids), in its order, and only their counters and runners are read. Each listed series keeps all
its rows, so its reference binding (the chart's axis label) is the one the full history gives
it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from rules import series_references
from service.digest.devices import nanoseconds, trusted_of
from service.digest.model import Digest
from service.digest.tables import category_codes
from service.store.queries import runners_of
from service.store.sessions import StoreSession
from service.store.workread import pair_work

_STRINGS = ("commit", "kernel_key", "kernel_name", "device", "regime", "binding")


def _listed_rows(frame: pd.DataFrame, digest: Digest, limit: int | None) -> npt.NDArray[np.bool_]:
    """Rows of the (kernel, device) series the charts draw.

    Every regression's (the rooflines draw their baselines) and the first ``limit`` of the
    other sections' (None: all).

    Looked up in a kernels × devices table by the rows' codes: a ``MultiIndex.isin`` over every
    row hashed every row's pair, 29 M of them in a fleet's digest.
    """
    firsts = (digest.improvements, digest.unresolved, digest.time_regressions)
    sections = (digest.regressions, *(section[:limit] for section in firsts))
    pairs = {(m.kernel, m.device) for section in sections for m in section}
    kernels, kernel_labels = category_codes(frame["kernel_key"])
    devices, device_labels = category_codes(frame["device"])
    listed = np.zeros((len(kernel_labels) + 1, len(device_labels) + 1), dtype=bool)
    listed[
        kernel_labels.get_indexer(pd.Index([kernel for kernel, _ in pairs])),
        device_labels.get_indexer(pd.Index([device for _, device in pairs])),
    ] = True
    listed[-1, :] = listed[:, -1] = False  # code -1: a row without the label, or a pair absent
    found: npt.NDArray[np.bool_] = listed[kernels, devices]
    return found


def _last_nights(
    frame: pd.DataFrame, digest: Digest, trusted: npt.NDArray[np.bool_]
) -> npt.NDArray[np.bool_]:
    """Each card's ``trusted`` rows at its last timestamp up to the period's end: its last night."""
    stamps = nanoseconds(frame["timestamp"])
    codes, labels = category_codes(frame["device"])
    found = np.zeros(len(frame), dtype=bool)
    end = pd.Timestamp(digest.end).value
    for code in range(len(labels)):  # a handful of cards: one pass over the rows each
        card = (codes == code) & (stamps <= end) & trusted
        if card.any():
            found |= card & (stamps == stamps[card].max())
    return found


def _runners(session: StoreSession, run_ids: npt.NDArray[np.int64]) -> npt.NDArray[np.object_]:
    """Each row's runner (None where its run names none): the trends mark a swap with it."""
    named = runners_of(session=session, run_ids=run_ids)
    return np.array([named.get(int(i)) for i in run_ids], dtype=object)


def chart_history(
    session: StoreSession, frame: pd.DataFrame, digest: Digest, limit: int | None = None
) -> pd.DataFrame:
    """The rows ``service.render.digest_charts`` draws for ``digest``, with their columns.

    Args:
        session: An open session on the store.
        frame: The compact history with its ids (``compact_history(..., with_ids=True)``).
        digest: The digest built from it.
        limit: The trend charts drawn per section (their ``limit``); None: every listed
            series' rows (at 29 M, 187 unresolved regressions where 10 are drawn).
    """
    trusted = trusted_of(frame)  # a failed runner's nights are in no level, so in no chart
    drawn = _listed_rows(frame, digest, limit) | _last_nights(frame, digest, trusted)
    rows = np.flatnonzero(drawn & trusted)
    run_id = frame["run_id"].to_numpy()[rows]
    chart = pd.DataFrame(
        {
            **{c: frame[c].array.take(rows).astype(object) for c in _STRINGS},
            "timestamp": frame["timestamp"].array.take(rows),
            "kind": "nightly",
            "run_id": run_id,
            "percent_of_roof": frame["percent_of_roof"].to_numpy()[rows],
            "time_s": frame["time_s"].to_numpy()[rows],
            "runner": _runners(session, run_id),
            **pair_work(session, run_id, frame["kernel_id"].to_numpy()[rows]),
        }
    )
    return chart.assign(reference_binding=series_references(chart))
