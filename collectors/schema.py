"""The record contract: what every collector produces and every other part reads.

All values are in SI base units: seconds, bytes, FLOP (one fused multiply-add is two),
hertz, bytes per second and FLOP per second. Models are frozen pydantic v2 models;
negative, NaN or infinite numbers are rejected with a message that names the field.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)

SCHEMA_VERSION = 1
#: The RunRecord versions this roofguard reads (the first is the only one so far).
READ_VERSIONS: tuple[int, ...] = (SCHEMA_VERSION,)

#: FLOP precisions. ``fp*`` are CUDA-core (non-tensor) FLOPs; ``tensor_*`` are tensor-core
#: FLOPs by *source* precision, dense. Peaks in the hardware catalog use the same keys.
PRECISIONS: tuple[str, ...] = (
    "fp64",
    "fp32",
    "fp16",
    "tensor_fp64",
    "tensor_tf32",
    "tensor_bf16",
    "tensor_fp16",
    "tensor_fp8",
    "tensor_int8",
    "tensor_fp4",
)
#: Memory tiers, outermost first.
TIERS: tuple[str, ...] = ("dram", "l2", "l1")
#: In a ``missing`` entry: work a harness reported under a name that is no precision or tier
#: (``flops_bf16``). Placements repeat such entries: the kernel's percent of roof counts less
#: work than it did, and the entry names the counter it likely meant.
UNREAD_WORK = " not read: "
#: Starts a ``missing`` entry: work the device did that the report counts none of (an int8
#: GEMM's IMMA operations): the kernel's FLOPs and regime are unknown. Placements repeat it.
LEFT_OUT_WORK = "flops: left out:"
#: In a ``missing`` entry: launches without a usable duration, then why
#: (``3 launch(es) not averaged in: gpu__time_duration.sum is NaN (replay failed)``).
NOT_AVERAGED = " launch(es) not averaged in: "


def _quoted(text: str, limit: int = 60) -> str:
    """``text`` from a file for a message, cut (a name may be 100,000 characters long).

    ``collectors.errors.shown`` does the same for collectors; rules see this module alone.
    """
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text):,} characters)"


def _one_of(allowed: tuple[str, ...], what: str) -> AfterValidator:
    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"unknown {what} {_quoted(value)} (known: {', '.join(allowed)})")
        return value

    return AfterValidator(check)


# Plain ``str`` keys (not Literal) so dicts stay assignable to Mapping[str, float] in the
# rules; validation and the JSON Schema enum keep the key set closed.
Precision = Annotated[
    str,
    _one_of(PRECISIONS, "precision"),
    WithJsonSchema({"type": "string", "enum": list(PRECISIONS)}),
]
Tier = Annotated[
    str, _one_of(TIERS, "tier"), WithJsonSchema({"type": "string", "enum": list(TIERS)})
]


def _finite_non_negative(value: float) -> float:
    if math.isnan(value) or math.isinf(value):
        raise ValueError("must be a finite number (got NaN or infinity)")
    if value < 0:
        raise ValueError(f"must not be negative (got {value!r})")
    return value


#: A finite, non-negative float. Every measured quantity in the contract is one. The JSON
#: Schema states the bound (no constraint of pydantic's: its message would replace ours).
NonNeg = Annotated[
    float, AfterValidator(_finite_non_negative), Field(json_schema_extra={"minimum": 0})
]

#: Below a picosecond no timer measures anything: a shorter duration is a broken number.
MIN_DURATION_S = 1e-12


def _measurable(value: float) -> float:
    # Kept, a 0 s launch among others drags the kernel's mean (5.717 ms read as 2.858 ms).
    # One check per sample, not two: a raw ncu page holds a million launches.
    if not MIN_DURATION_S <= value < math.inf:  # NaN too
        _finite_non_negative(value)  # NaN, infinity and negatives, worded as every field's
        raise ValueError(
            f"duration of {value!r} s for a sample: no timer measures under {MIN_DURATION_S:g} s"
        )
    return value


#: One launch's or repetition's time: measured, so never under ``MIN_DURATION_S``. A format
#: where 0 means "not timed" (Kineto's ``dur`` 0) counts it in ``failed_launches`` instead.
Sample = Annotated[
    float, AfterValidator(_measurable), Field(json_schema_extra={"minimum": MIN_DURATION_S})
]


def _finite(value: float) -> float:
    if math.isnan(value) or math.isinf(value):
        raise ValueError("must be a finite number (got NaN or infinity)")
    return value


#: A finite float of either sign (harness counters may be negative).
Finite = Annotated[float, AfterValidator(_finite)]

#: The largest count a record holds: what the store's integer columns take (PostgreSQL's
#: INTEGER). No run comes near it; a file that claims more is refused by name, not by the
#: database at ingest.
MAX_COUNT = 2**31 - 1


#: A GitHub repository's full name, as the API takes it: letters, digits, ``_``, ``.``, ``-``.
REPO_NAME = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"


def is_repo_name(text: str) -> bool:
    """Whether ``text`` is ``OWNER/NAME`` as GitHub spells repositories (``REPO_NAME``)."""
    return re.fullmatch(REPO_NAME, text) is not None


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=True)


class RunKind(StrEnum):
    """Why a run exists: ``nightly`` runs of the base branch, ``pr`` runs, ``local`` runs."""

    NIGHTLY = "nightly"
    PR = "pr"
    LOCAL = "local"


class ProvenanceKind(StrEnum):
    """How a figure was obtained.

    ``raw``: a raw counter (``dram__bytes.sum``); ``sum``: the sum of raw parts
    (read + write); ``sectors``: sector count x 32 bytes; ``rate``: a rate x duration or a
    per-cycle rate x elapsed cycles; ``proxy``: a metric with a different definition
    (e.g. L2-to-L1 reads for L2 traffic); ``declared``: from a declared work model;
    ``reported``: a benchmark harness' own counter; ``absent``: not available.
    """

    RAW = "raw"
    SUM = "sum"
    SECTORS = "sectors"
    RATE = "rate"
    PROXY = "proxy"
    DECLARED = "declared"
    REPORTED = "reported"
    ABSENT = "absent"


class Provenance(_Frozen):
    """Where one figure of a kernel record came from.

    Attributes:
        kind: How the figure was obtained (see ``ProvenanceKind``).
        metrics: The source metric or counter names it was computed from.
        note: Free text, e.g. "HFMA2 counted as 4 FLOP" or "L2->L1 reads only".
    """

    kind: ProvenanceKind
    metrics: tuple[str, ...] = ()
    note: str = ""


class SourceRef(_Frozen):
    """Where in an input file a record came from.

    Attributes:
        path: The file as it was given to the collector.
        row: 1-based line, row, launch ID or entry name within the file, when meaningful.
        format: The collector that read it (e.g. ``ncu-csv-raw``).
    """

    path: str
    row: str | None = None
    format: str | None = None


class DeviceInfo(_Frozen):
    """The device a run was measured on, as the tool reported it.

    Attributes:
        name: Device name as printed by the tool (e.g. "NVIDIA H100 80GB HBM3").
        compute_capability: e.g. "9.0", when known.
        sm_count: Number of SMs (or CUs), when known.
        sm_clock_hz: SM clock during measurement, Hz.
        memory_clock_hz: Memory clock during measurement, Hz.
        driver: Driver version string.
        peak_flop_per_s: Report-derived peaks per precision (FLOP/s), at the measured clocks.
        bandwidth_byte_per_s: Report-derived bandwidth per tier (B/s), at the measured clocks.
    """

    name: str
    compute_capability: str | None = None
    sm_count: int | None = Field(default=None, ge=0, le=MAX_COUNT)
    sm_clock_hz: NonNeg | None = None
    memory_clock_hz: NonNeg | None = None
    driver: str | None = None
    peak_flop_per_s: dict[Precision, NonNeg] = Field(default_factory=dict)
    bandwidth_byte_per_s: dict[Tier, NonNeg] = Field(default_factory=dict)


class ProfilerInfo(_Frozen):
    """The measuring tool and the settings that change its numbers.

    Attributes:
        tool: e.g. "ncu", "nvbench", "gbench", "pytest-benchmark", "roofguard".
        version: The tool's version, when the input records it.
        command_line: The profiler command line embedded in the report.
        clock_control: ncu ``--clock-control`` (base, none, reset) or equivalent.
        cache_control: ncu ``--cache-control`` (all, none).
        replay_mode: ncu ``--replay-mode`` (kernel, application, range).
    """

    tool: str
    version: str | None = None
    command_line: str | None = None
    clock_control: str | None = None
    cache_control: str | None = None
    replay_mode: str | None = None


class KernelRecord(_Frozen):
    """One kernel (all its launches with the same identity key) in one run.

    All totals are summed over ``launches``: ``duration_s`` is the kernel's total time, and
    ``flops``/``bytes`` are the work of those launches. For a microbenchmark one record is one
    benchmark state: ``launches`` = 1 and ``duration_s`` is the time of one call.

    Attributes:
        name: Display name as reported (may be kilobytes of demangled C++).
        key: Identity key used to follow the kernel across runs (normalised name plus params).
        launches: Number of launches (or calls) aggregated that have a duration.
        duration_s: Total measured time in seconds.
        samples_s: Per-launch or per-iteration times in seconds, when the tool gave them.
        flops: Measured FLOPs by precision.
        bytes: Measured bytes by memory tier.
        declared_flops: FLOPs by precision from a declared work model (config).
        declared_bytes: Bytes by tier from a declared work model (config).
        provenance: How each figure was obtained, keyed "flops.<precision>" or "bytes.<tier>".
        grid: Grid size as reported, e.g. "(80, 1, 1)".
        block: Block size as reported, e.g. "(128, 1, 1)".
        sm_clock_hz: The SM clock the launches ran at (time-weighted mean), Hz, when the
            profiler recorded it; what a datasheet roof is scaled to.
        memory_clock_hz: The DRAM clock the launches ran at (time-weighted mean), Hz.
        profile: Profiler figures beside the work, by metric name as the profiler names it
            (time-weighted mean over the launches that had it): launch configuration,
            occupancy, cache hit rates, warp stall reasons. What explains a change, not judged.
        nvtx_range: The NVTX range the launches ran in, when known.
        params: Benchmark axes or parameters (part of the identity key).
        counters: Numeric harness counters (gbench user counters, nvbench element counts,
            pytest-benchmark extra_info), by name; inputs to declared work models, not part
            of the identity key.
        failed_launches: Launches profiled with no usable duration: beside ``launches``, not in it.
        missing: What the record lacks, e.g. "flops: smsp__sass_thread_inst_executed_op_ffma...".
        source: Where the record came from.
    """

    name: str = Field(min_length=1)
    key: str = Field(min_length=1)
    launches: int = Field(default=1, ge=0, le=MAX_COUNT)
    duration_s: NonNeg
    samples_s: tuple[Sample, ...] = ()
    flops: dict[Precision, NonNeg] = Field(default_factory=dict)
    bytes: dict[Tier, NonNeg] = Field(default_factory=dict)
    declared_flops: dict[Precision, NonNeg] = Field(default_factory=dict)
    declared_bytes: dict[Tier, NonNeg] = Field(default_factory=dict)
    provenance: dict[str, Provenance] = Field(default_factory=dict)
    grid: str | None = None
    block: str | None = None
    sm_clock_hz: NonNeg | None = None
    memory_clock_hz: NonNeg | None = None
    profile: dict[str, NonNeg] = Field(default_factory=dict)
    nvtx_range: str | None = None
    params: dict[str, str | float] = Field(default_factory=dict)
    counters: dict[str, Finite] = Field(default_factory=dict)
    failed_launches: int = Field(default=0, ge=0, le=MAX_COUNT)
    missing: tuple[str, ...] = ()
    source: SourceRef | None = None

    @property
    def measured(self) -> bool:
        """Whether some launch of it has a duration: with none (each failed), 0 s is no time."""
        return self.launches > 0

    def work(self, *, prefer_declared: bool = False) -> tuple[dict[str, float], dict[str, float]]:
        """FLOPs and bytes to place on the roofline: measured, else declared.

        Args:
            prefer_declared: Use the declared work model even where a profiler measured.
        """
        flops = dict(self.flops)
        nbytes = dict(self.bytes)
        if prefer_declared or not flops:
            flops = dict(self.declared_flops) or flops
        if prefer_declared or not nbytes:
            nbytes = dict(self.declared_bytes) or nbytes
        return flops, nbytes


class RunRecord(_Frozen):
    """One run: every kernel measured on one device at one commit.

    Attributes:
        schema_version: Version of this contract.
        repo: "OWNER/NAME", when known.
        commit: Commit SHA the run measured.
        branch: Branch name.
        pull_request: Pull-request number for ``pr`` runs.
        kind: nightly, pr or local.
        timestamp: When the run was measured (timezone-aware, UTC if none given).
        runner: The CI runner's name.
        device: The device.
        profiler: The measuring tool and its settings.
        tools: Other tool versions (driver, CUDA, torch, ...).
        kernels: The kernels.
        notes: Collector remarks a person should see (missing metrics, failed launches ...).
        sources: The input files.
    """

    schema_version: int = Field(SCHEMA_VERSION, json_schema_extra={"enum": [*READ_VERSIONS]})
    repo: str | None = None
    commit: str | None = None
    branch: str | None = None
    pull_request: int | None = Field(default=None, ge=1, le=MAX_COUNT)
    kind: RunKind = RunKind.LOCAL
    timestamp: datetime = Field(default_factory=lambda: datetime.now(UTC))
    runner: str | None = None
    device: DeviceInfo
    profiler: ProfilerInfo
    tools: dict[str, str] = Field(default_factory=dict)
    kernels: tuple[KernelRecord, ...] = ()
    notes: tuple[str, ...] = ()
    sources: tuple[SourceRef, ...] = ()

    @field_validator("timestamp")
    @classmethod
    def _utc_timestamp(cls, ts: datetime) -> datetime:
        # Naive timestamps are taken as UTC so that runs from several runners order correctly.
        return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts

    @model_validator(mode="after")
    def _unique_keys(self) -> RunRecord:
        seen: set[str] = set()
        for kernel in self.kernels:
            if kernel.key in seen:
                raise ValueError(f"kernels: duplicate kernel key {_quoted(kernel.key)}")
            seen.add(kernel.key)
        return self

    def kernel(self, key: str) -> KernelRecord:
        """The kernel with identity key ``key`` (KeyError when absent)."""
        for kernel in self.kernels:
            if kernel.key == key:
                return kernel
        raise KeyError(key)


def version_fault(version: object) -> str | None:
    """Why a RunRecord of ``schema_version`` ``version`` is not read here; None when it is."""
    if not isinstance(version, int) or isinstance(version, bool) or version in READ_VERSIONS:
        return None  # not a number: the record's validation names it
    read = ", ".join(map(str, READ_VERSIONS))
    newer = "; upgrade roofguard to read a newer one" if version > SCHEMA_VERSION else ""
    return f"version {version}: this roofguard reads RunRecord version {read} only{newer}"


def run_json_schema() -> dict[str, Any]:
    """The JSON Schema of RunRecord (what ``roofguard schema`` prints)."""
    return RunRecord.model_json_schema()
