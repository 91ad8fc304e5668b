"""Which roof a run is judged against: datasheet (catalog), report-derived or measured."""

from __future__ import annotations

from sqlmodel import Session

from collectors.schema import RunRecord
from rules.hardware import Catalog, report_roof
from rules.roofline import Roof
from service.calibrate.storage import measured_roof
from service.config import RoofguardConfig
from service.errors import BadInput

#: Roof sources a user can ask for.
ROOF_SOURCES: tuple[str, ...] = ("datasheet", "report", "measured")


def runner_roof(*, session: Session, run: RunRecord, config: RoofguardConfig) -> Roof | None:
    """The measured roof of the run's runner for its device; None without runner or calibration."""
    if not run.runner:
        return None
    name = config.device or run.device.name
    return measured_roof(session=session, runner=run.runner, device=name)


def resolve_roof(
    run: RunRecord,
    *,
    device: str | None,
    source: str,
    catalog: Catalog,
    measured: Roof | None = None,
) -> Roof:
    """The roof to place ``run`` on.

    Args:
        run: The run (its device name is used when ``device`` is None).
        device: Device name given by the user (catalog id, display name or alias).
        source: datasheet (catalog figures), report (the profiler's peak x clocks) or
            measured (``measured``, from calibration).
        catalog: The hardware catalog, with the user's overrides applied.
        measured: The runner's measured roof, for ``source == "measured"``.

    Raises:
        UnknownDevice: ``source`` is datasheet and the catalog does not know the device (the
            error lists the closest names).
        BadInput: An unknown source, or the chosen roof is not available for this run.
    """
    name = device or run.device.name
    if source == "datasheet":
        return catalog.lookup(name).roof()
    if source == "report":
        known = catalog.find(name)
        roof = report_roof(run.device, label=known.id if known else name)
        if roof is None:
            raise BadInput(
                f"--roof report: the report of device {run.device.name!r} carries no "
                "peaks or bandwidths; use --roof datasheet"
            )
        return roof
    if source == "measured":
        if measured is None:
            raise BadInput(
                f"--roof measured: no measured roof for {name!r}; run "
                "`roofguard calibrate` on the runner first"
            )
        return measured
    raise BadInput(f"--roof: unknown roof source {source!r} (known: {', '.join(ROOF_SOURCES)})")
