"""Which device a run ran on, and which roof it is judged against.

Every command that places a run (check, ingest, inspect, plot, the upload API) asks this
module, so they all agree. The rule (issue 15):

* the device a report names wins;
* a device given by the user (``--device``, ``device`` in the config, an upload's form field)
  is the default for reports that name none;
* a report that names another device than ``--device`` or an upload's field is an error
  naming both: the user said which card this run is from, and a run judged on the wrong card
  is a wrong verdict. The config's ``device`` is a standing default, not a statement about
  one run: a report naming its own device is judged on it (issue 30);
* a report that names no device, with none given, is an error saying which flag or config
  key names it (``DeviceNotNamed``).
* a device whose architecture (the catalog's ``sm_XX``) is not the compute capability the
  report records is an error naming both (``ArchitectureConflict``): those kernels ran on
  another card, whichever name was given.

Roof sources: datasheet (catalog, scaled to the clocks the report ran at: rules.clocks),
report (the profiler's peak x clocks), measured (calibration, never scaled). A datasheet
roof for a device the catalog lacks falls back to the report's own roof when the report has
one, with a note saying so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from collectors.schema import RunRecord
from rules import (
    Catalog,
    Roof,
    UnknownDevice,
    at_report_clocks,
    normalise_name,
    report_roof,
)
from service.config import RoofguardConfig
from service.errors import BadInput
from service.store.sessions import StoreSession

#: Roof sources a user can ask for.
ROOF_SOURCES: tuple[str, ...] = ("datasheet", "report", "measured")
#: How collectors name a device a file does not name ("unknown", "unknown GPU (CC 8.0)").
UNNAMED_PREFIX = "unknown"


class DeviceNotNamed(UnknownDevice):
    """A report that names no device, and no device was given to judge it on."""

    def __init__(self, where: str, name: str) -> None:
        super().__init__(name, [])
        self.args = (
            f"{where}: the report names no device (it says {name!r}): name it with "
            '--device NAME (an upload\'s `device` field), or `device = "NAME"` in '
            "roofguard.toml for every report that names none (`roofguard devices` lists the "
            "catalog's names)",
        )


class DeviceConflict(BadInput):
    """The report names one device and the user gave another."""

    def __init__(
        self, where: str, named: str, given: str, origin: str, known: str | None = None
    ) -> None:
        self.named = named
        self.given = given
        # A card the catalog knows needs no description: the only fix is to drop the device.
        fix = (
            f"drop it (the catalog knows {named!r} as {known})"
            if known
            else f'drop it, or describe this card under [devices."{named}"] in roofguard.toml'
        )
        super().__init__(
            f"{where}: the report names device {named!r}, but {origin} gives {given!r}; "
            f"{origin} is only the default for reports that name no device: {fix}"
        )


class ArchitectureConflict(DeviceConflict):
    """The device a run is judged on is of another architecture than the report's CC."""

    def __init__(self, where: str, recorded: str, device: str, architecture: str) -> None:
        self.named = f"CC {recorded}"
        self.given = device
        # a DeviceConflict to every caller, with its own message: no name is wrong, the card is
        BadInput.__init__(
            self,
            f"{where}: the report records compute capability {recorded}, but device "
            f"{device!r} is CC {architecture}: these kernels ran on another card; name the "
            "card the report was measured on",
        )


#: The ``sm_XX`` in a catalog device's ``arch`` (``Hopper (GH100, sm_90)``, ``sm_100``).
_SM_ARCH = re.compile(r"\bsm_(\d+)(\d)\b")


def device_cc(name: str, catalog: Catalog) -> str | None:
    """The compute capability of catalog device ``name`` (``"9.0"``); None: unknown or not CUDA."""
    spec = catalog.find(name)
    found = _SM_ARCH.search(spec.arch) if spec else None
    return f"{int(found[1])}.{found[2]}" if found else None


def same_cc(a: str, b: str) -> bool:
    """Whether two compute capabilities are one (``"9.0"`` and ``"9"`` are)."""
    return _cc_parts(a) == _cc_parts(b)


def _cc_parts(cc: str) -> tuple[str, ...]:
    parts = [part.strip().lstrip("0") or "0" for part in cc.strip().split(".")]
    return tuple(parts + ["0"] * (2 - len(parts)))


def refuse_other_architecture(run: RunRecord, device: str, catalog: Catalog, where: str) -> None:
    """Raise ``ArchitectureConflict`` when catalog ``device`` is not the CC ``run`` records.

    An RTX 4090 report (CC 8.9) judged on an H100 (sm_90) is placed on roofs of a card it did
    not run on; a device whose architecture the catalog does not give is not checked.
    """
    recorded = run.device.compute_capability
    architecture = device_cc(device, catalog)
    if recorded and architecture and not same_cc(recorded, architecture):
        raise ArchitectureConflict(where, recorded, device, architecture)


def names_device(name: str) -> bool:
    """Whether a collected device name came from the report (not a placeholder)."""
    return bool(name.strip()) and not name.lower().startswith(UNNAMED_PREFIX)


def same_card(a: str, b: str, catalog: Catalog) -> bool:
    """Whether two names are one card for judging.

    One catalog entry, or entries with the same figures (16 GB and 32 GB V100-SXM2 differ
    only in memory size).
    """
    if a == b:
        return True
    left, right = catalog.find(a), catalog.find(b)
    if left is None or right is None:
        return False
    alike = left.peak_flop_per_s == right.peak_flop_per_s
    return left.id == right.id or (
        alike and left.bandwidth_byte_per_s == right.bandwidth_byte_per_s
    )


def run_device(
    run: RunRecord,
    *,
    given: str | None,
    catalog: Catalog,
    origin: str = "the config",
    files: str = "report",
) -> str:
    """The device name ``run`` is judged on (catalog id, alias or the report's own name).

    Args:
        run: The collected run (collectors put ``given`` in when a file names no device).
        given: Device from the command line, the config or an upload; None: none given.
        catalog: The catalog with the user's overrides (decides when two names are one card).
        origin: Where ``given`` comes from, for the error message.
        files: The files read, named by the error when the run has no source (a RunRecord).

    Raises:
        DeviceConflict: The report names a different device than ``given``, or the device
            is of another architecture than the compute capability the report records.
        UnknownDevice: It does, and ``given`` is no catalog device either.
    """
    named = run.device.name
    where = run.sources[0].path if run.sources else files
    settled = given if given and not names_device(named) else named
    refuse_other_architecture(run, settled, catalog, where)
    if not given or not names_device(named) or same_card(named, given, catalog):
        return settled
    if catalog.find(given) is None:  # most likely a typo: say that first
        raise UnknownDevice(given, catalog.suggest(given))
    known = catalog.find(named)
    raise DeviceConflict(where, named, given, origin, known.id if known else None)


@dataclass(frozen=True)
class RoofChoice:
    """The roof a run is placed on and, when it is not the one asked for, why."""

    roof: Roof
    note: str | None = None


def choose_roof(
    run: RunRecord,
    *,
    device: str | None,
    source: str,
    catalog: Catalog,
    measured: Roof | None = None,
    origin: str = "the config",
) -> RoofChoice:
    """The roof to place ``run`` on, and a note when the report's roof stands in.

    Args:
        run: The run (its own device name wins, see the module docstring).
        device: Device given by the user: the default for reports that name none.
        source: datasheet, report or measured (``measured``, from calibration).
        catalog: The hardware catalog, with the user's overrides applied.
        measured: The runner's measured roof, for ``source == "measured"``.
        origin: Where ``device`` comes from (named in a conflict error).

    Raises:
        DeviceConflict: The report names another device than ``device``.
        UnknownDevice: A datasheet roof of a device the catalog lacks, and the report has
            no peaks to stand in (the error lists the closest known cards).
        BadInput: An unknown source, or the chosen roof is not available for this run.
    """
    name = run_device(run, given=device, catalog=catalog, origin=origin)
    if source == "datasheet":
        return _datasheet(run, name, catalog)
    if source == "report":
        return RoofChoice(_report(run, name, catalog))
    if source == "measured":
        if measured is None:
            raise BadInput(
                f"--roof measured: no measured roof for {name!r}; run "
                "`roofguard calibrate` on the runner first"
            )
        return RoofChoice(measured)
    raise BadInput(f"--roof: unknown roof source {source!r} (known: {', '.join(ROOF_SOURCES)})")


def choose_for(run: RunRecord, config: RoofguardConfig, measured: Roof | None = None) -> RoofChoice:
    """The roof the run is judged against, as the config chooses, and why when not asked.

    The note says when the report's own roof stands in for a device the catalog lacks. The
    config's ``device`` only names runs whose reports name none (the device a report names wins).
    """
    default = None if names_device(run.device.name) else config.device
    catalog = config.catalog()
    choice = choose_roof(
        run, device=default, source=config.roof, catalog=catalog, measured=measured
    )
    # the collectors write the given name into a run whose files name no device
    given = config.device if run.device.name in (default, config.device) else None
    family = family_note(given, catalog)
    if family is None:
        return choice
    return RoofChoice(choice.roof, f"{family}; {choice.note}" if choice.note else family)


def family_note(name: str | None, catalog: Catalog) -> str | None:
    """A note where ``name`` is a family the catalog takes as one of its cards (``H100``).

    An H100 PCIe runner whose config said ``device = "H100"`` was judged on the SXM5's
    3.35 TB/s, not its own 2.0: 40% low in percent of roof, and nothing said which card.
    """
    spec = catalog.find(name) if name else None
    if name is None or spec is None or normalise_name(name) == normalise_name(spec.id):
        return None
    family = normalise_name(name)
    others = [d for d in catalog.devices if d != spec.id and normalise_name(d).startswith(family)]
    if not others:
        return None
    return (
        f"device {name!r} is taken as {spec.id}; the catalog also has {', '.join(others)}, "
        "with other peaks and bandwidth: name the card the runner has"
    )


def noted(run: RunRecord, choice: RoofChoice) -> RunRecord:
    """``run`` with the roof choice's note (if any) among its notes, shown in the verdict."""
    if choice.note is None or choice.note in run.notes:
        return run
    return run.model_copy(update={"notes": (*run.notes, choice.note)})


def roofs_beside(
    judged: Roof, run: RunRecord, config: RoofguardConfig, measured: Roof | None
) -> tuple[Roof, ...]:
    """Roofs shown next to the judged one (every verdict states its roof).

    The runner's measured roof beside the datasheet's, and the datasheet's beside a measured
    or report-derived one.
    """
    others: list[Roof] = []
    if measured is not None and judged.source != "measured":
        others.append(measured)
    if judged.source != "datasheet":
        catalog = config.catalog()
        spec = catalog.find(judged.device) or catalog.find(run.device.name)
        if spec is not None:
            others.append(spec.roof())
    return tuple(others)


def _datasheet(run: RunRecord, name: str, catalog: Catalog) -> RoofChoice:
    try:
        return RoofChoice(*at_report_clocks(catalog.lookup(name), run))
    except UnknownDevice as exc:
        stand_in = report_roof(run.device, label=name)
        if stand_in is None and not names_device(name):
            where = run.sources[0].path if run.sources else "report"
            raise DeviceNotNamed(where, name) from exc
        if stand_in is None:
            raise _unknown_in(run.sources[0].path if run.sources else "report", exc) from exc
        near = f" (closest known: {', '.join(exc.suggestions)})" if exc.suggestions else ""
        note = (
            f"device {name!r} is not in the hardware catalog{near}: judged against the roof "
            "its report implies (the profiler's peaks at the measured clocks); describe it "
            f'under [devices."{name}"] in roofguard.toml for datasheet peaks'
        )
        return RoofChoice(stand_in, note)


def refuse_unknown_given(run: RunRecord, given: str, config: RoofguardConfig) -> None:
    """Refuse ``given``, the device of a report that names none, where no roof can judge it.

    Found when the run is judged, the error names the report's file, which names no device:
    the caller names where ``given`` came from (an upload's ``device`` field), as the error
    of a report naming another card does (``run_device``).

    Raises:
        UnknownDevice: A datasheet roof, a device the catalog lacks and a report without
            peaks to stand in (as ``choose_for`` would raise it, naming no file).
    """
    if config.roof != "datasheet" or run.device.name != given or not names_device(given):
        return
    catalog = config.catalog()
    if catalog.find(given) is None and report_roof(run.device, label=given) is None:
        raise _unknown_in(None, UnknownDevice(given, catalog.suggest(given)))


def _unknown_in(where: str | None, exc: UnknownDevice) -> UnknownDevice:
    """``exc`` naming ``where`` (the report it came from), and the config table for the card.

    One line, as every error; the values are placeholders TOML refuses, so a copy left
    unfilled is an error naming them, not a roof of made-up peaks.
    """
    near = f"; closest known: {', '.join(exc.suggestions)}" if exc.suggestions else ""
    prefix = f"{where}: " if where else ""
    exc.args = (
        f"{prefix}unknown device {exc.name!r}{near} (`roofguard devices` lists the catalog); "
        f'to judge it, describe it in roofguard.toml: [devices."{exc.name}"] with '
        "peak_flop_per_s = { <precision> = <FLOP/s> } and bandwidth_byte_per_s = "
        "{ dram = <bytes/s> } (dense peaks, SI units)",
    )
    return exc


def _report(run: RunRecord, name: str, catalog: Catalog) -> Roof:
    known = catalog.find(name)
    roof = report_roof(run.device, label=known.id if known else name)
    if roof is None:
        raise BadInput(
            f"--roof report: the report of device {run.device.name!r} carries no "
            "peaks or bandwidths; use --roof datasheet"
        )
    return roof


def runner_roof(*, session: StoreSession, run: RunRecord, config: RoofguardConfig) -> Roof | None:
    """The measured roof of the run's runner for its device; None without runner or calibration.

    The calibration is read in Core (``service.store.ceilings``): a check imports no ORM,
    named runner or not.
    """
    if not run.runner:
        return None
    from service.calibrate.storage import measured_roof  # a named runner's check only

    # collect_run named the device: the report's own, else the one given (see run_device)
    name = run.device.name if names_device(run.device.name) else config.device
    return measured_roof(session=session, runner=run.runner, device=name or run.device.name)


def resolve_roof(
    run: RunRecord,
    *,
    device: str | None,
    source: str,
    catalog: Catalog,
    measured: Roof | None = None,
) -> Roof:
    """``choose_roof(...).roof``: the roof alone, for callers that show no notes."""
    return choose_roof(run, device=device, source=source, catalog=catalog, measured=measured).roof
