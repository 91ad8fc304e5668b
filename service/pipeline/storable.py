"""What the history store can hold, checked at the edge: one clear error, never a 500.

A run's fields go into typed columns: ``commit`` is VARCHAR(64), ``branch`` VARCHAR(255),
and PostgreSQL refuses a NUL byte in any text. SQLite takes all of it, so a check that
passed on a laptop would fail on the service with a database error. Every path into the
store (``ingest``, ``check``, the upload form, a JSON upload) runs ``refuse_unstorable``
first, so a value past a column's type is bad input naming its field (exit 2, 422).

Kernel names and identity keys are capped (64 KiB by default): the longest demangled C++
names of the corpus are 4.8 KB (CUTLASS templates; CUTLASS 3's run past 10 KB), and a 60 MB
name made every page and answer that lists the run as large. Figures no device could
measure (``collectors.run_fault``) are refused here too, for records that reach the service
without passing a collector (a JSON upload, work models).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from collectors import kernel_error, run_fault
from collectors.schema import RunRecord
from service.errors import BadInput, ServiceError

if TYPE_CHECKING:  # pydantic-settings: imported where the settings are read
    from service.pipeline.runmeta import RunMeta
    from service.settings import Settings

#: Longest kernel name or identity key, in UTF-8 bytes (ROOFGUARD_MAX_NAME_BYTES).
MAX_NAME_BYTES = 65_536
#: Most kernels one run may hold (ROOFGUARD_MAX_UPLOAD_KERNELS).
MAX_KERNELS = 200_000

#: Run fields stored in VARCHAR columns, by their width (service.store.tables).
_WIDTHS: tuple[tuple[str, int], ...] = (
    ("repo", 200),
    ("commit", 64),
    ("branch", 255),
    ("runner", 255),
    ("device.name", 200),
    ("device.driver", 64),
    ("profiler.tool", 64),
    ("profiler.version", 64),
    ("profiler.clock_control", 32),
    ("profiler.cache_control", 32),
)


#: The command-line flags that set a stored field: (flag, ``RunMeta`` attribute, field).
_FLAGS: tuple[tuple[str, str, str], ...] = (
    ("--repo", "repo", "repo"),
    ("--commit", "commit", "commit"),
    ("--branch", "branch", "branch"),
    ("--runner", "runner", "runner"),
    ("--device", "device", "device.name"),
)


def refuse_unstorable_flags(meta: RunMeta) -> None:
    """Raise BadInput naming the flag whose value the store cannot hold, before any reading.

    Found once the run was read, the error named the report file for a flag's value.
    """
    widths = dict(_WIDTHS)
    for flag, attribute, field in _FLAGS:
        _check_column(getattr(meta, attribute), flag, widths[field])


class RunTooLarge(ServiceError):
    """The run holds more kernels than one run may (413; exit 2)."""

    status = 413


def too_many(count: int, limit: int, where: str) -> RunTooLarge:
    """The error for a run of ``count`` kernels past ``limit``."""
    return RunTooLarge(
        f"{where}: the run holds {count:,} kernels, more than the {limit:,} one run may hold "
        "(ROOFGUARD_MAX_UPLOAD_KERNELS); split it by device or benchmark family"
    )


@dataclass(frozen=True)
class StoreLimits:
    """What one run may hold (the settings ``max_name_bytes`` and ``max_upload_kernels``)."""

    max_name_bytes: int = MAX_NAME_BYTES
    max_kernels: int = MAX_KERNELS

    @classmethod
    def of(cls, settings: Settings) -> StoreLimits:
        """The limits ``settings`` set (``ROOFGUARD_MAX_NAME_BYTES``, ``..._UPLOAD_KERNELS``)."""
        return cls(max_name_bytes=settings.max_name_bytes, max_kernels=settings.max_upload_kernels)


def _field(record: RunRecord, dotted: str) -> str | None:
    value: object = record
    for part in dotted.split("."):
        value = getattr(value, part)
    return value if isinstance(value, str) else None


def refuse_unstorable(
    record: RunRecord, *, where: str, limits: StoreLimits, files: Sequence[str] = ()
) -> None:
    """Raise BadInput naming the first field of ``record`` the store cannot hold.

    A kernel read from one of ``files`` (the run's reports) is named by that file and its
    entry there, not by every file of ``where`` and its place in the merged run.

    Raises:
        RunTooLarge: More kernels than ``limits.max_kernels``.
        BadInput: A field too long for its column, a NUL byte in stored text, a kernel name
            or key past ``limits.max_name_bytes``, or a figure no device could measure.
    """
    if len(record.kernels) > limits.max_kernels:
        raise too_many(len(record.kernels), limits.max_kernels, where)
    for dotted, width in _WIDTHS:
        _check_column(_field(record, dotted), f"{where}: {dotted}", width)
    for index, kernel in enumerate(record.kernels):
        for name, value in (("name", kernel.name), ("key", kernel.key)):
            wrong = _name_fault(value, limits.max_name_bytes)
            if wrong is None:
                continue
            source = kernel.source.path if kernel.source else None
            if source is not None and source in files:
                raise BadInput(str(kernel_error(kernel, index, source, name, wrong)))
            raise BadInput(f"{where}: kernels.{index}.{name}: {wrong}")
    fault = run_fault(record)
    if fault is not None:
        at, field, reason = fault
        entry = "" if at is None else f"kernels.{at}."
        raise BadInput(f"{where}: {entry}{field}: {reason}")


def _check_column(value: str | None, where: str, width: int) -> None:
    """Raise BadInput when ``value`` has a NUL byte or is longer than its column's ``width``."""
    if value is None:
        return
    if "\x00" in value:
        raise BadInput(f"{where}: contains a NUL byte")
    if len(value) > width:
        raise BadInput(f"{where}: {len(value):,} characters, at most {width}")


def _check_name(value: str, where: str, limit: int) -> None:
    fault = _name_fault(value, limit)
    if fault is not None:
        raise BadInput(f"{where}: {fault}")


def _name_fault(value: str, limit: int) -> str | None:
    """Why the store cannot hold ``value`` as a kernel name or key, else None."""
    if "\x00" in value:
        return "contains a NUL byte"
    # Four bytes a character at most: most names are decided without encoding them.
    if len(value) * 4 > limit and len(value.encode("utf-8", "replace")) > limit:
        return (
            f"{len(value.encode('utf-8', 'replace')):,} bytes, longer than the "
            f"{limit:,} a kernel name may be (ROOFGUARD_MAX_NAME_BYTES); starts {value[:60]!r}"
        )
    return None
