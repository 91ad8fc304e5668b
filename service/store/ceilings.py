"""The newest stored calibration of a runner's device (``runner_ceilings``), read in Core.

``service.calibrate.storage`` writes these rows; every reader (``calibrate``, and the
``roofguard check`` of a named runner: ``RUNNER_NAME`` is set in every Actions job) reads
them here, in Core, so the check imports no ORM.
"""

from __future__ import annotations

import sqlalchemy as sa

from service.store.coretables import RUNNER_CEILINGS as _CEILINGS
from service.store.sessions import StoreSession


def newest_ceilings_json(
    session: StoreSession, *, runner: str, device: str, backend: str | None = None
) -> str | None:
    """The ``Ceilings`` document (JSON) of ``runner``'s newest calibration of ``device``.

    Args:
        session: A store session.
        runner: The CI runner's name.
        device: The key the device is stored under (``service.calibrate.storage.device_key``).
        backend: Only calibrations measured through this backend; any when None.
    """
    c = _CEILINGS.c
    query = sa.select(c.ceilings_json).where(c.runner == runner, c.device == device)
    if backend is not None:
        query = query.where(c.backend == backend)
    query = query.order_by(c.created_at.desc(), c.id.desc()).limit(1)
    found = session.execute(query).scalar()
    return None if found is None else str(found)
