"""Typed rows for the store's Core inserts: one TypedDict per table, keyed by its columns.

Bulk rows go through ``executemany`` as plain mappings (no ORM object per row); typing them
lets mypy check every column name where a row is built, and
``tests/service/store/test_rows.py`` checks each against its table's columns.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NotRequired, TypedDict


class RoofValues(TypedDict):
    """``runs.roof_json``: the roof a run's kernels were placed on."""

    device: str
    source: str
    peak_flop_per_s: dict[str, float]
    bandwidth_byte_per_s: dict[str, float]
    from_config: NotRequired[list[str]]
    #: A ``rules.ClockedRoof``'s: the datasheet roof its kernels without a clock are placed on.
    unscaled: NotRequired[RoofValues]


class RunValues(TypedDict):
    """A ``runs`` row."""

    repo_id: int
    device_id: int
    commit: str | None
    branch: str | None
    pull_request: int | None
    kind: str
    timestamp: datetime
    runner: str | None
    device_reported: str | None
    driver: str | None
    profiler_tool: str | None
    profiler_version: str | None
    clock_control: str | None
    cache_control: str | None
    roof_source: str
    roof_label: str
    roof_json: RoofValues
    trusted: bool
    content_hash: str
    record_json: str
    record_zlib: bytes | None
    created_at: datetime


class MeasurementValues(TypedDict):
    """A ``measurements`` row: raw counters and the derived figures beside them."""

    run_id: int
    kernel_id: int
    launches: int
    time_s: float
    flops_json: dict[str, float]
    total_flops: float | None
    bytes_dram: float | None
    bytes_l2: float | None
    bytes_l1: float | None
    percent_of_roof: float | None
    regime: str | None
    binding: str | None
    borderline: bool
    intensity_dram: float | None
    intensity_l2: float | None
    intensity_l1: float | None
    t_roof_s: float | None
    peak_flop_time_s: float | None
    roof_source: str


class FindingValues(TypedDict):
    """A ``findings`` row."""

    run_id: int
    kernel_key: str | None
    rule: str
    severity: str
    stability: str
    message: str
    advice: str | None
    numbers_json: dict[str, Any]
    finding_json: dict[str, Any]
    created_at: datetime


class AcceptanceValues(TypedDict):
    """A ``baseline_acceptances`` row."""

    repo_id: int
    device_id: int | None
    kernel_key: str
    kernel_key_hash: str
    run_id: int | None
    accepted_by: str
    reason: str
    created_at: datetime


class NamedValues(TypedDict):
    """A ``repositories`` or ``devices`` row."""

    name: str
    created_at: datetime


class KernelValues(TypedDict):
    """A ``kernels`` row."""

    repo_id: int
    key: str
    key_hash: str
    name: str


class TokenValues(TypedDict):
    """An ``api_tokens`` row (revocation and use are recorded later, by update)."""

    name: str
    token_hash: str
    permission: str
    repo_id: int | None
    created_at: datetime
    revoked_at: NotRequired[datetime | None]
    last_used_at: NotRequired[datetime | None]
