"""roofguard's own JSON: a RunRecord, exactly (``roofguard inspect --json`` writes it)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import ValidationError

from collectors.base import Collector
from collectors.errors import MalformedReport, stated_version, validation_reason
from collectors.schema import RunRecord, version_fault


def _location(loc: tuple[int | str, ...]) -> tuple[str | None, str | None]:
    """Split a pydantic error location into (entry, field), e.g. ('kernels[3]', 'duration_s')."""
    parts = [str(p) for p in loc]
    if len(parts) >= 2 and parts[0] == "kernels":
        return f"kernels[{parts[1]}]", ".".join(parts[2:]) or None
    return None, ".".join(parts) or None


#: Why a list of records (``roofguard inspect --json`` of several reports) is refused.
_LIST = (
    "a JSON list of runs (`roofguard inspect --json` of several reports); a file holds one "
    "run on one device: write each report's on its own (`roofguard inspect REPORT --json`)"
)


class RoofguardJson(Collector):
    """A RunRecord serialised as JSON."""

    name = "roofguard-json"
    description = "roofguard's own JSON: a RunRecord exactly"
    example = "roofguard inspect REPORT --json > run.json"
    suffixes = (".json",)
    priority = 10

    #: RunRecord keys no other JSON roofguard reads or writes has at the top.
    _OWN: ClassVar[tuple[bytes, ...]] = (b'"schema_version"', b'"profiler"')
    #: RunRecord keys that other JSON has too (nvbench's ``device``, a digest's ``kernels``).
    _SHARED: ClassVar[tuple[bytes, ...]] = (b'"device"', b'"kernels"')

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """A JSON object (or a list of them) with two RunRecord keys, one of them its own.

        Two, not all required ones: a record that lacks ``device`` is refused naming it.
        """
        text = head.lstrip()
        opened = text.startswith(b"{") or (text[:1] == b"[" and text[1:].lstrip()[:1] == b"{")
        own = sum(m in head for m in cls._OWN)
        return opened and own > 0 and own + sum(m in head for m in cls._SHARED) >= 2

    def parse(self, path: Path) -> RunRecord:
        """Validate the file against the RunRecord schema, its JSON types strictly.

        Strict: ``true`` or ``"0.001"`` is no number and ``3.0`` no count (lax validation read
        them as 1 s, 1 ms and 3). An integer is still a number, and enums, timestamps and
        lists read from their JSON text as the schema writes them.
        """
        data = path.read_bytes()
        if data.lstrip().startswith(b"["):
            raise MalformedReport(str(path), None, None, _LIST)
        # Every kernel has one duration_s (the device has none): counted before validating.
        self.options.count(data.count(b'"duration_s"'), path)
        try:
            record = RunRecord.model_validate_json(data, strict=True)
        except ValidationError as exc:
            # A newer version's record may fail on its new fields: its version is the reason.
            _refuse_version(path, stated_version(data))
            err = exc.errors()[0]
            row, field = _location(tuple(err["loc"]))
            raise MalformedReport(str(path), row, field, validation_reason(err)) from exc
        _refuse_version(path, record.schema_version)
        return record


def _refuse_version(path: Path, version: object) -> None:
    fault = version_fault(version)
    if fault is not None:
        raise MalformedReport(str(path), None, "schema_version", fault)
