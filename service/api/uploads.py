"""Turning an upload (a RunRecord JSON body or a multipart form of report files) into a check.

The check runs in its own transaction and is retried when the database drops the connection
or a concurrent upload of the same content wins the insert: an ingest is one transaction and
idempotent on content, so a retry either stores the run once or finds the first one.
"""

from __future__ import annotations

import json
import logging
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath

import sqlalchemy as sa
from pydantic import ValidationError
from starlette.datastructures import FormData, UploadFile

from collectors import (
    MIN_DURATION_S,
    CollectorError,
    TooManyKernels,
    name_unmeasured,
    stated_version,
    validation_reason,
)
from collectors.schema import RunKind, RunRecord, version_fault
from rules import UnknownDevice
from service.api.deps import ServiceState
from service.api.guards import find_nul
from service.api.inflight import Record
from service.api.schemas import UploadForm
from service.errors import BadInput, ServiceError, StoreUnavailable
from service.pipeline.check import CheckOutcome
from service.pipeline.intake import refuse_impossible_time, refuse_nothing_measured
from service.pipeline.request import CheckRequest
from service.pipeline.reruns import collect_with_reruns
from service.pipeline.roofs import refuse_unknown_given
from service.pipeline.storable import StoreLimits, refuse_unstorable
from service.store.db import session_scope
from service.store.ids import stored_record

log = logging.getLogger("roofguard.api")

#: Attempts at one check when the database connection drops or an identical upload races.
CHECK_ATTEMPTS = 4
_BACKOFF_S = (0.05, 0.2, 0.5)
MAX_FILES = 64
#: Longest file name most file systems store (ext4, XFS, APFS: 255 bytes).
MAX_NAME_BYTES = 255
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class UploadTooLarge(ServiceError):
    """The upload holds more than the service takes in one run."""

    status = 413


@dataclass(frozen=True)
class ParsedForm:
    """A validated upload form, its files and its rerun files (``reruns``)."""

    form: UploadForm
    files: list[UploadFile]
    reruns: list[UploadFile] = field(default_factory=list)


@dataclass(frozen=True)
class Upload:
    """An upload's run, its reruns and its key.

    Reruns are re-measurements of the same commit (the PR gate's); the key is
    ``service.api.inflight.upload_key`` of what was sent.
    """

    run: RunRecord
    reruns: tuple[RunRecord, ...] = ()
    key: str = ""


def parse_record(body: bytes, limits: StoreLimits | None = None) -> RunRecord:
    """A RunRecord from a JSON body, its JSON types strict as a roofguard JSON file's.

    Lax validation read ``"duration_s": true`` as 1 s and ``"0.001"`` as 1 ms, where the
    file reader refuses them. Kernels with no measured launch are named in the run's notes,
    as every file reader names them (``collectors.safety``).

    Raises:
        BadInput: Not a valid RunRecord (naming the kernel's index and the field), one of a
            ``schema_version`` this roofguard does not read, or one the store must not hold
            (see check_record).
    """
    limits = limits or StoreLimits()
    # Every kernel has one duration_s: a run past the cap is refused before it is validated.
    if (count := body.count(b'"duration_s"')) > limits.max_kernels:
        raise _more_than(limits.max_kernels, count)
    try:
        record = RunRecord.model_validate_json(body, strict=True)
    except ValidationError as exc:
        # A newer version's record may fail on its new fields: its version is the reason.
        _refuse_version(stated_version(body))
        raise BadInput(f"request body: {_first_error(exc)}") from None
    _refuse_version(record.schema_version)
    if b"\\u0000" in body:  # JSON spells a NUL only this way; walk the tree only then
        where = find_nul(json.loads(body))
        if where is not None:
            raise BadInput(f"request body: {where}: contains a NUL byte")
    if record.kind == RunKind.PR and record.pull_request is None:  # no PR comment finds it
        raise BadInput("request body: pull_request: missing; a run of kind pr needs its number")
    check_record(record, where="request body", limits=limits)
    return name_unmeasured(record)


def _refuse_version(version: object) -> None:
    fault = version_fault(version)
    if fault is not None:
        raise BadInput(f"request body: schema_version: {fault}")


def check_size(record: RunRecord, *, max_kernels: int) -> None:
    """Raise UploadTooLarge when the run holds more than ``max_kernels`` kernels."""
    if len(record.kernels) > max_kernels:
        raise _more_than(max_kernels, len(record.kernels))


def _more_than(max_kernels: int, count: int | None = None) -> UploadTooLarge:
    holds = f"holds {count:,} kernels, more" if count is not None else "holds more"
    return UploadTooLarge(
        f"the run {holds} than the {max_kernels:,} kernels this service takes in one upload "
        "(ROOFGUARD_MAX_UPLOAD_KERNELS); split it by device or benchmark family"
    )


def check_record(
    record: RunRecord, *, where: str, limits: StoreLimits, files: Sequence[str] = ()
) -> None:
    """Refuse a run the history must not hold: unmeasurable durations, a future timestamp.

    A duration of 0 or 1e-300 s with launches is no measurement: it places the kernel at
    10^300 % of its roof. Kernels whose every launch failed (``launches`` 0) may have none.
    Values the store's columns cannot hold, and figures no device measures, are refused by
    ``refuse_unstorable``; a kernel read from one of ``files`` is named by that file and row.

    Raises:
        BadInput: Naming the kernel's index, key and field.
    """
    check_size(record, max_kernels=limits.max_kernels)
    refuse_nothing_measured(record, where=where)
    for index, kernel in enumerate(record.kernels):
        seconds = kernel.duration_s
        if kernel.launches and seconds < MIN_DURATION_S:  # the collectors' rule, same bound
            raise BadInput(
                f"{where}: kernels.{index}.duration_s: {seconds!r} s for kernel "
                f"{kernel.key!r} is not a measured time (at least {MIN_DURATION_S:g} s)"
            )
    refuse_impossible_time(record.timestamp, where=f"{where}: timestamp")
    refuse_unstorable(record, where=where, limits=limits, files=files)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"]) or "(body)"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {validation_reason(error)}{more}"


def parse_form(form: FormData) -> ParsedForm:
    """The fields and files of a multipart upload.

    Raises:
        BadInput: A field is wrong, an unknown field is given, or there is no file.
    """
    files, reruns = (
        [value for value in form.getlist(name) if isinstance(value, UploadFile)]
        for name in ("files", "reruns")
    )
    fields = {
        k: v for k, v in form.multi_items() if k not in ("files", "reruns") and isinstance(v, str)
    }
    try:
        parsed = UploadForm.model_validate({k: v for k, v in fields.items() if v != ""})
    except ValidationError as exc:
        raise BadInput(f"form field {_first_error(exc)}") from None
    if not files:
        raise BadInput("form field files: give at least one report file")
    return ParsedForm(parsed, files, reruns)


def _safe_name(upload: UploadFile) -> str:
    # Only the last component of the client's name is kept: no paths, no dot-files, no
    # control characters (a NUL cannot be in a path), and no more than a file system takes.
    name = PurePath((upload.filename or "").replace("\\", "/")).name.lstrip(".")
    return fit_name(_CONTROL.sub("_", name) or "report")


def fit_name(name: str, limit: int = MAX_NAME_BYTES) -> str:
    """``name`` cut to ``limit`` UTF-8 bytes, keeping its suffix (formats are told by it)."""
    if len(name.encode("utf-8")) <= limit:
        return name
    suffix = PurePath(name).suffix
    suffix = suffix if len(suffix.encode("utf-8")) <= 16 else ""
    room = limit - len(suffix.encode("utf-8"))
    stem = name[: len(name) - len(suffix)].encode("utf-8")[:room].decode("utf-8", "ignore")
    return stem + suffix


def form_parts(parsed: ParsedForm) -> list[bytes]:
    """What a form upload sent, for its key: each field, then each file's name and bytes."""
    parts = [parsed.form.model_dump_json().encode()]
    for name, uploads in (("files", parsed.files), ("reruns", parsed.reruns)):
        for upload in uploads:
            upload.file.seek(0)
            parts += [name.encode(), (upload.filename or "").encode(), upload.file.read()]
            upload.file.seek(0)
    return parts


def collect_form(parsed: ParsedForm, state: ServiceState, key: str) -> Upload:
    """Read the uploaded files into one RunRecord, as ``roofguard check`` reads files.

    The form is the run's meta (``RunMeta``); each ``reruns`` file is one rerun, a
    re-measurement of the same commit (``check --rerun``). ``key`` is the upload's key
    (``upload_key(form_parts(parsed))``).

    Raises:
        BadInput: A file is not a report roofguard reads (the message names the file as
            uploaded, its row and field), or a rerun is of another commit or device or holds
            a kernel the run lacks.
    """
    with tempfile.TemporaryDirectory(prefix="roofguard-upload-") as tmp:
        paths = _save(parsed.files, Path(tmp) / "files")
        again = _save(parsed.reruns, Path(tmp) / "reruns")
        limits = StoreLimits.of(state.settings)
        try:
            record, reruns = collect_with_reruns(
                paths, again, meta=parsed.form, config=state.config, max_kernels=limits.max_kernels
            )
            if parsed.form.device:  # judged, the error named the file, which names no device
                refuse_unknown_given(record, parsed.form.device, state.config)
        except TooManyKernels:  # stopped at the first kernel past the cap, not parsed in full
            raise _more_than(limits.max_kernels) from None
        except UnknownDevice as exc:  # the form's device: a report names another card, or none
            raise BadInput(f"{parsed.form.named.format('device')}: {exc}") from None
        except (CollectorError, BadInput) as exc:  # BadInput: two devices, a kernel twice
            # Name the file as it was uploaded, not where this service kept it.
            raise BadInput(re.sub(rf"{re.escape(tmp)}/(files|reruns)/\d+/", "", str(exc))) from None
    # Named by their files as uploaded from here on, as the store keeps them: an error raised
    # later (a report naming no device) named this service's temporary folder.
    record, reruns = stored_record(record), tuple(stored_record(r) for r in reruns)
    # As ``roofguard check`` names them: a kernel by its file as uploaded and its row there,
    # not by its place in the run merged from every file.
    names = [_safe_name(upload) for upload in parsed.files]
    check_record(record, where=", ".join(names), limits=limits, files=names)
    for upload, rerun in zip(parsed.reruns, reruns, strict=True):
        check_record(rerun, where=f"reruns file {_safe_name(upload)}", limits=limits)
    return Upload(record, reruns, key)


def _save(files: Sequence[UploadFile], folder: Path) -> list[Path]:
    paths = []
    for index, upload in enumerate(files):
        # One folder per file keeps each uploaded name while two uploads may share it.
        path = folder / str(index) / _safe_name(upload)
        path.parent.mkdir(parents=True)
        upload.file.seek(0)
        with path.open("wb") as out:
            while chunk := upload.file.read(1 << 20):
                out.write(chunk)
        paths.append(path)
    return paths


def run_check(
    request: CheckRequest, state: ServiceState, record: Record | None = None
) -> CheckOutcome:
    """Judge the request's run in one transaction, retried on dropped connections and races.

    The request's config is the service's, possibly with the upload's base branch; its links
    come from the stored run's id. ``record`` is called with the outcome in the same
    transaction (the upload's claim stores its answer there: both commit or neither).

    Raises:
        StoreUnavailable: The database stayed unreachable over every attempt.
    """
    for attempt in range(CHECK_ATTEMPTS):
        try:
            with session_scope(state.engine) as session:
                outcome = request.judge(session)
                if record is not None:
                    record(session, outcome)
                return outcome
        except (StoreUnavailable, sa.exc.DBAPIError) as exc:
            if not _retryable(exc):
                raise
            if attempt == CHECK_ATTEMPTS - 1:
                raise _unavailable(exc) from exc
            log.warning(
                "check of %s@%s: attempt %d failed (%s); retrying",
                request.run.repo,
                request.run.commit,
                attempt + 1,
                type(exc).__name__,
            )
            time.sleep(_BACKOFF_S[min(attempt, len(_BACKOFF_S) - 1)])
    raise AssertionError("unreachable")  # pragma: no cover


def _retryable(exc: Exception) -> bool:
    """Dropped connections and lost insert races are retried; bad data is not."""
    if isinstance(exc, StoreUnavailable | sa.exc.IntegrityError | sa.exc.InterfaceError):
        return True
    return isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated


def _unavailable(exc: Exception) -> StoreUnavailable:
    if isinstance(exc, StoreUnavailable):
        return exc
    return StoreUnavailable(f"history store failed the upload: {type(exc).__name__}")
