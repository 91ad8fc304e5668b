"""The built-in rule catalogue: one module per rule, one line per rule below.

Loaded lazily by ``rules.registry`` (the same path as third-party ``roofguard.rules`` plugins).
"""

BUILTIN_RULES: tuple[str, ...] = (
    "rules.catalog.roof_drop:RoofDrop",
    "rules.catalog.regime_mislabel:RegimeMislabel",
    "rules.catalog.regime_flip:RegimeFlip",
    "rules.catalog.above_roof:AboveRoof",
    "rules.catalog.intensity_shift:IntensityShift",
    "rules.catalog.peak_sanity:PeakSanity",
    "rules.catalog.time_regression:TimeRegression",
    "rules.catalog.new_kernel:NewKernel",
    "rules.catalog.missing_kernel:MissingKernel",
    "rules.catalog.lost_counters:LostCounters",
    "rules.catalog.work_change:WorkChange",
    "rules.catalog.env_mismatch:EnvMismatch",
    "rules.catalog.device_scaling:DeviceScaling",
    "rules.catalog.early_slowdown:EarlySlowdown",
)
