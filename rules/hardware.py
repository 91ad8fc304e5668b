"""The hardware catalog: dense datasheet peaks per precision and bandwidth per tier.

The catalog is packaged data (``hardware_catalog.toml``), read with ``importlib.resources``.
Users add devices and override any figure by passing overrides (the service layer reads them
from ``roofguard.toml``); this module does no user I/O.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from collectors.schema import DeviceInfo, NonNeg, Precision, Tier
from rules.errors import RuleError
from rules.roofline import Roof


class UnknownDevice(RuleError):
    """A device name that matches nothing in the catalog."""

    def __init__(self, name: str, suggestions: list[str]) -> None:
        self.name = name
        self.suggestions = suggestions
        hint = f"; closest known: {', '.join(suggestions)}" if suggestions else ""
        super().__init__(
            f"unknown device {name!r}{hint} (see `roofguard devices`, or add it in roofguard.toml)"
        )


class DeviceSpec(BaseModel):
    """One catalog device.

    Attributes:
        id: Catalog id, e.g. "H100-SXM5".
        display: Human name.
        vendor: NVIDIA, AMD, Google ...
        arch: Architecture and chip.
        memory_gb: Device memory in GB.
        boost_clock_hz: Boost clock the datasheet peaks assume.
        memory_clock_hz: Nominal DRAM clock the datasheet bandwidth assumes, on ncu's scale
            (``device__attribute_memory_clock_rate``, what ``dram__cycles_elapsed`` runs at).
        sm_count: SMs or CUs.
        aliases: Names tools print for it ("NVIDIA H100 80GB HBM3").
        source: Where the figures come from.
        peak_flop_per_s: Dense peak per precision.
        bandwidth_byte_per_s: Bandwidth per tier.
        l2_cache_bytes: L2 cache size in bytes (None: not in the catalog).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    display: str = ""
    vendor: str = ""
    arch: str = ""
    memory_gb: NonNeg | None = None
    boost_clock_hz: NonNeg | None = None
    memory_clock_hz: NonNeg | None = None
    sm_count: int | None = None
    aliases: tuple[str, ...] = ()
    source: str = ""
    peak_flop_per_s: dict[Precision, NonNeg] = Field(default_factory=dict)
    bandwidth_byte_per_s: dict[Tier, NonNeg] = Field(default_factory=dict)
    l2_cache_bytes: NonNeg | None = None
    # The peaks and bandwidths a configuration set (``Roof.from_config``): not a field, so no
    # catalog or configuration entry can claim to be the datasheet's.
    _from_config: tuple[str, ...] = PrivateAttr(default=())

    def roof(self) -> Roof:
        """The datasheet roof of this device."""
        return Roof(
            self.id,
            "datasheet",
            dict(self.peak_flop_per_s),
            dict(self.bandwidth_byte_per_s),
            self.l2_cache_bytes,
            self._from_config,
        )

    def overridden(self, override: Mapping[str, Any]) -> DeviceSpec:
        """A copy with ``override``'s figures merged in (nested tables merge key by key)."""
        data = self.model_dump()
        for key, value in override.items():
            if isinstance(value, Mapping) and isinstance(data.get(key), dict):
                data[key] = {**data[key], **value}
            else:
                data[key] = value
        return DeviceSpec.model_validate(data)._marked((*self._from_config, *_figures(override)))

    def _marked(self, from_config: Sequence[str]) -> DeviceSpec:
        """This spec with ``from_config`` marked as the configuration's figures."""
        self._from_config = tuple(dict.fromkeys(from_config))
        return self


def _figures(override: Mapping[str, Any]) -> list[str]:
    """The peaks and bandwidths (precisions and tiers) a ``[devices]`` table sets."""
    return [
        str(name)
        for table in ("peak_flop_per_s", "bandwidth_byte_per_s")
        if isinstance(override.get(table), Mapping)
        for name in override[table]
    ]


def normalise_name(name: str) -> str:
    """Fold a device name for matching: case, vendor words and punctuation do not matter."""
    folded = name.lower()
    folded = re.sub(r"\b(nvidia|tesla|geforce|amd|radeon|instinct|google)\b", " ", folded)
    return re.sub(r"[^a-z0-9]+", "", folded)


#: Families whose model number's first digit is the generation (RTX 3090: Ampere, 2080: Turing);
#: elsewhere the letter is the generation (V100 Volta, A100 Ampere, H100 Hopper, MI300 CDNA3).
_SERIES_FAMILIES = frozenset({"rtx", "gtx", "rtxa", "quadro"})
_MODEL = re.compile(r"([a-z]+?)(\d+)")


def _family(key: str) -> tuple[str, str, str]:
    """(letters, number, generation) of a folded name: "rtx3090" -> ("rtx", "3090", "rtx3")."""
    found = _MODEL.search(key)
    if found is None:
        return key, "", key
    letters, number = found.groups()
    generation = letters + number[0] if letters in _SERIES_FAMILIES else letters
    return letters, number, generation


def _kinship(name: str, candidate: str) -> int:
    """3 same model (V100 and V100), 2 same generation, 1 same family letters, 0 none."""
    a, b = _family(name), _family(candidate)
    if a[0] == b[0] and a[1] == b[1] and a[1]:
        return 3
    if a[2] == b[2]:
        return 2
    return 1 if a[0] == b[0] else 0


class Catalog:
    """A set of devices with alias lookup."""

    def __init__(self, devices: Mapping[str, DeviceSpec]) -> None:
        self.devices = dict(devices)
        self._index: dict[str, str] = {}
        for spec in self.devices.values():
            for name in (spec.id, spec.display, *spec.aliases):
                if name:
                    self._index.setdefault(normalise_name(name), spec.id)

    def lookup(self, name: str) -> DeviceSpec:
        """The device called ``name`` (catalog id, display name or alias).

        Raises:
            UnknownDevice: Nothing matches; the error lists the closest known names.
        """
        if name in self.devices:
            return self.devices[name]
        device_id = self._index.get(normalise_name(name))
        if device_id is None:
            raise UnknownDevice(name, self.suggest(name))
        return self.devices[device_id]

    def find(self, name: str) -> DeviceSpec | None:
        """Like ``lookup`` but None when unknown."""
        try:
            return self.lookup(name)
        except UnknownDevice:
            return None

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """The catalog ids closest to ``name``: same model, then generation, then family.

        A V100-PCIe suggests the V100-SXM2 before an H100, however alike the strings; within
        one rank the string similarity decides, and unrelated names need a similar string.
        """
        key = normalise_name(name)
        best: dict[str, tuple[int, float]] = {}
        for known, device_id in self._index.items():
            kin = _kinship(key, known)
            ratio = difflib.SequenceMatcher(None, key, known).ratio()
            if kin == 0 and ratio < 0.4:
                continue
            best[device_id] = max(best.get(device_id, (0, 0.0)), (kin, ratio))
        ranked = sorted(best, key=lambda d: best[d], reverse=True)
        return ranked[:n]

    def with_overrides(self, overrides: Mapping[str, Mapping[str, Any]]) -> Catalog:
        """A catalog where ``overrides`` (id -> fields) modify or add devices."""
        devices = dict(self.devices)
        for name, override in overrides.items():
            existing = self.find(name)
            if existing is not None:
                devices[existing.id] = existing.overridden(override)
            else:
                added = DeviceSpec.model_validate({"id": name, **override})
                devices[name] = added._marked(_figures(override))
        return Catalog(devices)


def _parse(text: str) -> Catalog:
    raw = tomllib.loads(text)
    devices: dict[str, DeviceSpec] = {}
    for device_id, fields in raw.get("devices", {}).items():
        try:
            devices[device_id] = DeviceSpec.model_validate({"id": device_id, **fields})
        except ValidationError as exc:
            raise RuleError(f"hardware catalog, device {device_id!r}: {exc}") from exc
    return Catalog(devices)


@cache
def builtin_catalog() -> Catalog:
    """The packaged catalog."""
    text = resources.files("rules").joinpath("hardware_catalog.toml").read_text("utf-8")
    return _parse(text)


def report_roof(device: DeviceInfo, label: str | None = None) -> Roof | None:
    """The roof a profiler report implies (peak_sustained x measured clocks), if it has one."""
    if not device.peak_flop_per_s and not device.bandwidth_byte_per_s:
        return None
    return Roof(
        label or device.name,
        "report",
        dict(device.peak_flop_per_s),
        dict(device.bandwidth_byte_per_s),
    )
