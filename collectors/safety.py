"""What every collector's result passes through: one clear error for any bad input.

``read`` runs a collector's ``parse`` and turns what escapes it into errors that name the
file: a record that fails its own validation names the entry and field, nesting too deep
to read is malformed, and anything else is a ``CollectorBug`` (exit 2 and 422, never a
traceback; the fuzz tests fail on it, so each one found gets its own precise error). The
record is then checked for what the schema allows but the roofline cannot use: a kernel
that ran, timed at zero or at a subnormal number of seconds, would put it at a percent of
roof with hundreds of digits. Kernels with no measured launch are kept, not measured, and
named in the run's notes, whichever reader made the record.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from collectors.base import Collector
from collectors.errors import CollectorBug, CollectorError, MalformedReport, cut, launch_label
from collectors.gcpause import paused_gc
from collectors.physics import run_fault
from collectors.schema import MIN_DURATION_S, KernelRecord, RunRecord

#: How the run's notes begin to name the kernels that were not measured.
UNMEASURED = "not measured, no launch with a duration: "


def read(collector: Collector, path: Path) -> RunRecord:
    """``collector.parse(path)``, checked; every failure is a ``CollectorError`` naming ``path``."""
    with paused_gc():
        return _read(collector, path)


def _read(collector: Collector, path: Path) -> RunRecord:
    try:
        record = collector.parse(path)
    except CollectorError:
        raise
    except ValidationError as exc:
        raise invalid_record(exc, str(path)) from None
    except RecursionError:
        raise MalformedReport(str(path), None, None, "nested too deeply to read") from None
    except Exception as exc:  # the one place a bug becomes a named error
        raise CollectorBug(str(path), exc) from exc
    collector.options.count(len(record.kernels), path)  # readers that could not stop sooner
    check_durations(record, str(path))
    check_physics(record, str(path))
    check_text(record, str(path))
    return name_unmeasured(record)


def unmeasured_note(names: Sequence[str]) -> str:
    """The run's note naming its kernels not measured: the first three, then how many more."""
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return UNMEASURED + "; ".join(cut(name) for name in names[:3]) + more


def name_unmeasured(record: RunRecord) -> RunRecord:
    """``record`` with its kernels not measured named in its notes, where its reader did not.

    Such a kernel is neither judged nor stored: unnamed, it would vanish from the verdict.
    """
    names = [kernel.name for kernel in record.kernels if not kernel.measured]
    if not names or any(note.startswith(UNMEASURED) for note in record.notes):
        return record
    return record.model_copy(update={"notes": (*record.notes, unmeasured_note(names))})


def invalid_record(exc: ValidationError, path: str) -> MalformedReport:
    """A record's own validation error as the entry and field of the file it came from."""
    first = exc.errors()[0]
    parts = [str(p) for p in first["loc"]]
    if exc.title == "KernelRecord" or (parts[:1] == ["kernels"] and len(parts) > 1):
        entry = f"kernels[{parts[1]}]" if parts[:1] == ["kernels"] else None
        field = ".".join(parts[2:] if entry else parts) or None
        return MalformedReport(path, entry, field, first["msg"])
    return MalformedReport(path, None, ".".join(parts) or None, first["msg"])


def check_durations(record: RunRecord, path: str) -> None:
    """Every kernel that ran has a duration, and every sample, a timer could have measured.

    The readers refuse a sample under the file's own names first (``check_sample``), and the
    schema any validated record's; this catches a record built without validation.

    Raises:
        MalformedReport: Names the kernel's entry and the field its time came from.
    """
    for index, kernel in enumerate(record.kernels):
        if not kernel.launches:
            continue
        entry = _entry(kernel, index, path)
        what = f"a kernel that ran ({kernel.launches} launch(es))"
        check_sample(kernel.duration_s, path, entry, _duration_field(kernel), what)
        samples = kernel.samples_s
        if samples and min(samples) < MIN_DURATION_S:  # min: a million launches, no loop here
            number = next(i for i, seconds in enumerate(samples) if seconds < MIN_DURATION_S)
            what = f"one of {len(samples)} samples"
            check_sample(samples[number], path, entry, f"samples_s.{number}", what)


def check_sample(seconds: float, path: str, row: str | int | None, field: str, what: str) -> None:
    """Refuse a time under ``MIN_DURATION_S`` (0 s): kept, it drags a kernel's mean or median.

    One zero launch among two halved a kernel's time (5.717 ms read as 2.858 ms, above its
    roof). Only a format that documents 0 as "not measured" keeps it out instead (Kineto's
    ``dur`` 0, a failed launch).

    Args:
        seconds: The time read.
        path: The file.
        row: The entry, row or launch it was read from.
        field: The file's own name for the time (``real_time``, ``stats.data.0``).
        what: What the time is of (``a launch``, ``one of 5 repetitions``).

    Raises:
        MalformedReport: Names ``path``, ``row`` and ``field``.
    """
    if seconds < MIN_DURATION_S:
        reason = (
            f"duration of {seconds!r} s for {what}: no timer measures under {MIN_DURATION_S:g} s"
        )
        raise MalformedReport(path, row, field, reason)


def check_physics(record: RunRecord, path: str) -> None:
    """Every figure is one a device could have measured (``collectors.physics``).

    Raises:
        MalformedReport: Names the kernel's entry (or the device) and the field.
    """
    fault = run_fault(record)
    if fault is None:
        return
    index, field, reason = fault
    if index is None:
        raise MalformedReport(path, None, field, reason)
    raise MalformedReport(path, _entry(record.kernels[index], index, path), field, reason)


def check_text(record: RunRecord, path: str) -> None:
    """No kernel's name or key carries a NUL byte, which PostgreSQL refuses in any text.

    Found here, the error names the kernel's row in its file; found when the run is stored
    (``service.pipeline.storable``), it could only name the kernel's place in the record.

    Raises:
        MalformedReport: Names the kernel's entry and the field.
    """
    for index, kernel in enumerate(record.kernels):
        for field, text in (("name", kernel.name), ("key", kernel.key)):
            if "\x00" in text:
                entry = _entry(kernel, index, path).replace("\x00", "\\0")
                raise MalformedReport(path, entry, field, "contains a NUL byte")


def kernel_error(
    kernel: KernelRecord, index: int, path: str, field: str, reason: str
) -> MalformedReport:
    """The error naming ``field`` of ``kernel`` (``index`` in its record) in its file ``path``.

    For a check made on a run of several files: it names the one file and its entry, not
    every file and the kernel's place in the merged run.
    """
    return MalformedReport(path, _entry(kernel, index, path), field, reason)


def _entry(kernel: KernelRecord, index: int, path: str) -> str:
    """The kernel's entry in its file, as an error names it (its name where it has no row).

    ncu's readers keep a kernel's first launch ID as its row: it is named so, not as a row.
    A record read back from roofguard JSON keeps the row of the file it was first read from,
    and one written with none has no row at all: in the JSON each is ``kernels[index]``, as
    its validation errors name it.
    """
    source = kernel.source
    if source is None or source.path != path:
        return f"kernels[{index}]"
    if source.row is None:
        return kernel.name
    return launch_label(source.row) if (source.format or "").startswith("ncu-") else source.row


def _duration_field(kernel: KernelRecord) -> str:
    provenance = kernel.provenance.get("duration")
    return provenance.metrics[0] if provenance and provenance.metrics else "duration_s"
