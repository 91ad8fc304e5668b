"""The decision of which baseline a check reads: the one its caller names, else the kept one.

The pipeline's half of one concept: the store keeps the baseline a run was judged against on
its row and reads it back (``service.store.judgedbase``, the record); here a check decides.
An upload's ``base_branch`` and ``base_sha``/``base_time`` (``check``'s ``--base-branch``,
``--base-sha``, ``--base-time``: ``AskedBase``) choose a run's baseline, and the run keeps it
with its findings. Judged again without them (its page, the API's verdict, the same upload
or ``check`` again), it reads the baseline it was first judged against, so its stored
findings and the kernels judged now come from one baseline. A caller that names another gets
its answer against that one, not stored: the run's page keeps showing the verdict stored
(``BaseChoice.other``).
"""

from __future__ import annotations

from dataclasses import dataclass

from service.config import RoofguardConfig
from service.store.baselines import MergeBase
from service.store.ids import as_utc
from service.store.ingest import IngestResult
from service.store.judgedbase import JudgedBase, judged_base
from service.store.sessions import StoreSession


@dataclass(frozen=True)
class AskedBase:
    """The baseline a check's caller names; None in both where it names none.

    Attributes:
        branch: The base branch, instead of the configured one (``base_branch``).
        merge_base: The PR's merge base, where the baseline stops (``base_sha``).
    """

    branch: str | None = None
    merge_base: MergeBase | None = None

    @property
    def named(self) -> bool:
        """Whether the caller names a baseline (then its own, as a whole, is the one read)."""
        return self.branch is not None or self.merge_base is not None


#: A check whose caller names no baseline: the stored verdict's, else the configured branch's.
NONE_NAMED = AskedBase()


@dataclass(frozen=True)
class BaseChoice:
    """The baseline a check reads, and the one its run's stored verdict was judged against.

    Attributes:
        judged: What this check judges the run against.
        stored: What the stored verdict was judged against; None for a new run, one stored
            by ``ingest``, or one judged before the store kept it.
        config: The check's configuration, on the ``judged`` base branch.
    """

    judged: JudgedBase
    stored: JudgedBase | None
    config: RoofguardConfig

    @property
    def other(self) -> bool:
        """Whether the caller asked for another baseline than the stored verdict's."""
        return self.stored is not None and self.stored != self.judged

    def note(self) -> str:
        """The note of a verdict judged against another baseline than the stored one."""
        assert self.stored is not None
        return (
            f"judged against {_described(self.judged)} as asked, and not stored: this run's "
            f"stored verdict, on its page, was judged against {_described(self.stored)}"
        )


def _described(base: JudgedBase) -> str:
    """The baseline in words, for a verdict's note: ``the main runs up to merge base 1a2b``."""
    runs = f"the {base.branch} runs"
    if base.merge_base is None:
        return runs
    cut = f"{runs} up to merge base {base.merge_base.sha[:12]}"
    time = base.merge_base.time
    return cut if time is None else f"{cut} (its commit time {as_utc(time):%Y-%m-%d %H:%M} UTC)"


def choose_base(
    session: StoreSession, stored: IngestResult, asked: AskedBase, config: RoofguardConfig
) -> BaseChoice:
    """The baseline to judge ``stored`` against, as ``check_run`` stored it.

    What the caller names (``asked``; its branch else ``config``'s); where it names none,
    the one the run's stored verdict was judged against, else ``config``'s base branch.
    """
    before = None if stored.created else judged_base(session=session, run_id=stored.run_id)
    if before is not None and not asked.named:
        judged = before
    else:
        judged = JudgedBase(asked.branch or config.base_branch, asked.merge_base)
    if judged.branch != config.base_branch:
        config = config.model_copy(update={"base_branch": judged.branch})
    return BaseChoice(judged, before, config)
