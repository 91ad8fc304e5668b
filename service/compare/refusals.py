"""Why a comparison reads no run: the runners all failed their preflight, or another roof.

Told that a repository or a card had no run, a user would look for a nightly job that ran;
these name what is missing instead (``compare_history`` asks before it reads anything).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlmodel import Session

from service.compare.devicenames import match_device
from service.config import RoofguardConfig
from service.errors import BadInput
from service.store.devices import DeviceRuns, device_runs


def refuse_unread(
    session: Session,
    asked: tuple[str, Sequence[str]],
    stored: Sequence[DeviceRuns],
    config: RoofguardConfig,
) -> None:
    """BadInput naming why the repository, or a ``--devices`` card, has no run compare reads.

    Its runs all came from runners whose health preflight failed, or none was placed on the
    roof asked for. ``asked``: the repository and the ``--devices`` names; ``stored``: the
    cards of trusted runs on that roof.
    """
    repo, _ = asked
    if stored:
        _refuse_untrusted_cards(session, asked, stored, config)
        return
    _refuse_untrusted_repo(session, repo, config)
    if config.roof is not None:
        _refuse_another_roof(session, repo, config)


def _refuse_untrusted_repo(session: Session, repo: str, config: RoofguardConfig) -> None:
    """BadInput when ``repo``'s base-branch runs (on ``config.roof``) are all from failed runners.

    Told that the repository had no run, a user would look for a nightly job that ran.
    """
    every = _every_card(session, repo, config)
    if every:
        raise _untrusted("--repo", f"{repo}'s {sum(d.runs for d in every)} base-branch runs")


def _every_card(session: Session, repo: str, config: RoofguardConfig) -> list[DeviceRuns]:
    """``repo``'s base-branch runs on ``config.roof`` by card, from failed runners too."""
    return device_runs(
        session=session,
        repo=repo,
        base_branch=config.base_branch,
        roof_source=config.roof,
        trusted_only=False,
    )


def _untrusted(flag: str, runs: str) -> BadInput:
    """The refusal of ``runs`` (those named) that all came from runners whose preflight failed."""
    return BadInput(
        f"{flag}: none of {runs} came from a runner that passed its health preflight; compare "
        "reads the runs a baseline is made of (a runner is checked by `roofguard calibrate "
        "--check`)"
    )


def _refuse_untrusted_cards(
    session: Session,
    asked: tuple[str, Sequence[str]],
    stored: Sequence[DeviceRuns],
    config: RoofguardConfig,
) -> None:
    """BadInput when a ``--devices`` card's base-branch runs are all from failed runners.

    Told that the card had no base-branch history, a user would look for a nightly job that
    ran on it.
    """
    (repo, devices), catalog = asked, config.catalog()
    known = [d.device for d in stored]
    names = [n for n in devices if match_device(n, known, catalog) is None]
    if not names:
        return
    every = _every_card(session, repo, config)
    failed = {d.device: d.runs for d in every if d.device not in known}
    for name in names:
        card = match_device(name, list(failed), catalog)
        if card is not None:
            runs = f"{card}'s {failed[card]} base-branch runs in {repo}"
            raise _untrusted("--devices", runs)


def _refuse_another_roof(session: Session, repo: str, config: RoofguardConfig) -> None:
    """BadInput when ``repo`` has base-branch runs, none of them on ``config.roof``.

    Told that the repository had no run, a user went to mend the nightly job; the roof asked
    for (most often ``measured``, which needs a runner's calibration) was what was missing.
    """
    others = device_runs(session=session, repo=repo, base_branch=config.base_branch)
    if not others:
        return
    measured = config.roof == "measured"
    how = " (a runner is measured by `roofguard calibrate --store`)" if measured else ""
    raise BadInput(
        f"--roof {config.roof}: none of {repo}'s {sum(d.runs for d in others)} base-branch "
        f"runs was placed on a {config.roof} roof{how}; leave --roof out to compare them "
        "on the roofs they were placed on"
    )
