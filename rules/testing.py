"""Data-driven rule cases: YAML files of ``pass_*`` and ``fail_*`` cases, for our tests and packs.

A case file ``<rule-id>.yml``::

    rule: roof-drop
    device: {name: tiny, peak_flop_per_s: {fp32: 1.0e12}, bandwidth_byte_per_s: {dram: 1.0e11}}
    cases:
      fail_gemv_fusion_lost:
        baseline:            # a block, or a list of blocks (runs are concatenated)
          runs: 5
          env: {driver: "550.54"}
          kernels:
            - {key: gemv, flops: {fp32: 1.0e9}, bytes: {dram: 1.0e9},
               times: [0.0100, 0.0101, 0.0099, 0.0100, 0.0102]}
        current:
          env: {driver: "550.54"}
          kernels:
            - {key: gemv, flops: {fp32: 1.0e9}, bytes: {dram: 1.0e9}, time_s: 0.0125}
        options: {z_threshold: 4}       # the rule's options (optional)
        config: {aliases: {}}            # other RulesConfig fields (optional)
        alongside: [time-regression]     # rules run with it, their findings not compared
        expected:
          - {rule: roof-drop, kernel: gemv, severity: fail}

A kernel row has ``key`` (``name`` defaults to it), ``flops`` and ``bytes`` (by precision and
tier), ``time_s`` or per-run ``times``, and optionally ``samples_s``, ``launches``,
``failed_launches`` and ``nvtx``.
Env keys: ``driver``, ``clock_control``, ``cache_control``, ``trusted`` (baseline only).
A device may be a catalog card (``device: {catalog: H100-SXM5}``); a case's
``other_device: {device: ..., baseline: ...}`` is another card's history
(``RuleContext.cross_device``), its runs before the case's own.
The case passes when the findings of its rule are exactly ``expected`` as
``(rule, kernel, severity)``; ``pass_*`` cases expect none (or only ``info``).
``load_cases`` is the one place in ``rules`` that reads files, and only tests call it; the
engine and the rules never do.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from collectors.schema import DeviceInfo, KernelRecord, ProfilerInfo, RunKind, RunRecord
from rules.config import RulesConfig
from rules.context import RuleContext
from rules.crossdevice import DeviceBaseline
from rules.errors import RuleError
from rules.frames import history_from_runs
from rules.hardware import builtin_catalog
from rules.roofline import Roof

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
Expected = tuple[str, str | None, str]


@dataclass(frozen=True)
class RuleCase:
    """One YAML case.

    Attributes:
        rule: The rule under test.
        name: The case name (``pass_*`` or ``fail_*``).
        source: Where it came from (file path), for messages.
        spec: The case mapping as read.
        device: The file's device (a case may override it).
    """

    rule: str
    name: str
    source: str
    spec: Mapping[str, Any]
    device: Mapping[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """Test id, e.g. ``roof-drop/fail_gemv_fusion_lost``."""
        return f"{self.rule}/{self.name}"

    @property
    def alongside(self) -> tuple[str, ...]:
        """Rules run with the rule under test (the gate's, for a rule reading its decisions)."""
        return tuple(self.spec.get("alongside", ()))

    @property
    def expected(self) -> set[Expected]:
        """Expected findings of the rule as (rule, kernel, severity)."""
        return {(e["rule"], e.get("kernel"), e["severity"]) for e in self.spec.get("expected", [])}

    def context(self) -> RuleContext:
        """The ``RuleContext`` the case describes."""
        return build_context(self)


def _floats(table: Mapping[str, Any]) -> dict[str, float]:
    # YAML 1.1 reads 1.0e12 (no exponent sign) as a string: accept it as a number.
    return {str(k): float(v) for k, v in table.items()}


def _roof(spec: Mapping[str, Any]) -> Roof:
    if "catalog" in spec:
        return builtin_catalog().lookup(str(spec["catalog"])).roof()
    return Roof(
        spec.get("name", "tiny"),
        spec.get("source", "datasheet"),
        _floats(spec.get("peak_flop_per_s", {})),
        _floats(spec.get("bandwidth_byte_per_s", {})),
    )


def _kernel(row: Mapping[str, Any], run_index: int) -> KernelRecord:
    times = row.get("times")
    time_s = times[run_index % len(times)] if times else row["time_s"]
    return KernelRecord(
        name=row.get("name", row["key"]),
        key=row["key"],
        duration_s=time_s,
        flops=row.get("flops", {}),
        bytes=row.get("bytes", {}),
        samples_s=tuple(row.get("samples_s", ())),
        launches=row.get("launches", 1),
        failed_launches=row.get("failed_launches", 0),
        nvtx_range=row.get("nvtx"),
    )


def _run(
    block: Mapping[str, Any], index: int, device: str, when: datetime, kind: RunKind
) -> RunRecord:
    env = block.get("env", {})
    return RunRecord(
        commit=f"{index:07x}" if kind == RunKind.NIGHTLY else "c0ffee0",
        kind=kind,
        timestamp=when,
        device=DeviceInfo(name=env.get("device", device), driver=env.get("driver")),
        profiler=ProfilerInfo(
            tool="test",
            clock_control=env.get("clock_control"),
            cache_control=env.get("cache_control"),
        ),
        kernels=tuple(_kernel(row, index) for row in block.get("kernels", [])),
    )


def _block_runs(block: Mapping[str, Any]) -> int:
    lengths = [len(row["times"]) for row in block.get("kernels", []) if row.get("times")]
    return int(block.get("runs", max(lengths, default=1)))


def _history(
    spec: Mapping[str, Any], roof: Roof, start: datetime = EPOCH
) -> tuple[list[RunRecord], list[bool]]:
    blocks = spec.get("baseline") or []
    blocks = [blocks] if isinstance(blocks, Mapping) else blocks
    runs: list[RunRecord] = []
    trusted: list[bool] = []
    for block in blocks:
        for i in range(_block_runs(block)):
            when = start + timedelta(days=len(runs))
            runs.append(_run(block, i, roof.device, when, RunKind.NIGHTLY))
            trusted.append(bool(block.get("env", {}).get("trusted", True)))
    return runs, trusted


def build_context(case: RuleCase) -> RuleContext:
    """Build the run, the history frame and the config of ``case``."""
    spec = case.spec
    roof = _roof({**case.device, **spec.get("device", {})})
    extra = dict(spec.get("config", {}))
    options = {case.rule: spec.get("options", {}), **extra.pop("options", {})}
    config = RulesConfig.model_validate({**extra, "options": options})
    runs, trusted = _history(spec, roof)
    frame = history_from_runs(
        runs,
        roof,
        band=config.borderline_band,
        trusted=trusted,
        devices=[r.device.name for r in runs],
    )
    current = spec["current"]
    when = EPOCH + timedelta(days=len(runs) + 1)
    # A case's run is a PR run unless it says `kind: nightly` (then judge_latest judges it);
    # `reruns` are re-measurements of its commit; `remeasure: true` (the API's field) says
    # the caller will rerun the suspects.
    kind = RunKind(current.get("kind", "pr"))
    run = _run(current, 0, roof.device, when, kind)
    reruns = tuple(_run(r, 0, roof.device, when, kind) for r in current.get("reruns", []))
    others = tuple(_roof(r) for r in spec.get("other_roofs", []))
    return RuleContext(
        cross_device=_other_device(spec.get("other_device"), config),
        run=run,
        roof=roof,
        history=frame,
        config=config,
        other_roofs=others,
        trusted=bool(current.get("env", {}).get("trusted", True)),
        reruns=reruns,
        reruns_expected=bool(current.get("remeasure", False)),
    )


def _other_device(spec: Mapping[str, Any] | None, config: RulesConfig) -> DeviceBaseline | None:
    """Another card's history (``other_device:``), its runs before the case's own."""
    if not spec:
        return None
    roof = _roof(spec.get("device", {}))
    runs, trusted = _history(spec, roof, EPOCH - timedelta(days=365))
    frame = history_from_runs(runs, roof, band=config.borderline_band, trusted=trusted)
    return DeviceBaseline(roof, frame)


def cases_from_document(document: Mapping[str, Any], source: str) -> list[RuleCase]:
    """The cases of one parsed YAML document (``rule``, ``device``, ``cases``)."""
    rule = document.get("rule")
    if not isinstance(rule, str) or not isinstance(document.get("cases"), Mapping):
        raise RuleError(f"{source}: a case file needs 'rule' and a 'cases' mapping")
    cases = []
    for name, spec in document["cases"].items():
        if not str(name).startswith(("pass_", "fail_")):
            raise RuleError(f"{source}: case {name!r} must start with pass_ or fail_")
        cases.append(RuleCase(rule, str(name), source, spec, document.get("device", {})))
    return cases


def yaml_documents(pattern: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(path, parsed document)`` for every YAML file matching ``pattern``, sorted by path."""
    for path in sorted(glob.glob(pattern)):
        with open(path, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
        if not isinstance(document, Mapping):
            raise RuleError(f"{path}: a case file must be a YAML mapping")
        yield path, document


def load_cases(
    pattern: str,
    *,
    read: Callable[[str], Iterable[tuple[str, Mapping[str, Any]]]] = yaml_documents,
) -> list[RuleCase]:
    """Every case of the YAML files matching ``pattern``.

    Args:
        pattern: A glob, e.g. ``tests/rules/cases/*.yml``.
        read: Yields ``(path, parsed document)`` for the glob (default: ``yaml_documents``).
    """
    cases: list[RuleCase] = []
    for path, document in read(pattern):
        cases.extend(cases_from_document(document, path))
    return cases
