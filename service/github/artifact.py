"""The fork-safe pair's artifact: reports plus a small manifest, packed untrusted, read strictly.

The untrusted ``pull_request`` job (PR code, read-only token, no secrets) only profiles and
packs: ``reports/<name>`` for each report and ``roofguard-artifact.json`` beside them (the PR
number, the commit, and each file's size and SHA-256). The trusted ``workflow_run`` job
downloads the folder and ``unpack`` treats every byte of it as hostile:

* a file may be marked ``rerun``: the run measured again, judged as ``check --rerun``;
* only the manifest and the files it lists may exist (no other names, no links, no folders
  but ``reports/``); names are plain (``[A-Za-z0-9._-]``, no path separators, no ``..``);
* sizes are capped, and each file is copied out while its hash is checked, so what is judged
  is exactly what was verified;
* the manifest's commit must be the ``workflow_run`` event's ``head_sha`` (from the runner,
  trusted), its PR one of the event's PRs when the event lists them (same-repository PRs)
  and, in every case, a PR whose head is that commit (asked from GitHub by the caller).

The branch comes from the event, never from the manifest; the base branch from the trusted
workflow or the config.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, BinaryIO, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from service.errors import BadInput

MANIFEST = "roofguard-artifact.json"
REPORTS_DIR = "reports"
MAX_MANIFEST_BYTES = 64 * 1024
MAX_FILES = 64
#: ncu reports of a big model run reach hundreds of MB; anything past this is refused.
MAX_FILE_BYTES = 1024 * 1024 * 1024
MAX_TOTAL_BYTES = 4 * MAX_FILE_BYTES
_CHUNK = 1024 * 1024
#: A report's name in the artifact: plain, no path separator, no leading dot.
_PLAIN_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"

FileName = Annotated[str, StringConstraints(pattern=f"^{_PLAIN_NAME}$", max_length=128)]
Sha = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]
Device = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._()+-]{0,63}$")]


class ArtifactFile(BaseModel):
    """One report in the artifact; ``rerun``: a re-measurement of the run (``check --rerun``)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: FileName
    size: int = Field(ge=0, le=MAX_FILE_BYTES)
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
    rerun: bool = False


class ArtifactManifest(BaseModel):
    """``roofguard-artifact.json``: what the untrusted job claims (checked by ``unpack``)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    version: Literal[1] = 1
    pr: int = Field(ge=1, le=10**9)
    sha: Sha
    device: Device | None = None
    files: list[ArtifactFile] = Field(min_length=1, max_length=MAX_FILES)

    @pydantic.field_validator("files")
    @classmethod
    def _unique(cls, files: list[ArtifactFile]) -> list[ArtifactFile]:
        names = [f.name for f in files]
        if len(set(names)) != len(names):
            raise ValueError("file names must be unique")
        if sum(f.size for f in files) > MAX_TOTAL_BYTES:
            raise ValueError(f"more than {MAX_TOTAL_BYTES} bytes in all")
        if all(f.rerun for f in files):
            raise ValueError("every file is a re-measurement (rerun): there is no run to judge")
        return files


@dataclass(frozen=True)
class Unpacked:
    """A verified artifact: trusted values and the copied reports."""

    pr: int
    sha: str
    branch: str | None
    device: str | None
    reports: tuple[Path, ...]
    reruns: tuple[Path, ...] = ()


@contextmanager
def _failing(path: Path, doing: str) -> Iterator[None]:
    """An OSError as one BadInput naming the file and what failed, not a bare errno line.

    The file the OS names wins (a copy's source or destination); a full disk names none,
    so ``path`` is named then.
    """
    try:
        yield
    except OSError as exc:
        where = exc.filename if exc.filename is not None else path
        raise BadInput(f"{where}: cannot {doing}: {exc.strerror or exc}") from exc


def _hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def pack(
    reports: Sequence[Path],
    folder: Path,
    *,
    pr: int,
    sha: str,
    device: str | None = None,
    reruns: Sequence[Path] = (),
) -> ArtifactManifest:
    """Copy ``reports`` (and ``reruns``) to ``folder/reports/`` and write the manifest beside.

    ``reruns``: the run measured again (a fork PR's re-measure step: no job both knows the
    suspects and may profile them, so every kernel is measured twice).
    """
    entries: list[dict[str, object]] = []
    taken: dict[str, Path] = {}
    for report, rerun in [*((r, False) for r in reports), *((r, True) for r in reruns)]:
        _check_packable(report, taken)
        with _failing(report, "read"):
            size, digest = report.stat().st_size, _hash(report)
        entries.append({"name": report.name, "size": size, "sha256": digest, "rerun": rerun})
    manifest = _validate(
        json.dumps({"version": 1, "pr": pr, "sha": sha, "device": device, "files": entries}),
        "artifact",
    )
    target = folder / REPORTS_DIR
    with _failing(target, "create the folder"):
        target.mkdir(parents=True, exist_ok=True)
    for report in [*reports, *reruns]:
        with _failing(target / report.name, "copy into the artifact"):
            shutil.copyfile(report, target / report.name)
    with _failing(folder / MANIFEST, "write"):
        (folder / MANIFEST).write_text(manifest.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return manifest


def _check_packable(report: Path, taken: dict[str, Path]) -> None:
    """Refuse, naming the file, a report the manifest cannot carry; note its name as taken.

    The artifact keeps plain file names only (``FileName``): the manifest's own error named
    ``files.0.name`` and a pattern, not the file, nor two reports of one name in two folders.
    """
    if not report.is_file():
        raise BadInput(f"{report}: not a file")
    if not re.fullmatch(_PLAIN_NAME, report.name):
        raise BadInput(
            f"{report}: the artifact carries plain file names only (letters, digits, '.', '_' "
            f"and '-', starting with a letter or digit): rename {report.name!r}"
        )
    if report.name in taken:
        raise BadInput(
            f"{report}: {taken[report.name]} has the same file name, and the artifact keeps "
            "file names only: rename one of them"
        )
    taken[report.name] = report


def _validate(text: str | bytes, where: str) -> ArtifactManifest:
    try:
        return ArtifactManifest.model_validate_json(text)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise BadInput(f"{where}: field {field}: {first['msg']}") from None


def _regular(path: Path, limit: int) -> os.stat_result:
    """Stat ``path`` (not following links): a regular file of at most ``limit`` bytes."""
    try:
        info = path.lstat()
    except OSError as exc:
        raise BadInput(f"{path}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise BadInput(f"{path}: not a regular file (links and devices are refused)")
    if info.st_size > limit:
        raise BadInput(f"{path}: {info.st_size} bytes; at most {limit} are accepted")
    return info


def read_manifest(folder: Path) -> ArtifactManifest:
    """The manifest of ``folder``, parsed strictly; BadInput names the file and field."""
    path = folder / MANIFEST
    _regular(path, MAX_MANIFEST_BYTES)
    with _failing(path, "read"):
        text = path.read_bytes()
    return _validate(text, str(path))


def _check_layout(folder: Path, manifest: ArtifactManifest) -> None:
    """Nothing but the manifest and ``reports/<listed names>``: no extra names or folders."""
    with _failing(folder, "list"):
        top = {entry.name: entry for entry in os.scandir(folder)}
    extra = set(top) - {MANIFEST, REPORTS_DIR}
    if extra:
        raise BadInput(f"{folder}: unexpected entries {sorted(extra)} in the artifact")
    reports = top.get(REPORTS_DIR)
    if reports is None or not reports.is_dir(follow_symlinks=False):
        raise BadInput(f"{folder / REPORTS_DIR}: missing (or not a folder)")
    with _failing(folder / REPORTS_DIR, "list"):
        found = {entry.name for entry in os.scandir(folder / REPORTS_DIR)}
    listed = {f.name for f in manifest.files}
    if found - listed:
        raise BadInput(
            f"{folder / REPORTS_DIR}: files not in the manifest: {sorted(found - listed)}"
        )
    if listed - found:
        raise BadInput(f"{folder / REPORTS_DIR}: listed but missing: {sorted(listed - found)}")


def _copy_verified(source: Path, entry: ArtifactFile, target: Path) -> Path:
    """Copy one report out, hashing what is copied; a mismatch or a failure leaves nothing."""
    _regular(source, MAX_FILE_BYTES)
    destination = target / entry.name
    with _failing(source, "read"):
        src = source.open("rb")
    with src, _failing(destination, "write"):
        digest, size = _copy(src, destination, entry.size)
    if size != entry.size or digest != entry.sha256:
        destination.unlink()
        raise BadInput(f"{source}: size or SHA-256 differs from the manifest")
    return destination


def _copy(src: BinaryIO, destination: Path, size_limit: int) -> tuple[str, int]:
    """Copy ``src`` to ``destination`` up to just past ``size_limit`` bytes; their SHA-256, size.

    A write the disk refuses (full, or a quota) fails mid-copy, or at close when the rest
    was buffered: the half-written file is removed either way.
    """
    digest, size = hashlib.sha256(), 0
    dst = destination.open("wb")  # nothing to remove when it cannot be opened
    try:
        with dst:
            while (chunk := src.read(_CHUNK)) and size <= size_limit:
                size += len(chunk)
                digest.update(chunk)
                dst.write(chunk)
    except BaseException:
        destination.unlink(missing_ok=True)
        raise
    return digest.hexdigest(), size


def check_event(manifest: ArtifactManifest, event: Mapping[str, Any]) -> str | None:
    """The manifest against the trusted ``workflow_run`` event; returns the head branch."""
    run = event.get("workflow_run")
    if not isinstance(run, dict):
        raise BadInput("GITHUB_EVENT_PATH: not a workflow_run event (run this in the trusted job)")
    if run.get("event") != "pull_request":
        raise BadInput(f"workflow_run.event: {run.get('event')!r}, expected 'pull_request'")
    if run.get("head_sha") != manifest.sha:
        raise BadInput(
            f"{MANIFEST}: field sha: {manifest.sha[:12]} is not the workflow run's head "
            f"commit {str(run.get('head_sha'))[:12]}"
        )
    numbers = [p.get("number") for p in run.get("pull_requests") or [] if isinstance(p, dict)]
    if numbers and manifest.pr not in numbers:
        raise BadInput(f"{MANIFEST}: field pr: #{manifest.pr} is not the run's PR {numbers}")
    branch = run.get("head_branch")
    return branch if isinstance(branch, str) and branch else None


def unpack(folder: Path, target: Path, event: Mapping[str, Any]) -> Unpacked:
    """Verify the downloaded ``folder`` against ``event`` and copy its reports to ``target``.

    The PR's head commit is not checked here (that needs GitHub): the caller does it.
    """
    if folder.is_symlink() or not folder.is_dir():
        raise BadInput(f"{folder}: the downloaded artifact folder is missing")
    manifest = read_manifest(folder)
    branch = check_event(manifest, event)
    _check_layout(folder, manifest)
    with _failing(target, "create the folder"):
        target.mkdir(parents=True, exist_ok=True)
    copied: list[Path] = []
    try:
        for entry in manifest.files:
            copied.append(_copy_verified(folder / REPORTS_DIR / entry.name, entry, target))
    except BaseException:  # refused, or the copy failed (disk full): not only BadInput
        for path in copied:  # all or nothing: no half-verified set is left to judge
            path.unlink(missing_ok=True)
        raise
    pairs = list(zip(copied, manifest.files, strict=True))
    reports = tuple(path for path, entry in pairs if not entry.rerun)
    reruns = tuple(path for path, entry in pairs if entry.rerun)
    return Unpacked(manifest.pr, manifest.sha, branch, manifest.device, reports, reruns)


def read_event(path: str | None) -> dict[str, Any]:
    """The runner's event payload (``GITHUB_EVENT_PATH``), written by the runner: trusted."""
    if not path:
        raise BadInput("GITHUB_EVENT_PATH: not set (run this inside the workflow_run job)")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(f"GITHUB_EVENT_PATH: {path}: {exc}") from None
    if not isinstance(data, dict):
        raise BadInput(f"GITHUB_EVENT_PATH: {path}: not a JSON object")
    return data
