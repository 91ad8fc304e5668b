"""Runner calibration: a measured roofline and a health preflight (``roofguard calibrate``).

Modules: ``model`` (the ``Ceilings`` record), ``fit`` and ``health`` (pure maths and the
preflight decision), ``measure`` with the ``backend_*`` modules (torch or cupy, imported only
when measuring), ``device_info`` (identity, clocks, NVML throttle reasons), ``storage`` (rows
of the history store's ``runner_ceilings`` table, ``ceilings.json`` and ``health.json``) and
``chart``.

What ``check`` calls: ``storage.measured_roof(session=, runner=, device=)`` for the runner's
measured roof and ``storage.load_health(path)`` to learn whether the preflight marked the
runner untrusted. Nothing here imports torch at import time.
"""
