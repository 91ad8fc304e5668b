"""The statistics' knobs: every option a user may turn, with its default and its meaning.

``CompareOptions`` (one value against a baseline), ``ChangePointOptions`` (the offline
detector), ``GateSettings`` (the gate's protocol, ``[rules.gate]`` in the configuration) and
``GateOptions`` (everything the gate reads). The fixed numbers are in
``rules.stats.constants``; rules/README.md has the table of both, with the evidence.

One module below every detector module, so each of them names the options it reads at run
time (no import cycle between ``rules.stats`` modules, ``lint-imports`` holds them to it).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rules.stats.constants import WINDOW_SCALES


class CompareOptions(BaseModel):
    """Thresholds of ``compare_to_baseline`` (and, with ``GATE_Z``, the gate's per-value ones).

    Attributes:
        min_runs: Fewer baseline values than this: no verdict (``enough`` is False).
        z_threshold: Robust z-score a change must reach (in baseline spreads).
        min_effect: Smallest relative change that counts, whatever the noise (practical floor).
        noise_floor: Smallest relative spread assumed, so a too-quiet baseline does not make
            every wobble significant.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_runs: int = Field(default=3, ge=1)
    z_threshold: float = Field(default=4.0, gt=0)
    min_effect: float = Field(default=0.03, ge=0)
    noise_floor: float = Field(default=0.005, ge=0)


class ChangePointOptions(BaseModel):
    """Thresholds of ``change_points``.

    Attributes:
        windows: Window sizes tried (points on each side; fewer at the ends of the series):
            short windows find changes quickly on quiet series, long ones find small changes
            on noisy series.
        min_segment: Fewest points a new level must hold before it is a change (2: one bad
            night is not a change).
        z_threshold: Robust z of the difference of the two windows' medians.
        min_effect: Smallest relative change that counts.
        noise_floor: Smallest relative noise assumed.
        detrend: Remove a significant slow drift (robust slope) first, so that a drift is
            not reported as a step (``ChangePointScan.drift`` reports it instead).
        window: The largest window, for callers of the single-window detector: when given,
            ``windows`` becomes 4, 8, 16 ... below it, plus ``window`` itself.
        confirm_z: Final check of each change over the whole segments between its
            neighbours (noise re-estimated around the segments' levels): the weakest change
            below this robust z is dropped, repeatedly (None: no check).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    windows: tuple[int, ...] = Field(default=(8, 16, 32, 64), min_length=1)
    window: int | None = Field(default=None, ge=2)
    detrend: bool = True
    min_segment: int = Field(default=2, ge=1)
    z_threshold: float = Field(default=5.0, gt=0)
    min_effect: float = Field(default=0.01, ge=0)
    noise_floor: float = Field(default=0.002, ge=0)
    confirm_z: float | None = Field(default=3.5, gt=0)

    @model_validator(mode="after")
    def _largest_window(self) -> ChangePointOptions:
        if self.window is not None:
            scales = {w for w in WINDOW_SCALES if w < self.window} | {self.window}
            object.__setattr__(self, "windows", tuple(sorted(scales)))
        if any(w < 2 for w in self.windows):
            raise ValueError("windows: every window needs at least 2 points")
        return self


class GateSettings(BaseModel):
    """The gate's protocol and error control (``[rules.gate]`` in the configuration).

    Attributes:
        confirm_runs: Nights in a row beyond noise before a change is confirmed (1: every
            night beyond noise fails at once, the old behaviour).
        family_error: Chance that a stable verdict fails at all (family-wise error rate).
        tail_df: Degrees of freedom of the Student t noise model used to turn error rates
            into thresholds (small: heavy tails, higher thresholds).
        fail_at_once_effect: Without a re-measure step, a PR fails at once only on a change
            at least this large (relative) ...
        fail_at_once_z: ... and at least this many noise units beyond the level.
        nightly_floor: Floor of the nightly gate's per-night threshold: a night this far
            beyond noise is a suspect, and ``confirm_runs`` such nights confirm a change
            (once the noise is known: on a young history the evidence is scaled down,
            ``rules.stats.runs.evidence_scale``).
            Lower than the PR's ``z_threshold``: a nightly change must hold
            ``confirm_runs`` nights, and over many kernels the family-wise term sets the
            threshold anyway. A night counts at most this much in a longer run's evidence.
        pool_runs: Most nights a confirming run may hold (``rules.stats.runs``): a
            moderate change on a noisy kernel is confirmed by its evidence over up to
            this many nights, none of them beyond the per-night threshold.
        pool_allowance: Noise units each night of a run gives back (a CUSUM allowance):
            a run confirms when the sum of ``min(z, nightly_floor) - pool_allowance`` over
            its nights reaches ``confirm_runs * (nightly_floor - pool_allowance)``, what
            ``confirm_runs`` nights at the floor give.
        run_floor: Every night of a run is at least this far beyond noise on its side.
        disagree_error: A PR's measurements of one commit that differ by more than two
            values of one level do with this chance (two-sided) disagree: no confirmation,
            whatever each says on its own (a noise suspect whose re-measurement dipped).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    confirm_runs: int = Field(default=2, ge=1, le=10)
    family_error: float = Field(default=0.05, gt=0, lt=1)
    tail_df: float = Field(default=4.0, gt=2)
    fail_at_once_effect: float = Field(default=0.25, gt=0)
    fail_at_once_z: float = Field(default=10.0, gt=0)
    nightly_floor: float = Field(default=3.5, gt=0)
    pool_runs: int = Field(default=4, ge=1, le=10)
    pool_allowance: float = Field(default=0.5, ge=0)
    run_floor: float = Field(default=0.5, ge=0)
    disagree_error: float = Field(default=0.01, gt=0, lt=1)


#: The gate's per-value floor: a suspect is at least this many noise units off its level.
#: 4.5 rather than compare_to_baseline's 4: chosen on the fleet benchmark's training seed
#: (2,000 kernels, 30 nights: stable PRs failing 7.5% at 4, 5% at 4.5, same recall).
GATE_Z = 4.5


class GateOptions(CompareOptions, GateSettings):
    """Everything the gate uses: ``CompareOptions`` thresholds, the protocol, the family.

    Attributes:
        z_threshold: The floor of the PR gate's thresholds (``GATE_Z``).
        family_size: Values judged in the same verdict (kernels for the nightly gate,
            re-measured kernels for the PR confirmation); the thresholds grow with it.
    """

    z_threshold: float = Field(default=GATE_Z, gt=0)
    family_size: int = Field(default=1, ge=1)
