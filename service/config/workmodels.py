"""Declared work models (``[[work_models]]`` tables) of a config file.

There is one config loader (``service.config.load_config``): this reads the file through it,
so a typo anywhere in the file is the same error here as in ``roofguard check``::

    [[work_models]]
    pattern = "BM_gemm*"
    flops = { tensor_bf16 = "2*M*N*K" }
    bytes = { dram = "2*(M*K + K*N + M*N)" }
"""

from __future__ import annotations

from pathlib import Path

from collectors import WorkModel
from service.config import load_config


def load_work_models(path: Path) -> list[WorkModel]:
    """The ``work_models`` tables of ``path`` (``roofguard.toml`` or ``pyproject.toml``).

    Raises:
        ConfigError: The file is missing, unreadable, not TOML, or invalid anywhere; the error
            names the file and the key (``work_models[1].flops.tensor_bf16``).
    """
    return list(load_config(path, cwd=path.parent).work_models)
