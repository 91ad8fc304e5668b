"""A maintainer's ``/roofguard accept`` as the digest reads it, and the change it accepted.

The gate's baseline of a kernel starts after its latest acceptance
(``service.store.history``); ``service.digest.accepted`` makes the digest agree, and lists each
accepted change apart, with who accepted it, when, why and on which card.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict


class Acceptance(BaseModel):
    """One ``/roofguard accept`` (``service.store.baselines.maintainer_acceptances``).

    Attributes:
        kernel: Identity key of the accepted kernel.
        device: The card it was accepted on; None: every card.
        accepted_at: When.
        accepted_by: Who (GitHub login).
        reason: Why, as written in the comment.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kernel: str
    device: str | None = None
    accepted_at: datetime
    accepted_by: str
    reason: str = ""


class AcceptedChange(BaseModel):
    """A regression a maintainer accepted: not listed as a regression, nor as unresolved.

    Attributes:
        kernel: Identity key.
        kernel_name: Display name.
        device: Device as stored (the card the change was measured on).
        accepted_by: Who accepted it.
        accepted_at: When.
        reason: Why, as written in the comment.
        every_device: Accepted on every card (no card named).
        relative_change: ``(after - before) / before`` of percent of roof; None: no change of
            percent of roof was found (a kernel timed alone, say).
        before: Median percent of roof of the level before.
        after: Median percent of roof of the accepted level.
        before_s: Median time of the level before, seconds; None: no rise of time was found.
        after_s: Median time of the accepted level.
        since: First night at the accepted level.
        from_commit: Last commit at the old level.
        to_commit: First commit at the accepted level.
    """

    kernel: str
    kernel_name: str
    device: str
    accepted_by: str
    accepted_at: datetime
    reason: str
    every_device: bool
    relative_change: float | None = None
    before: float | None = None
    after: float | None = None
    before_s: float | None = None
    after_s: float | None = None
    since: datetime
    from_commit: str
    to_commit: str
