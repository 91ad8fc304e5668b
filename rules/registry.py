"""Where rules come from and which ones run.

Built-in rules (``rules.catalog.BUILTIN_RULES``) and third-party rules (entry-point group
``roofguard.rules``) go through the same lazy loader: nothing is imported until rules are
first asked for. Duplicate ids and load failures raise named errors: a CI gate should fail
loudly rather than silently skip a rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from typing import Any

from pydantic import ValidationError

from collectors import plugins
from rules.base import Rule, RuleOptions
from rules.config import RulesConfig
from rules.errors import RuleDefinitionError, RuleError, UnknownRule

ENTRY_POINT_GROUP = "roofguard.rules"


def load_plugins(
    specs: Iterable[str | plugins.PluginSpec],
) -> dict[str, plugins.LoadedPlugin[Rule]]:
    """Load rule plugins into ``{id: LoadedPlugin}``; two classes with one id are an error."""
    found: dict[str, plugins.LoadedPlugin[Rule]] = {}
    for spec in specs:
        plugin = spec if isinstance(spec, plugins.PluginSpec) else plugins.PluginSpec(spec)
        loaded = plugins.load(plugin, Rule, "rule", RuleDefinitionError)
        other = found.setdefault(loaded.obj.id, loaded)
        if other.obj is not loaded.obj:
            raise RuleDefinitionError(
                f"duplicate rule id {loaded.obj.id!r} ({loaded.spec}, {loaded.source}; "
                f"also {other.spec}, {other.source})"
            )
    return found


def load_rules(specs: Iterable[str | plugins.PluginSpec]) -> dict[str, type[Rule]]:
    """Load ``"module:Class"`` specs into ``{id: class}``; duplicate ids are an error."""
    return {rule_id: plugin.obj for rule_id, plugin in load_plugins(specs).items()}


@cache
def loaded_rules() -> Mapping[str, plugins.LoadedPlugin[Rule]]:
    """Every registered rule as a typed plugin record (built-in first, then plugins), by id."""
    from rules.catalog import BUILTIN_RULES

    return load_plugins(plugins.discover(BUILTIN_RULES, ENTRY_POINT_GROUP))


@cache
def all_rules() -> Mapping[str, type[Rule]]:
    """Every registered rule (built-in first, then plugins), by id. Loaded on first call."""
    return {rule_id: plugin.obj for rule_id, plugin in loaded_rules().items()}


def get_rule(rule_id: str) -> type[Rule]:
    """The rule with ``rule_id``.

    Raises:
        UnknownRule: No such rule; the message lists the known ids.
    """
    rules = all_rules()
    if rule_id not in rules:
        raise UnknownRule(f"unknown rule {rule_id!r} (known: {', '.join(sorted(rules))})")
    return rules[rule_id]


@cache
def above_roof_limit() -> float:
    """The percent of roof past which the above-roof rule flags a kernel (its default)."""
    options = get_rule("above-roof").Options()
    return 100.0 + float(options.model_dump()["tolerance_percent"])


def above_roof(percent: float | None) -> bool:
    """Whether ``percent`` of roof is one the above-roof rule flags at its default tolerance.

    For the views that place kernels without judging them (``inspect``, ``compare``).
    """
    return percent is not None and percent > above_roof_limit()


def _specificity(selector: str, rule: type[Rule]) -> int:
    """2: the rule's id, 1: its group, 0: "all"/"*", -1: no match."""
    if selector == rule.id:
        return 2
    if selector == rule.group:
        return 1
    return 0 if selector in ("all", "*") else -1


def check_selectors(config: RulesConfig, rules: Mapping[str, type[Rule]]) -> None:
    """Every id or group named in ``config`` exists (a typo must not silence a rule)."""
    known = {"all", "*", *rules, *(r.group for r in rules.values())}
    named = [*config.select, *(e.rule for e in config.ignore), *config.options]
    unknown = sorted({name for name in named if name not in known})
    if unknown:
        raise UnknownRule(f"unknown rule id(s) or group(s) in config: {', '.join(unknown)}")


def _selected_level(rule: type[Rule], config: RulesConfig) -> int:
    return max((_specificity(s, rule) for s in config.select), default=-1)


def _matches(pattern: str, key: str, name: str | None) -> bool:
    return fnmatchcase(key, pattern) or bool(name and fnmatchcase(name, pattern))


def is_selected(rule: type[Rule], config: RulesConfig) -> bool:
    """Whether ``rule`` runs at all.

    It runs when selected and no blanket ignore (``kernels = "*"``) is at least as specific as
    the selection: ``select = ["regime-flip"]`` beats an ignore of its group "regime".
    """
    selected = _selected_level(rule, config)
    blanket = [e for e in config.ignore if e.kernels == "*"]
    ignored = max((_specificity(e.rule, rule) for e in blanket), default=-1)
    return selected >= 0 and (ignored < 0 or ignored < selected)


def is_ignored(rule: type[Rule], key: str, name: str | None, config: RulesConfig) -> bool:
    """Whether an ``ignore`` entry covers ``rule`` on kernel ``key`` (key or name glob).

    The entry must name the rule at least as specifically as ``select`` does.
    """
    selected = _selected_level(rule, config)
    return any(
        _specificity(e.rule, rule) >= max(selected, 0) and _matches(e.kernels, key, name)
        for e in config.ignore
    )


@dataclass(frozen=True)
class SelectedRule:
    """A rule chosen to run, with its validated options."""

    rule: type[Rule]
    options: RuleOptions


def validate_options(rule: type[Rule], raw: Mapping[str, Any]) -> RuleOptions:
    """``raw`` validated against ``rule.Options``; the error names ``options.<id>.<key>``."""
    try:
        return rule.Options.model_validate(dict(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise RuleError(f"options.{rule.id}.{where}: {first['msg']}") from exc


def selected_rules(
    config: RulesConfig, rules: Mapping[str, type[Rule]] | None = None
) -> list[SelectedRule]:
    """The rules ``config`` selects, in registry order, each with its validated options."""
    pool = all_rules() if rules is None else rules
    check_selectors(config, pool)
    return [
        SelectedRule(rule, validate_options(rule, config.options.get(rule.id, {})))
        for rule in pool.values()
        if is_selected(rule, config)
    ]
