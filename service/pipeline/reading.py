"""Reading the report files of one run as the config says, then stamping it with its meta.

The config names the identity keys, the device of files that name none and the declared work
models; ``check``, ``ingest``, the demo and the upload form all read a run through here, so
they key, place and stamp its kernels alike.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from collectors import CollectOptions, apply_work_models
from collectors.schema import RunRecord
from service.config import RoofguardConfig
from service.pipeline.intake import collect_run as intake_collect
from service.pipeline.roofs import run_device, same_card
from service.pipeline.runmeta import RunMeta


def read_run(
    paths: Sequence[Path],
    meta: RunMeta,
    config: RoofguardConfig,
    max_kernels: int | None = None,
    *,
    require_measured: bool = True,
) -> RunRecord:
    """Read the files of one run (no meta applied yet), checking the device they name.

    A file without a measured kernel is refused (``intake.refuse_nothing_measured``) unless
    ``require_measured`` is false (a re-measurement, which says so in its own words).

    A device given by the meta (``--device``, an upload's field) or else the config names the
    device of files that name none. A file naming another device than the meta's is an error;
    the config's ``device`` is only a default, so a file naming its own device is judged on it.
    A file with more than ``max_kernels`` kernels is refused while it is read
    (``TooManyKernels``).

    Raises:
        DeviceConflict: A report names another device than the meta's.
    """
    given = meta.device or config.device
    options = CollectOptions(keys=config.keys, device=given, max_kernels=max_kernels)
    catalog = config.catalog()
    same = functools.partial(same_card, catalog=catalog)
    run = intake_collect(paths, options, same, require_measured=require_measured)
    if meta.device:
        files = ", ".join(map(str, paths))
        run_device(run, given=meta.device, catalog=catalog, origin=meta.device_origin, files=files)
    if config.work_models:
        run = apply_work_models(run, config.work_models, source=config.origin)
    return run


def collect_run(
    paths: Sequence[Path], *, meta: RunMeta, config: RoofguardConfig, max_kernels: int | None = None
) -> RunRecord:
    """Read every file of one run, apply declared work models and the meta."""
    return meta.stamp(read_run(paths, meta, config, max_kernels))
