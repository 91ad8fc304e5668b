"""The one plugin loader both registries use (collectors and rules).

A plugin is named ``"module:Class"``, by a built-in tuple or by an entry point. Loading
imports the module lazily and checks the class; the result is a typed ``LoadedPlugin``
record (after flake8's ``LoadedPlugin``) that says where the plugin came from, so an error
about a duplicate name can name both sources. This module does no I/O beyond
``importlib.metadata`` and imports nothing of roofguard: ``rules`` may import it too.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

T = TypeVar("T")

#: Where a built-in plugin comes from, in ``LoadedPlugin.source``.
BUILTIN = "builtin"


@dataclass(frozen=True, slots=True)
class PluginSpec:
    """A plugin not yet imported.

    Attributes:
        spec: ``"module:Class"``.
        source: ``"builtin"``, or the entry point ``group:name`` that registered it.
    """

    spec: str
    source: str = BUILTIN


@dataclass(frozen=True, slots=True)
class LoadedPlugin(Generic[T]):
    """A plugin imported and checked.

    Attributes:
        spec: ``"module:Class"`` as registered.
        source: ``"builtin"``, or the entry point ``group:name`` that registered it.
        obj: The class.
    """

    spec: str
    source: str
    obj: type[T]


def discover(builtins: Iterable[str], group: str) -> list[PluginSpec]:
    """The built-in specs, then those of the entry-point ``group`` (nothing imported yet)."""
    found = [PluginSpec(spec) for spec in builtins]
    found += [PluginSpec(ep.value, f"{group}:{ep.name}") for ep in entry_points(group=group)]
    return found


def installed(group: str) -> tuple[str, ...]:
    """Each entry point of ``group`` as ``name = value (distribution version)``, sorted.

    What names the plugins a result depends on (a digest of an ingest's inputs): upgrading
    a plugin's distribution changes it.
    """
    return tuple(
        sorted(f"{ep.name} = {ep.value} ({_distribution(ep)})" for ep in entry_points(group=group))
    )


def _distribution(entry: EntryPoint) -> str:
    dist = entry.dist
    return f"{dist.name} {dist.version}" if dist is not None else "no distribution"


def load(
    plugin: PluginSpec, base: type[T], what: str, error: Callable[[str], Exception]
) -> LoadedPlugin[T]:
    """Import ``plugin`` and check that it is a subclass of ``base``.

    Args:
        plugin: What to load.
        base: The class every plugin of this kind derives from.
        what: The kind in words ("collector", "rule"), for messages.
        error: Builds the registry's own error from a message.

    Raises:
        Exception: ``error(message)`` when the import fails or the object is not a ``base``.
    """
    module_name, _, attr = plugin.spec.partition(":")
    origin = "" if plugin.source == BUILTIN else f" (from {plugin.source})"
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise error(f"cannot load {what} {plugin.spec!r}{origin}: {exc}") from exc
    if not (isinstance(obj, type) and issubclass(obj, base)):
        raise error(f"{plugin.spec!r}{origin} is not a {base.__name__} subclass")
    return LoadedPlugin(plugin.spec, plugin.source, obj)


def load_all(
    plugins: Iterable[PluginSpec],
    base: type[T],
    what: str,
    error: Callable[[str], Exception],
) -> list[LoadedPlugin[T]]:
    """Every plugin loaded, in order (see ``load``)."""
    return [load(plugin, base, what, error) for plugin in plugins]
