"""A serving process tunes its garbage collector; an application made in-process does not.

``service.api.gctune``: the factory ``roofguard serve`` runs freezes what the process holds and
collects less often. Checked in a fresh process, as uvicorn calls the factory: in this one, a
freeze would keep the test run's garbage alive.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

from service.api.app import create_app
from service.api.gctune import GEN0_THRESHOLD, OLDER_THRESHOLD
from service.config import RoofguardConfig
from service.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
PROBE = (
    "import gc; from service.api.app import app_from_environment; app_from_environment(); "
    "print(*gc.get_threshold(), gc.get_freeze_count())"
)


def test_the_serving_factory_freezes_the_process_and_collects_less_often(tmp_path) -> None:
    env = {**os.environ, "ROOFGUARD_DATABASE_URL": f"sqlite:///{tmp_path / 'h.db'}"}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    gen0, gen1, gen2, frozen = map(int, out.stdout.split())
    assert (gen0, gen1, gen2) == (GEN0_THRESHOLD, OLDER_THRESHOLD, OLDER_THRESHOLD)
    assert frozen > 100_000, "the modules, the application and the models are frozen"


def test_an_application_made_in_process_leaves_the_collector_as_it_was(tmp_path) -> None:
    before = (gc.get_threshold(), gc.get_freeze_count())
    create_app(Settings(database_url=f"sqlite:///{tmp_path / 'h.db'}"), RoofguardConfig())
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
