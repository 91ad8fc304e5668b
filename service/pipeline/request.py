"""One check to run: the run and everything its judging depends on, as one value.

The edges build it (``roofguard check`` from its flags, the upload route from its form and
query) and hand it on whole, so a new input of the check is one field here rather than one
more parameter on every function between the edge and ``check_run``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from collectors.schema import RunRecord
from rules import Roof
from service.config import RoofguardConfig
from service.pipeline.basechoice import AskedBase
from service.pipeline.check import CheckOutcome, RunnerState, check_run
from service.pipeline.reruns import Reruns
from service.store.sessions import StoreSession

if TYPE_CHECKING:  # jinja2: imported where the markdown is rendered
    from service.render.markdown import VerdictLinks

#: The verdict's links, or a function of the stored run's id that gives them (the service
#: links to the run's page, whose id exists only once the run is stored).
Links: TypeAlias = "VerdictLinks | Callable[[int], VerdictLinks] | None"


@dataclass(frozen=True)
class CheckRequest:
    """A run to ingest and judge, and how.

    Attributes:
        run: The run, read and stamped with its meta.
        config: The configuration, with the caller's overrides (``--base-branch``, ...).
        reruns: The PR gate's reruns of the run's commit, and whether they are expected.
        base: The base branch and the PR's merge base the caller names (``--base-branch``,
            ``--base-sha``; ``service.pipeline.basechoice``).
        links: Where the verdict's markdown links to.
        measured: The runner's measured roof, when it has one (``roof = "measured"``).
        trusted: False when the runner's health preflight found it degraded.
        rejudge: A run stored before is judged again when the configuration its stored
            verdict was judged with changed (``roofguard check``; ``check_run``).
    """

    run: RunRecord
    config: RoofguardConfig
    reruns: Reruns = field(default_factory=Reruns)
    base: AskedBase = field(default_factory=AskedBase)
    links: Links = None
    measured: Roof | None = None
    trusted: bool = True
    rejudge: bool = False

    def judge(self, session: StoreSession) -> CheckOutcome:
        """Ingest the run in ``session`` (idempotent) and judge it (``check_run``)."""
        return check_run(
            session=session,
            run=self.run,
            config=self.config,
            base=self.base,
            links=self.links,
            runner=RunnerState(self.measured, self.trusted),
            reruns=self.reruns,
            rejudge=self.rejudge,
        )
