"""A device whose architecture contradicts the compute capability a report records is refused.

``inspect reduceInteger.csv --device H100-SXM5`` (an RTX 4090 report, CC 8.9) placed the
kernels on the H100's roofs with no word, and ``ingest`` of it with an H800 report under
``--device H800`` stored one run of CC 8.9 and 9.0 kernels, while a CC change inside one file
was refused ("mixed devices in one file").
"""

from __future__ import annotations

import json

import pytest

from rules import builtin_catalog
from service.cli import run
from service.pipeline.roofs import device_cc

#: An RTX 4090's ncu CSV: it names no device, and records CC 8.9 on every row.
LASHI = "ncu-csv/Lashi0812_CudaProgramming__ncu_reduceInteger.csv"
#: An H800's report (CC 9.0), naming its card.
H800 = "ncu-rep/flyinglandlord_sglang__profile.ncu-rep"
STORE = ["--repo", "a/b", "--commit", "c1", "--branch", "main", "--kind", "nightly"]


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    return next((line for line in lines if line.startswith("roofguard: error:")), "")


@pytest.mark.corpus
def test_inspect_refuses_a_device_of_another_architecture(corpus_dir, capsys):
    rc = run(["inspect", str(corpus_dir / LASHI), "--device", "H100-SXM5", "--json"])
    error = _error(capsys)
    assert rc == 2, error
    assert LASHI in error and "compute capability 8.9" in error, error
    assert "'H100-SXM5' is CC 9.0" in error, error


@pytest.mark.corpus
def test_inspect_takes_a_device_of_the_recorded_architecture(corpus_dir, capsys):
    assert run(["inspect", str(corpus_dir / LASHI), "--device", "RTX-4090", "--json"]) == 0
    device = json.loads(capsys.readouterr().out)["device"]
    assert (device["name"], device["compute_capability"]) == ("RTX-4090", "8.9")


@pytest.mark.corpus
def test_ingest_refuses_one_run_of_two_architectures(corpus_dir, tmp_path, capsys):
    db = ["--db", f"sqlite:///{tmp_path}/h.db"]
    files = [str(corpus_dir / LASHI), str(corpus_dir / H800)]
    rc = run(["ingest", *files, *STORE, *db, "--device", "H800"])
    error = _error(capsys)
    assert rc == 2, error
    assert "compute capability" in error and "8.9" in error and "9.0" in error, error
    assert LASHI in error and H800 in error, error


@pytest.mark.corpus
def test_ingest_refuses_a_device_of_another_architecture(corpus_dir, tmp_path, capsys):
    db = ["--db", f"sqlite:///{tmp_path}/h.db"]
    rc = run(["ingest", str(corpus_dir / LASHI), *STORE, *db, "--device", "H800"])
    error = _error(capsys)
    assert rc == 2 and "'H800' is CC 9.0" in error, error


def test_the_catalog_gives_cuda_devices_their_cc_and_others_none():
    catalog = builtin_catalog()
    assert device_cc("H100-SXM5", catalog) == "9.0"
    assert device_cc("RTX-4090", catalog) == "8.9"
    assert device_cc("B200", catalog) == "10.0"
    assert device_cc("MI300X", catalog) is None  # gfx942: no CC, no check
    assert device_cc("no such card", catalog) is None
