"""The collector registry: built-ins and entry-point plugins, loaded lazily by one loader."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from collectors import plugins
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


ENTRY_POINT_GROUP = "roofguard.collectors"


@cache
def loaded_collectors() -> tuple[plugins.LoadedPlugin[Collector], ...]:
    """Every registered collector as a typed plugin record, highest priority first.

    Raises:
        CollectorLoadError: A collector cannot be loaded, or two share a name (both named).
    """
    found = plugins.load_all(
        plugins.discover(BUILTIN_COLLECTORS, ENTRY_POINT_GROUP),
        Collector,  # type: ignore[type-abstract]  # the ABC is what plugins are checked against
        "collector",
        CollectorLoadError,
    )
    first: dict[str, plugins.LoadedPlugin[Collector]] = {}
    for plugin in found:
        other = first.setdefault(plugin.obj.name, plugin)
        if other is not plugin and other.obj is not plugin.obj:
            raise CollectorLoadError(
                f"duplicate collector name {plugin.obj.name!r}: "
                f"{other.spec} ({other.source}) and {plugin.spec} ({plugin.source})"
            )
    return tuple(sorted(first.values(), key=lambda p: -p.obj.priority))


def all_collectors() -> tuple[type[Collector], ...]:
    """Every registered collector class, highest priority first; names are unique."""
    return tuple(plugin.obj for plugin in loaded_collectors())


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
