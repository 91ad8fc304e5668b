"""Which runs may be baseline, and ``/roofguard accept``: a kernel's baseline restarts.

``service.store.history.baseline_frame`` reads the baseline these define.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from sqlmodel import Session

from collectors.schema import RunKind
from service.store.ids import as_utc, device_id, key_hash, repo_id
from service.store.rows import AcceptanceValues
from service.store.tables import BaselineAcceptance, table_of

#: Run kinds that may become a baseline (pull-request runs never do).
BASELINE_KINDS: tuple[str, ...] = (RunKind.NIGHTLY.value, RunKind.LOCAL.value)

_ACCEPTANCES = table_of(BaselineAcceptance)


def accept_baseline(
    *,
    session: Session,
    repo: str,
    kernel_key: str,
    device: str | None,
    accepted_by: str,
    reason: str = "",
    run_id: int | None = None,
    accepted_at: datetime | None = None,
) -> int:
    """Record a ``/roofguard accept``: the kernel's baseline restarts after ``accepted_at``.

    Args:
        session: The session.
        repo: OWNER/NAME.
        kernel_key: Identity key of the accepted kernel.
        device: Device name it applies to; None for every device.
        accepted_by: Who accepted (GitHub login).
        reason: Why, as written in the comment.
        run_id: The run whose change was accepted, when known.
        accepted_at: When (default: now); baselines use runs measured after it.

    Returns:
        The acceptance's id.
    """
    rid = repo_id(session=session, repo=repo, create=True)
    did = device_id(session=session, device=device, create=True) if device else None
    assert rid is not None  # created above
    row: AcceptanceValues = {
        "repo_id": rid,
        "device_id": did,
        "kernel_key": kernel_key,
        "kernel_key_hash": key_hash(kernel_key),
        "run_id": run_id,
        "accepted_by": accepted_by,
        "reason": reason,
        "created_at": as_utc(accepted_at or datetime.now(UTC)),
    }
    stmt = sa.insert(_ACCEPTANCES).returning(_ACCEPTANCES.c.id)
    return int(session.execute(stmt, row).scalar_one())
