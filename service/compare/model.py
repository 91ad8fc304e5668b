"""The cross-device view as data: per kernel and card, its level and how it scaled.

``Comparison`` is the ``--format json`` contract of ``roofguard compare`` (its ``rows``: a
list of objects with at least ``kernel``, ``device``, ``percent_of_roof``, ``time_s``,
``binding`` and ``runs``) and what the text, markdown, HTML and chart views lay out.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

#: What a forecast assumes, in words (stated wherever a forecast is shown).
FORECAST_ASSUMPTION = (
    "each kernel keeps its percent of roof: time on {target} = its work's roof time there "
    "/ its percent of roof on {source}"
)

#: ``CompareRow.keeping`` of a kernel that kept up on its first nights on the card and fell
#: there since: a change of code on that card, as the weekly digest and device-scaling read it.
FELL_SINCE = "fell-since"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CompareRow(_Model):
    """One kernel on one card (or forecast on one).

    Attributes:
        kernel: Identity key.
        name: Display name.
        device: The card (``device / runner`` when compared by runner).
        percent_of_roof: Its current level of percent of roof there (a forecast: the level
            it is assumed to keep).
        time_s: Its median time over that level's runs (a forecast: the time it would take).
        binding: What binds it there (a forecast: what binds its work on the target).
        runs: Base-branch runs of it there (0 for a forecast).
        few_runs: Fewer runs than the gate's level needs (``Comparison.min_runs``): its
            percent of roof and time are the median of those runs (a card added lately).
        reference: The card it is compared with (the first one shown); None on that card.
        time_ratio: ``time_s`` over its time on ``reference``.
        expected_time_ratio: The ratio the two roofs predict for its work on ``reference``.
        keeping: ``kept-up``, ``not-kept-up`` or ``faster`` (``rules.keeping``), None on
            the reference card; ``fell-since`` where its level now did not keep up but its
            first runs read there did (``FELL_SINCE``).
        forecast: A forecast, not a measurement (``--forecast``).
        source: A forecast's card: the one its level is read from.
        assumption: What a forecast assumes, in words.
        above_roof: Its percent of roof is past what the roof allows (check's above-roof
            rule would flag it): a proxy byte count, a cache that served the bytes, or a
            wrong peak; the figure is not an efficiency.
    """

    kernel: str
    name: str
    device: str
    percent_of_roof: float
    time_s: float
    binding: str | None
    runs: int
    few_runs: bool = False
    reference: str | None = None
    time_ratio: float | None = None
    expected_time_ratio: float | None = None
    keeping: str | None = None
    forecast: bool = False
    source: str | None = None
    assumption: str | None = None
    above_roof: bool = False


class DeviceColumn(_Model):
    """A card in the view.

    Attributes:
        device: Its name (``device / runner`` when compared by runner).
        roof: The label of the roof its runs were placed on (the newest run's).
        runs: Its base-branch runs.
        kernels: Kernels with a level there.
    """

    device: str
    roof: str
    runs: int
    kernels: int


class Comparison(_Model):
    """Every kernel's level on every card of a repository, and a forecast if asked.

    Attributes:
        repo: OWNER/NAME.
        roof_source: The roof source compared (``datasheet``, ``report``, ``measured``).
        reference: The card the others are compared with (the first one).
        devices: The cards, in the order shown.
        rows: Per kernel, per card (the reference first), then the forecast.
        forecast: The card forecast on (``--forecast``), if any.
        assumption: What the forecast assumes, in words.
        tolerance: The fall of percent of roof beyond which a kernel did not keep up.
        min_runs: The runs a kernel's level needs on a card (the gate's); with fewer, a row
            shows their median (``CompareRow.few_runs``).
    """

    repo: str
    roof_source: str
    reference: str | None
    devices: tuple[DeviceColumn, ...]
    rows: tuple[CompareRow, ...]
    forecast: str | None = None
    assumption: str | None = None
    tolerance: float
    min_runs: int = 3
