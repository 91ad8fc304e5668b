"""A run whose changes a maintainer accepted (``/roofguard accept``) is judged again.

An acceptance restarts the kernel's baseline for the runs measured after it. The verdict
stored at the run's first check still held the accepted kernels' findings: posted again, the
comment showed them failing, and the check run stayed red. A run with acceptances is judged
anew each time it is asked for (the same runs, so the same verdict): its accepted kernels
keep the baseline they were judged against (the change shows, with its size) and have no
finding; they are ``accepted``, and the verdict says who accepted what, and why. A kernel
group (``[[rules.groups]]``) whose every kernel that fell is accepted loses its findings too
(``accepted_groups``): its fall was theirs, and a check must not stay red on it.

The runs after it judge such a kernel on the history its card holds since the acceptance
(``Baseline.restarted``). Until that holds the runs the gate needs, the kernel is no new
kernel either: it is ``accepted`` (no ``new-kernel`` finding), and a note says it restarted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping

from rules import FailOn, KernelStatus, Verdict, with_findings
from service.config import RoofguardConfig
from service.store.baselines import Acceptance

#: The rule that would call a restarted kernel new.
NEW_KERNEL = "new-kernel"

#: Kernels named in the note of one acceptance; the rest are counted.
NAMED = 5


def accepted_verdict(verdict: Verdict, acceptances: list[Acceptance], fail_on: FailOn) -> Verdict:
    """``verdict`` without the findings of the accepted kernels and their groups, noted."""
    keys = {a.kernel_key for a in acceptances}
    groups = accepted_groups(verdict, keys)
    gone = keys | set(groups)
    kept = [f for f in verdict.findings if f.kernel is None or f.kernel not in gone]
    judged = with_findings(verdict, kept, fail_on)
    kernels = tuple(
        k.model_copy(update={"status": KernelStatus.ACCEPTED}) if k.key in keys else k
        for k in judged.kernels
    )
    notes = (*verdict.notes, *accepted_notes(acceptances), *_group_notes(verdict, groups))
    return judged.model_copy(update={"kernels": kernels, "notes": notes})


def accepted_groups(verdict: Verdict, keys: Collection[str]) -> dict[str, list[str]]:
    """The groups (``group:<name>``) whose every kernel that fell is accepted: those kernels.

    A group falls with its kernels: accepting the kernels that fell accepts the group's fall
    too. A kernel fell when the gate found it regressed or suspect; a group with a kernel that
    fell and is not accepted, or none that fell (its own drift), keeps its findings.
    """
    fell = {KernelStatus.REGRESSED, KernelStatus.SUSPECT}
    fallen = {k.key for k in verdict.kernels if k.status in fell}
    groups: dict[str, list[str]] = {}
    for group in verdict.groups:
        members = fallen.intersection(group.kernels)
        if members and members <= set(keys):
            groups[f"group:{group.name}"] = sorted(members)
    return groups


def _group_notes(verdict: Verdict, groups: Mapping[str, list[str]]) -> tuple[str, ...]:
    """One note per group whose findings the acceptance of its fallen kernels cleared."""
    had = {f.kernel for f in verdict.findings}
    return tuple(
        f"group {key.removeprefix('group:')!r} accepted with {_names(members)}: every kernel "
        "of it that fell is accepted"
        for key, members in groups.items()
        if key in had
    )


def accepted_notes(acceptances: list[Acceptance]) -> tuple[str, ...]:
    """One note per acceptance comment: the kernels, who accepted them and why."""
    return tuple(
        f"judged again: {_names(keys)} accepted as the new baseline by {who}: {why}"
        for (who, why), keys in _by_comment(acceptances).items()
    )


def restarted_verdict(
    verdict: Verdict, restarted: Mapping[str, Acceptance], run_id: int, config: RoofguardConfig
) -> Verdict:
    """``verdict`` with the kernels an earlier acceptance restarted, while new again, accepted.

    The acceptances of run ``run_id``'s own changes are ``accepted_verdict``'s.
    """
    restarts = [
        restarted[k.key]
        for k in verdict.kernels
        if k.status == KernelStatus.NEW and k.key in restarted and restarted[k.key].run_id != run_id
    ]
    if not restarts:
        return verdict
    keys = {a.kernel_key for a in restarts}
    kept = [f for f in verdict.findings if f.rule != NEW_KERNEL or f.kernel not in keys]
    judged = with_findings(verdict, kept, config.rules.fail_on)
    kernels = tuple(
        k.model_copy(update={"status": KernelStatus.ACCEPTED}) if k.key in keys else k
        for k in judged.kernels
    )
    runs, branch = config.baseline.min_runs, config.base_branch
    notes = (
        f"restarted by `/roofguard accept`: {_names(named)} accepted as the new baseline on "
        f"{verdict.device} by {who}: {why}; judged again once {runs} {branch} runs have been "
        "measured since, not as new kernels meanwhile"
        for (who, why), named in _by_comment(restarts).items()
    )
    return judged.model_copy(update={"kernels": kernels, "notes": (*judged.notes, *notes)})


def _by_comment(acceptances: Iterable[Acceptance]) -> dict[tuple[str, str], list[str]]:
    """The accepted kernels by (who, why): one acceptance comment each."""
    kernels: dict[tuple[str, str], list[str]] = defaultdict(list)
    for acceptance in acceptances:
        kernels[acceptance.accepted_by, acceptance.reason].append(acceptance.kernel_key)
    return kernels


def _names(keys: list[str]) -> str:
    named = ", ".join(repr(k) for k in keys[:NAMED])
    more = len(keys) - NAMED
    return named + (f" and {more} more" if more > 0 else "")
