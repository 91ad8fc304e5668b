"""The nightly runs the digest left out: their runner failed its health preflight.

The digest reads no night of such a runner (``devices.trusted_of``), as a check's baseline
reads none; a reader then saw fewer nights than ran and no reason. They are counted per
device from the run ids of the few rows flagged untrusted: one mask over the history, no
object a row.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pandas as pd
from pydantic import BaseModel

from service.digest.devices import trusted_of


class UntrustedRuns(BaseModel):
    """A device's nightly runs in the period whose runner failed its health preflight.

    Attributes:
        device: Device as stored.
        runs: Distinct runs left out (``roofguard calibrate --check`` failed on their runner).
    """

    device: str
    runs: int


def left_out_runs(history: pd.DataFrame, *, start: datetime, end: datetime) -> list[UntrustedRuns]:
    """Per device, the nightly runs of ``[start, end]`` left out as untrusted, most first.

    ``history`` needs ``run_id`` to count them (without it, or without ``trusted``: none).
    """
    if "run_id" not in history.columns or "trusted" not in history.columns:
        return []
    rows = np.flatnonzero(~trusted_of(history))
    if not len(rows):
        return []
    stamps = pd.to_datetime(pd.Series(history["timestamp"].array.take(rows)), utc=True)
    keep = ((stamps >= pd.Timestamp(start)) & (stamps <= pd.Timestamp(end))).to_numpy()
    if "kind" in history.columns:
        keep = keep & (np.asarray(history["kind"].array.take(rows)) == "nightly")
    left = pd.DataFrame(
        {
            "device": np.asarray(history["device"].array.take(rows[keep]), dtype=object),
            "run_id": np.asarray(history["run_id"].array.take(rows[keep])),
        }
    )
    counts = left.groupby("device")["run_id"].nunique()
    return [
        UntrustedRuns(device=str(device), runs=int(runs))
        for device, runs in sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))
    ]
