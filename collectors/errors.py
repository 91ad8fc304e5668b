"""Errors raised by collectors. Each names the file, the row or entry, and the field."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

#: How much of a value from the file an error message quotes (fields may be 100,000 long).
QUOTED = 60


def shown(value: object, limit: int = QUOTED) -> str:
    """``repr(value)`` for a message: cut to ``limit`` characters, saying how long it was.

    An integer past ``int``'s digit limit cannot even be written out; it is described.
    """
    try:
        text = repr(value)
    except ValueError:  # int -> str refuses more than sys.get_int_max_str_digits() digits
        return "an integer of too many digits to show"
    if len(text) <= limit:
        return text
    size = f"{len(str(value).lstrip('-')):,} digits" if isinstance(value, int) else ""
    return f"{text[:limit]}... ({size or f'{len(str(value)):,} characters'})"


def validation_reason(err: ErrorDetails) -> str:
    """A validation error's message, with the JSON value a type error found (``got true``)."""
    if not err["type"].endswith("_type") or "input" not in err:
        return err["msg"]
    value = err["input"]
    if isinstance(value, bool) or value is None:
        found = {True: "true", False: "false", None: "null"}[value]
    elif isinstance(value, str):
        found = f"the string {shown(value)}"
    elif isinstance(value, dict | list):
        found = "an object" if isinstance(value, dict) else "a list"
    else:
        found = shown(value)
    return f"{err['msg']}, got {found}"


class CollectorError(Exception):
    """Base class of every collector error."""

    FORMAT = "{reason}"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(self.FORMAT.format(**vars(self)))


class UnknownFormat(CollectorError):
    """No collector recognises the file."""

    FORMAT = "{path}: {reason}"

    def __init__(self, path: str, reason: str = "") -> None:
        self.path = path
        super().__init__(reason or "not a format roofguard reads (see `roofguard formats`)")


class UnsupportedEncoding(UnknownFormat):
    """The file is text in an encoding roofguard does not read (UTF-16, or UTF-8 with a BOM)."""


class TooManyKernels(CollectorError):
    """The file holds more kernels than one run may (``CollectOptions.max_kernels``).

    Raised while reading, at the first kernel past the cap, so a huge upload is refused
    before it is parsed in full.
    """

    FORMAT = "{path}: {reason}"

    def __init__(self, path: str, limit: int) -> None:
        self.path = str(path)
        self.limit = limit
        super().__init__(
            f"more than {limit:,} kernels, the most one run may hold "
            "(ROOFGUARD_MAX_UPLOAD_KERNELS); split it by device or benchmark family"
        )


class CollectorBug(CollectorError):
    """A collector failed in a way it does not name yet: a bug, reported without a traceback.

    Attributes:
        path: The file.
        cause: The exception's type and message.
    """

    FORMAT = "{path}: {reason}"

    def __init__(self, path: str, cause: BaseException | str) -> None:
        self.path = str(path)
        self.cause = cause if isinstance(cause, str) else f"{type(cause).__name__}: {cause}"
        super().__init__(
            f"could not be read ({self.cause}); this is a roofguard bug, please report it "
            "with the file"
        )


class MissingExtra(CollectorError):
    """An optional dependency needed for this format is not installed."""

    FORMAT = "{path}: {reason}"

    def __init__(self, path: str, extra: str, module: str) -> None:
        self.path = path
        self.extra = extra
        self.module = module
        super().__init__(
            f"reading this format needs the Python module {module!r}; "
            f"install it with: pip install 'roofguard[{extra}]'"
        )


class MalformedReport(CollectorError):
    """The file is of a known format but its content is wrong.

    Attributes:
        path: The file.
        row: The line, row, launch ID or entry (None when it concerns the whole file).
        field: The column, metric or key (None when it concerns the whole row).
        reason: What is wrong, in words a person understands.
    """

    def __init__(self, path: str, row: str | int | None, field: str | None, reason: str) -> None:
        self.path = str(path)
        self.row = None if row is None else str(row)
        self.field = field
        super().__init__(reason)

    def __str__(self) -> str:
        where = self.path
        if self.row is not None:  # a location with a name ("line 12", "launch ID 4") as it is
            named = self.row.startswith(("line ", "launch ID "))
            where += f", {'' if named else 'row '}{cut(self.row)}"
        if self.field is not None:
            where += f", field {shown(self.field)}"
        return f"{where}: {self.reason}"


def launch_label(launch_id: str) -> str:
    """How an error names an ncu launch known by its ID alone (not by the file's row or line)."""
    return f"launch ID {launch_id}"


def cut(text: str) -> str:
    """``text`` from the file for a message, cut to ``QUOTED`` characters (unquoted)."""
    return text if len(text) <= QUOTED else f"{text[:QUOTED]}... ({len(text):,} characters)"


class ReaderCrashed(MalformedReport):
    """The reader of a file (native code in a child process) crashed or overran its limits.

    The file concerns the whole report: there is no row or field to name.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, None, None, reason)


def stated_version(data: bytes) -> object:
    """The ``schema_version`` a RunRecord's JSON text states (None: not a JSON object).

    Read where validation failed: a newer version's record may fail on its new fields, and
    its version is then the reason to give.
    """
    try:
        found = json.loads(data)
    except ValueError:  # not JSON at all: validation says where
        return None
    return found.get("schema_version") if isinstance(found, dict) else None
