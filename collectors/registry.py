"""The collector registry: built-ins and entry-point plugins, loaded lazily by one loader."""

from __future__ import annotations

import codecs
import stat
from functools import cache
from pathlib import Path

from collectors import plugins
from collectors.base import Collector
from collectors.errors import CollectorError, UnknownFormat, UnsupportedEncoding

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


def installed_collectors() -> tuple[str, ...]:
    """The collector plugins installed (``plugins.installed``); the built-ins are roofguard's."""
    return plugins.installed(ENTRY_POINT_GROUP)


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
        _refuse_stream(path)
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise UnknownFormat(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    if not head.strip():
        raise UnknownFormat(str(path), "the file is empty")
    if not head.strip(b"\x00"):
        raise UnknownFormat(str(path), _zeros(path, len(head)))
    encoding = _foreign_encoding(head)
    if encoding is not None and not head.startswith(b"\x00"):  # a BOM, whatever follows
        raise _unsupported(path, encoding)
    for collector in all_collectors():
        if collector.sniff(head, path):
            return collector
    if encoding is not None:
        raise _unsupported(path, encoding)
    raise UnknownFormat(str(path))


def _refuse_stream(path: Path) -> None:
    """Refuse a pipe or a device, as a report is read twice (its format, then it).

    A stream gives its bytes once (``<(cat report.csv)`` read as empty) or never ends
    (``/dev/zero``).

    Raises:
        OSError: It cannot be looked at (no such file, no permission).
        UnknownFormat: It is no regular file or folder.
    """
    mode = path.stat().st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # a folder: open names it
        raise UnknownFormat(
            str(path),
            "not a regular file (a pipe or a device): write the report to a file and give "
            "that, since it is read twice",
        )


def _zeros(path: Path, head: int) -> str:
    """What a file that starts with zero bytes is (a disk full, a copy never written)."""
    with path.open("rb") as handle:
        handle.seek(head)
        while chunk := handle.read(1 << 20):
            if chunk.strip(b"\x00"):
                return f"the file starts with {head:,} zero bytes: it is damaged, not a report"
    size = path.stat().st_size
    return f"the file is all zero bytes ({size:,}): truncated or never written, not a report"


_BOMS = (
    (codecs.BOM_UTF8, "UTF-8-BOM"),
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def _foreign_encoding(head: bytes) -> str | None:
    """The encoding of text that is not plain UTF-8: a BOM, or UTF-16's NUL in every other byte."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    sample = head[:256]
    if len(sample) >= 8 and not any(sample[1::2]):
        return "UTF-16LE"
    if len(sample) >= 8 and not any(sample[0::2]):
        return "UTF-16BE"
    return None


def _unsupported(path: Path, encoding: str) -> UnsupportedEncoding:
    if encoding == "UTF-8-BOM":
        what, fix = "UTF-8 text with a byte-order mark", "remove the mark (e.g. with dos2unix)"
    else:
        what, fix = f"{encoding} text", f"convert it (iconv -f {encoding} -t UTF-8 FILE)"
    return UnsupportedEncoding(
        str(path), f"the file is {what}; roofguard reads UTF-8 text without a mark: {fix}"
    )
