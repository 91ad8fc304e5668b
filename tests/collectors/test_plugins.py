"""The shared plugin loader: typed records, lazy imports, named failures and duplicates."""

from __future__ import annotations

import sys
import types

import pytest

from collectors import plugins, registry
from collectors.base import Collector
from collectors.formats.gbench_json import GoogleBenchmarkJson
from rules.base import Rule
from rules.errors import RuleDefinitionError
from rules.registry import loaded_rules


class _Error(Exception):
    pass


def test_builtin_collectors_load_as_typed_records() -> None:
    loaded = registry.loaded_collectors()
    by_name = {p.obj.name: p for p in loaded}
    gbench = by_name["gbench-json"]
    assert gbench == plugins.LoadedPlugin(
        "collectors.formats.gbench_json:GoogleBenchmarkJson", "builtin", GoogleBenchmarkJson
    )
    assert registry.all_collectors() == tuple(p.obj for p in loaded)


def test_rules_load_through_the_same_loader() -> None:
    roof_drop = loaded_rules()["roof-drop"]
    assert isinstance(roof_drop, plugins.LoadedPlugin)
    assert roof_drop.spec == "rules.catalog.roof_drop:RoofDrop"
    assert roof_drop.source == "builtin"
    assert issubclass(roof_drop.obj, Rule)


def test_a_failure_names_the_spec_and_its_entry_point() -> None:
    spec = plugins.PluginSpec("collectors.formats.gbench_json:Nope", "roofguard.collectors:mine")
    with pytest.raises(
        _Error, match=r"cannot load collector '.*:Nope' \(from roofguard\.collectors:mine\)"
    ):
        plugins.load(spec, Collector, "collector", _Error)  # type: ignore[type-abstract]


def test_a_class_of_the_wrong_kind_is_refused() -> None:
    spec = plugins.PluginSpec("rules.catalog.roof_drop:RoofDrop")
    with pytest.raises(_Error, match="is not a Collector subclass"):
        plugins.load(spec, Collector, "collector", _Error)  # type: ignore[type-abstract]
    with pytest.raises(RuleDefinitionError, match="is not a Rule subclass"):
        plugins.load(
            plugins.PluginSpec("collectors.formats.gbench_json:GoogleBenchmarkJson"),
            Rule,
            "rule",
            RuleDefinitionError,
        )


def test_two_collectors_with_one_name_are_both_named(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("fakepack_collect")

    class Copy(GoogleBenchmarkJson):
        pass

    module.Copy = Copy  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fakepack_collect", module)
    monkeypatch.setattr(
        registry, "BUILTIN_COLLECTORS", (*registry.BUILTIN_COLLECTORS, "fakepack_collect:Copy")
    )
    registry.loaded_collectors.cache_clear()
    try:
        with pytest.raises(
            registry.CollectorLoadError,
            match=r"duplicate collector name 'gbench-json': .*GoogleBenchmarkJson \(builtin\) "
            r"and fakepack_collect:Copy \(builtin\)",
        ):
            registry.loaded_collectors()
    finally:
        monkeypatch.undo()
        registry.loaded_collectors.cache_clear()
    assert registry.get("gbench-json") is GoogleBenchmarkJson


def test_every_collector_describes_itself_for_roofguard_formats() -> None:
    for collector in registry.all_collectors():
        assert collector.name and collector.description and collector.example, collector
        assert "\n" not in collector.description + collector.example, collector.name


def test_a_collector_without_a_description_is_refused() -> None:
    with pytest.raises(TypeError, match="lacks a 'description' string"):

        class Bare(GoogleBenchmarkJson):
            description = ""
