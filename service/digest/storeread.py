"""The digest's history from the store, compact: what ``roofguard digest`` builds from.

``nightly_history`` holds every history column as Python objects (about 5 KB a
measurement: 29 M measurements would need well over 100 GB); the digest reads
``digest_history`` (about 40 bytes a measurement) and makes it like for like here:

- Like for like recomputes a figure only where a kernel ran off its series' usual binding, so
  only the series that have more than one binding are read in full (their counters), and
  ``rules.like_for_like_history`` judges them exactly as it judges the full history.
- Device changes (``service.digest.rowread``) and the HTML's charts
  (``service.digest.chartread``) read the columns they need beyond it for their own rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import numpy as np
import numpy.typing as npt
import pandas as pd

from rules import Roof, like_for_like_history
from service.digest.acceptance import Acceptance
from service.digest.model import Digest, DigestOptions
from service.digest.shared import with_setups
from service.digest.unmeasured import UnmeasuredDevice
from service.errors import BadInput
from service.store.baselines import maintainer_acceptances
from service.store.devices import untrusted_runs
from service.store.digestread import digest_history, nightly_repositories
from service.store.likeforlike import as_checked
from service.store.lookups import NAMED_REPOS, last_nights
from service.store.memory import give_back_freed
from service.store.sessions import StoreSession
from service.store.workread import counters

_SERIES_READ = ["device", "kernel_key", "binding", "run_id", "kernel_id"]


def _codes(values: pd.Series) -> npt.NDArray[np.int32]:
    return values.cat.codes.to_numpy().astype(np.int32)  # 4 bytes: 0.1 GB at 29 M rows


def _mixed_series(frame: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Rows of the series (device, kernel) that hold more than one known binding."""
    device, kernel, binding = (_codes(frame[c]) for c in ("device", "kernel_key", "binding"))
    kernels = max(len(frame["kernel_key"].cat.categories), 1)
    bindings = max(len(frame["binding"].cat.categories), 1)
    series = device * kernels + kernel
    known = binding >= 0
    seen = np.zeros((len(frame["device"].cat.categories) * kernels, bindings), dtype=bool)
    seen[series[known], binding[known]] = True
    mixed: npt.NDArray[np.bool_] = (seen.sum(axis=1) > 1)[series]
    return mixed


def like_for_like_digest(
    session: StoreSession, frame: pd.DataFrame, roofs: Mapping[int, Roof]
) -> pd.DataFrame:
    """The compact ``frame`` (``digest_history(with_ids=True)``) with percent of roof like for like.

    The same figures as ``with_like_for_like(first_held=True)`` on the full history: a series
    with one binding keeps every figure, the others go through ``rules.like_for_like_history``
    whole, against the binding each held first in the window. ``roofs``: every run's roof,
    those re-read on their card's newest figures as read now (``as_checked`` read them).
    """
    if frame.empty:
        return frame
    rows = np.flatnonzero(_mixed_series(frame))
    if not len(rows):
        return frame
    part = frame.iloc[rows]
    full = pd.DataFrame(
        {
            c: part[c].astype(object) if c in ("device", "kernel_key", "binding") else part[c]
            for c in [*_SERIES_READ, "percent_of_roof", "time_s"]
        }
    ).reset_index(drop=True)
    work = counters(session, full["kernel_id"].unique(), full["run_id"].unique())
    full = full.merge(work, on=["run_id", "kernel_id"], how="left", validate="one_to_one")
    judged = like_for_like_history(full, roofs, first_held=True)
    values = frame["percent_of_roof"].to_numpy(dtype=float).copy()
    values[rows] = judged["percent_of_roof"].to_numpy(dtype=float)
    out = frame.copy(deep=False)
    out["percent_of_roof"] = values
    return out


def with_trusted(session: StoreSession, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (with ``run_id``) with ``trusted``: False on the rows of a failed runner's runs.

    The compact read has no run column but the id: the runs whose runner failed its health
    preflight are looked up (as few as runs) and each row's flag taken from a table by run id,
    one gather (a byte a row: 29 MB at 29 M rows), as the full history's column reads.
    """
    run_id = frame["run_id"].to_numpy()
    found = untrusted_runs(session=session, run_ids=[int(i) for i in pd.unique(run_id)])
    out = frame.copy(deep=False)
    if not found:
        out["trusted"] = np.ones(len(frame), dtype=bool)
        return out
    trusted = np.ones(int(run_id.max()) + 1, dtype=bool)
    trusted[sorted(found)] = False
    out["trusted"] = trusted[run_id]
    return out


def compact_history(
    session: StoreSession,
    repo: str | None,
    start: datetime,
    end: datetime,
    *,
    with_ids: bool = False,
) -> pd.DataFrame:
    """Nightly history of ``[start, end)`` for the digest: compact and like for like.

    With ``trusted`` (``with_trusted``), as the full history has it: the digest reads no night
    of a runner whose health preflight failed. ``with_ids``: keep ``run_id`` and ``kernel_id``
    (for the device changes' and the charts' rows, ``service.digest.rowread`` and
    ``service.digest.chartread``).
    """
    read = digest_history(session=session, repo=repo, start=start, end=end, with_ids=True)
    read, roofs = as_checked(session, read, repo)  # corrected figures, edited work models
    history = with_trusted(session, like_for_like_digest(session, read, roofs))
    if not with_ids:
        del history["run_id"], history["kernel_id"]  # read for the like-for-like figures only
    del read
    give_back_freed()  # what the like-for-like figures freed (``service.store.memory``)
    return history


def with_last_nights(session: StoreSession, digest: Digest) -> Digest:
    """``digest`` naming each device's last nightly run when it read no night at all.

    A repository whose nightly job stopped before the lookback has no row in the digest's
    reach, and its digest read "0 regressions" as a quiet week's does. Its devices are named
    as not measured, with their last nights; a repository with none reads so in the headline.
    """
    if digest.measurements:
        return digest
    silent = [
        UnmeasuredDevice(
            device=night.device,
            last_night=night.timestamp,
            last_commit=night.commit,
            kernels=night.kernels,
        )
        for night in last_nights(session=session, repo=digest.repo, until=digest.end)
    ]
    return digest.model_copy(update={"unmeasured": silent})


def with_store_facts(session: StoreSession, digest: Digest) -> Digest:
    """``digest`` with what only the store knows (``roofguard digest`` and ``/digest`` alike).

    Its shared moves' runners and drivers (``service.digest.shared``), and each device's last
    night where it read none (``with_last_nights``).
    """
    return with_last_nights(session, with_setups(session, digest))


def with_acceptances(
    session: StoreSession, repo: str | None, end: datetime, options: DigestOptions
) -> DigestOptions:
    """``options`` with ``repo``'s ``/roofguard accept``s up to ``end`` (None: every repository's).

    Read once, whatever the history's size (``service.digest.accepted`` matches them to its
    changes at once).
    """
    read = maintainer_acceptances(session=session, repo=repo, until=end)
    accepted = tuple(
        Acceptance(kernel=k, device=d, accepted_at=t, accepted_by=by, reason=why)
        for k, d, t, by, why in read
    )
    return options.model_copy(update={"accepted": accepted})


def digest_repo(
    session: StoreSession, repo: str | None, reach: tuple[datetime, datetime]
) -> str | None:
    """The repository a digest is of: ``repo``, else the one whose nightly runs it would read.

    ``reach``: the period with its lookback (both ends inclusive). Read as one, two
    repositories' nights of a kernel on a card made one series: a level of each read as a
    regression and its recovery, dated by the other's commits. With none in reach, the
    repositories that have a night before it count (their last nights are named). None: the
    store holds no night up to the reach's end.

    Raises:
        BadInput: Nights of more than one repository are in reach, and ``repo`` is None.
    """
    if repo is not None:
        return repo
    stored = nightly_repositories(session=session, until=reach[1])
    names = [name for name, newest in stored if newest >= reach[0]] or [n for n, _ in stored]
    if len(names) <= 1:
        return names[0] if names else None
    shown = ", ".join(names[:NAMED_REPOS])
    more = f" and {len(names) - NAMED_REPOS} more" if len(names) > NAMED_REPOS else ""
    raise BadInput(
        f"--repo: the nightly runs this digest reads are of {len(names)} repositories "
        f"({shown}{more}); a digest is one repository's: give --repo OWNER/NAME"
    )
