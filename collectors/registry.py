"""The collector registry: built-ins and entry-point plugins, loaded lazily by one loader."""

from __future__ import annotations

import importlib
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path

from collectors.base import Collector
from collectors.errors import CollectorError, UnknownFormat

#: One line per built-in collector, as "module:Class". Plugins use the entry-point group
#: ``roofguard.collectors`` with the same form.
BUILTIN_COLLECTORS: tuple[str, ...] = (
    "collectors.formats.roofguard_json:RoofguardJson",
    "collectors.formats.nvbench_json:NvbenchJson",
    "collectors.formats.gbench_json:GoogleBenchmarkJson",
    "collectors.formats.pytest_benchmark_json:PytestBenchmarkJson",
    "collectors.formats.nvbench_csv:NvbenchCsv",
    "collectors.formats.nvbench_md:NvbenchMarkdown",
    "collectors.formats.kineto_trace:KinetoTrace",
    "collectors.formats.roofguard_csv:RoofguardCsv",
    "collectors.formats.ncu_csv_raw:NcuCsvRaw",
    "collectors.formats.ncu_csv_details:NcuCsvDetails",
    "collectors.formats.ncu_rep:NcuRep",
    "collectors.formats.ncu_text:NcuText",
)

SNIFF_BYTES = 64 * 1024


class CollectorLoadError(CollectorError):
    """A registered collector could not be loaded, or two share a name."""


def _load(spec: str) -> type[Collector]:
    module_name, _, attr = spec.partition(":")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise CollectorLoadError(f"cannot load collector {spec!r}: {exc}") from exc
    if not (isinstance(obj, type) and issubclass(obj, Collector)):
        raise CollectorLoadError(f"{spec!r} is not a Collector subclass")
    return obj


@cache
def all_collectors() -> tuple[type[Collector], ...]:
    """Every registered collector, highest priority first; names are unique."""
    specs = list(BUILTIN_COLLECTORS)
    specs += [ep.value for ep in entry_points(group="roofguard.collectors")]
    loaded = [_load(spec) for spec in specs]
    names = [c.name for c in loaded]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise CollectorLoadError(f"duplicate collector names: {sorted(dupes)}")
    return tuple(sorted(loaded, key=lambda c: -c.priority))


def get(name: str) -> type[Collector]:
    """The collector called ``name``."""
    for collector in all_collectors():
        if collector.name == name:
            return collector
    known = ", ".join(c.name for c in all_collectors())
    raise UnknownFormat(name, f"no collector named {name!r} (known: {known})")


def detect(path: Path) -> type[Collector]:
    """The collector whose ``sniff`` accepts the file's content.

    Raises:
        UnknownFormat: No collector accepts it (an empty file says so).
    """
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise UnknownFormat(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    if not head.strip():
        raise UnknownFormat(str(path), "the file is empty")
    for collector in all_collectors():
        if collector.sniff(head, path):
            return collector
    raise UnknownFormat(str(path))
