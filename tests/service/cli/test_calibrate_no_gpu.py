"""``calibrate --check`` on a runner that sees no GPU: untrusted and written down, no store made.

The preflight measured the CPU in silence and said "no stored ceilings ... run `calibrate
--store` first", which then refused (no CUDA device); ``--device cuda:0`` wrote no health file;
and the check created an empty history store although it only reads.
"""

from __future__ import annotations

import pytest

from service.calibrate.storage import load_health
from service.cli import run

torch = pytest.importorskip("torch")


@pytest.mark.skipif(torch.cuda.is_available(), reason="torch sees a GPU here")
@pytest.mark.parametrize("device", [[], ["--device", "cuda:0"]], ids=["default", "cuda:0"])
def test_a_check_without_a_gpu_writes_an_untrusted_health_file(
    tmp_path, monkeypatch, capsys, device
):
    monkeypatch.chdir(tmp_path)  # the default store and health file, .roofguard/
    assert run(["calibrate", "--check", "--runner", "r1", *device]) == 2
    out, err = capsys.readouterr()
    assert "no GPU visible" in err and f"torch {torch.__version__} sees no CUDA device" in err
    assert "no stored ceilings" not in err and "measuring the CPU" not in err
    assert "trusted: False" in out
    health = load_health(tmp_path / ".roofguard" / "health.json")
    assert health is not None and not health.trusted and health.status == "no-gpu"
    assert health.runner == "r1" and health.reasons[0].startswith("no GPU visible (")
    assert not (tmp_path / ".roofguard" / "history.db").exists()  # a check only reads


def test_a_check_of_a_store_that_does_not_exist_creates_none(tmp_path, capsys):
    db = tmp_path / "history.db"
    health_path = tmp_path / "health.json"
    argv = ["calibrate", "--check", "--device", "cpu", "--runner", "r1", "--db", f"sqlite:///{db}"]
    assert run([*argv, "--health-file", str(health_path)]) == 2
    assert "no stored ceilings for runner 'r1'" in capsys.readouterr().err
    health = load_health(health_path)
    assert health is not None and health.status == "uncalibrated" and not health.trusted
    assert not db.exists()
