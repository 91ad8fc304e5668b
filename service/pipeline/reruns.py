"""The PR gate's reruns: re-measurements of the run's commit that confirm or clear suspects.

Vocabulary (see CONTRIBUTING's glossary): a *rerun* is a re-measurement of the run's commit,
a RunRecord that judges the run and is never stored (``check --rerun FILE``, the upload
form's ``reruns`` files). *Reruns expected* is the caller's promise that reruns will follow
(``check --suspects``, the upload's ``remeasure=true``): then no kernel fails on one
measurement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from collectors.schema import RunRecord
from service.config import RoofguardConfig
from service.errors import BadInput
from service.pipeline.reading import read_run
from service.pipeline.runmeta import RunMeta


@dataclass(frozen=True)
class Reruns:
    """The PR gate's re-measure step (issue 16: screen, re-measure, decide).

    Attributes:
        runs: Reruns of the run's commit (``check --rerun``); not stored.
        expected: Reruns expected: the caller will re-measure the suspects (``check
            --suspects``), so no kernel fails on one measurement.
    """

    runs: tuple[RunRecord, ...] = ()
    expected: bool = False


def check_rerun(path: Path, rerun: RunRecord, run: RunRecord, commits: set[str]) -> None:
    """Refuse a rerun of another commit or device, with no kernels, or with a kernel not in the run.

    Raises:
        BadInput: Naming the file (and the kernel).
    """
    if rerun.commit and rerun.commit not in commits:
        raise BadInput(
            f"{path}: --rerun measured commit {rerun.commit!r}, but the run is "
            f"{sorted(commits)[0]!r}; re-measurements must be of the same commit"
        )
    if rerun.device.name != run.device.name:
        raise BadInput(
            f"{path}: --rerun measured on {rerun.device.name!r}, but the run on "
            f"{run.device.name!r}; re-measure on the same device"
        )
    if not rerun.kernels:
        raise BadInput(
            f"{path}: --rerun holds no kernels: the profiling command re-measured nothing "
            "(does its kernel filter match the names --suspects-regex writes?), so no "
            "suspect could be confirmed"
        )
    keys = {k.key for k in run.kernels}
    for kernel in rerun.kernels:
        if kernel.key not in keys:
            raise BadInput(
                f"{path}: --rerun kernel {kernel.name!r} (key {kernel.key!r}) is not in the "
                "run; re-measure the run's own kernels"
            )


def _refuse_twice(reruns: Sequence[Path]) -> None:
    """Refuse a re-measurement given twice: it would count as two measurements of one.

    Raises:
        BadInput: Naming the file.
    """
    seen: set[Path] = set()
    for path in reruns:
        same = path.resolve()
        if same in seen:
            raise BadInput(f"--rerun {path}: given twice; each file is one re-measurement")
        seen.add(same)


def collect_with_reruns(
    paths: Sequence[Path],
    reruns: Sequence[Path],
    *,
    meta: RunMeta,
    config: RoofguardConfig,
    max_kernels: int | None = None,
) -> tuple[RunRecord, tuple[RunRecord, ...]]:
    """The run and its reruns (``check --rerun``), all checked before anything is stored.

    A rerun must be of the same commit (the one its files name, or ``meta``'s) and device,
    and hold kernels, only kernels of the run. A file past ``max_kernels`` is refused while
    it is read.

    Raises:
        BadInput: A rerun file breaks that; the error names the file and the kernel.
    """
    _refuse_twice(reruns)
    raw = read_run(paths, meta, config, max_kernels)
    commits = {c for c in (meta.commit, raw.commit) if c}
    again = [
        (path, read_run([path], meta, config, max_kernels, require_measured=False))
        for path in reruns
    ]
    for path, rerun in again:
        check_rerun(path, rerun, raw, commits)
    return meta.stamp(raw), tuple(meta.stamp(rerun) for _, rerun in again)
