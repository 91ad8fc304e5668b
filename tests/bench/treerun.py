"""A benchmark script run again on the code of another tree, for figures side by side.

A script measures the tree it runs in; given ``--code DIR`` it measures ``DIR`` instead (a
checkout of an older commit, ``git archive REV | tar -x -C DIR``) and prints its figures as
one JSON line, the last it prints. Each tree is measured in a fresh process of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def run_on_tree(script: Path, tree: Path, flags: Sequence[str]) -> dict[str, Any]:
    """The figures ``script`` prints measuring the code in ``tree``, run with ``flags``."""
    command = [sys.executable, str(script), "--code", str(tree), *flags]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures
