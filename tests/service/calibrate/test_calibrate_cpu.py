"""A real, small calibration of this machine's CPU through the PyTorch CPU build.

Skipped without torch (``pip install 'roofguard[calibrate]'``); the rest of the suite never
needs it. Uses the quick subset, the eager sweep (inductor's C++ compilation would cost tens of
seconds on a small CI box) and one thread: on an oversubscribed box OpenMP barriers across two
threads made the same run 6x slower and its sweep non-monotonic.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from calibrate_factories import scaled

from service.calibrate.fit import roof_at
from service.calibrate.storage import load_ceilings, load_health, measured_roof, save_ceilings
from service.cli import run
from service.cli.common import store_session

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    out = tmp_path_factory.mktemp("calib")
    db = f"sqlite:///{out}/history.db"
    argv = [
        "calibrate",
        "--device",
        "cpu",
        "--quick",
        "--sweep",
        "eager",
        "--threads",
        "1",
        "--output",
        str(out / "ceilings.json"),
        "--chart",
        str(out / "calib.svg"),
        "--store",
        "--db",
        db,
        "--runner",
        "ci-cpu",
    ]
    assert run(argv) == 0
    return out, db, load_ceilings(out / "ceilings.json")


def test_cpu_roofline_is_plausible(calibrated):
    _, _, ceilings = calibrated
    dram = ceilings.bandwidth_byte_per_s["dram"]
    assert 1e9 <= dram <= 1e12
    for precision in ("fp32", "fp64"):
        assert 1e9 <= ceilings.peak_flop_per_s[precision] <= 1e13
        assert ceilings.ridge_flop_per_byte[precision] == pytest.approx(
            ceilings.peak_flop_per_s[precision] / dram
        )
    assert ceilings.identity.kind == "cpu" and ceilings.identity.cpu_cores
    assert ceilings.identity.threads == 1
    assert any("time.perf_counter" in m for m in ceilings.method)
    assert any("eager" in m for m in ceilings.method)
    assert [p.k for p in ceilings.sweep] == [1, 4, 16, 64]
    assert ceilings.datasheet_ratio == {}  # a CPU is not in the GPU catalog


def test_measurements_lie_below_the_fitted_roof(calibrated):
    _, _, c = calibrated
    dram, peak = c.bandwidth_byte_per_s["dram"], c.peak_flop_per_s["fp32"]
    spikes = set(c.sweep_fit.spikes) if c.sweep_fit else set()
    assert len(spikes) <= 1
    for point in c.sweep:
        if point.k not in spikes:
            ceiling = float(roof_at(point.intensity_flop_per_byte, peak, dram))  # type: ignore[arg-type]
            assert point.flop_per_s <= ceiling * (1 + 1e-9), f"K={point.k} above the roof"
    for test in c.memory:
        assert 1e9 <= test.byte_per_s <= dram * (1 + 1e-9)
    for product in c.matmul:
        assert product.flop_per_s <= c.peak_flop_per_s[product.key] * (1 + 1e-9)
    # The sweep is a real measurement, not a constant: more FMAs per element take longer.
    assert c.sweep[-1].seconds > c.sweep[0].seconds


def test_stored_ceilings_are_the_runners_measured_roof(calibrated):
    out, db, ceilings = calibrated
    assert (out / "calib.svg").read_text().startswith("<?xml")
    with store_session(db) as session:
        roof = measured_roof(session=session, runner="ci-cpu", device=ceilings.device)
    assert roof is not None and roof.source == "measured"
    assert dict(roof.bandwidth_byte_per_s) == ceilings.bandwidth_byte_per_s


def test_preflight_refuses_a_runner_slower_than_its_calibration(calibrated, tmp_path, capsys):
    # Store ceilings fifty times what this CPU did (far beyond the few-fold swings a shared CI
    # box shows): tonight's quick run is then "degraded" on every ceiling.
    _, _, ceilings = calibrated
    db = f"sqlite:///{tmp_path}/history.db"
    with store_session(db) as session:
        save_ceilings(session=session, ceilings=scaled(ceilings, 50.0))
    health_path = tmp_path / "health.json"
    code = run(
        [
            "calibrate",
            "--device",
            "cpu",
            "--check",
            "--sweep",
            "eager",
            "--threads",
            "1",
            "--precisions",
            "fp32",
            "--db",
            db,
            "--runner",
            "ci-cpu",
            "--health-file",
            str(health_path),
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "is degraded: " in err and "dram bandwidth" in err and "fp32 peak" in err
    health = load_health(health_path)
    assert health is not None and not health.trusted and health.status == "degraded"
    assert health.ratios["bandwidth.dram"] < 0.8 and health.ratios["peak.fp32"] < 0.8
    assert json.loads(Path(health_path).read_text())["trusted"] is False


def _quick(tmp_path: Path, *extra: str) -> list[str]:
    """A quick CPU calibration whose ceilings would be written to ``ceilings.json``."""
    argv = ["calibrate", "--device", "cpu", "--quick", "--sweep", "eager", "--threads", "1"]
    return [*argv, "--output", str(tmp_path / "ceilings.json"), *extra]


def test_a_wrong_chart_name_is_refused_before_measuring(tmp_path, capsys):
    """It took the whole calibration (minutes on a GPU) to learn that .txt is no chart."""
    assert run(_quick(tmp_path, "--chart", str(tmp_path / "roof.txt"))) == 2
    assert "--chart" in capsys.readouterr().err
    assert not (tmp_path / "ceilings.json").exists()  # nothing was measured


def test_a_check_without_a_stored_calibration_measures_nothing(tmp_path, capsys):
    health_path = tmp_path / "health.json"
    db = f"sqlite:///{tmp_path}/history.db"
    argv = ["--check", "--db", db, "--runner", "ci-cpu", "--health-file", str(health_path)]
    assert run(_quick(tmp_path, *argv)) == 2
    assert "no stored ceilings for runner 'ci-cpu'" in capsys.readouterr().err
    health = load_health(health_path)
    assert health is not None and health.status == "uncalibrated" and not health.trusted
    assert not (tmp_path / "ceilings.json").exists()  # nothing was measured


def test_cuda_device_on_a_cpu_build_is_a_clear_error(capsys):
    assert run(["calibrate", "--device", "cuda:0"]) == 2
    assert "sees no CUDA device" in capsys.readouterr().err


def test_cpu_products_use_non_tensor_keys_and_skip_the_rest():
    from service.calibrate.backend import Unsupported
    from service.calibrate.backend_torch import TorchBackend

    backend = TorchBackend("cpu")
    key, case = backend.matmul_case("fp64", 64)
    assert key == "fp64" and case.flops == 2 * 64**3
    case.run()
    with pytest.raises(Unsupported, match="bf16 on CPU"):
        backend.matmul_case("bf16", 64)


def test_tf32_switch_sets_cublas_fp32_mode():
    import torch

    from service.calibrate.backend_torch_mm import _tf32_switch

    flags = torch.backends.cuda.matmul
    before = flags.fp32_precision
    try:
        _tf32_switch(torch, True)()
        assert flags.fp32_precision == "tf32"
        _tf32_switch(torch, False)()
        assert flags.fp32_precision == "ieee"
    finally:
        flags.fp32_precision = before


def test_sweep_kernels_do_k_fmas_per_element():
    import torch

    from service.calibrate.backend_torch import CHAIN_A, CHAIN_B, TorchBackend, _chain, eager_passes

    backend = TorchBackend("cpu")
    assert "eager" in backend.prepare_sweep("eager")
    case = backend.sweep_case(1000, 8)
    assert (case.flops, case.bytes) == (2 * 8 * 1000, 8 * 1000)
    case.run()
    x0 = torch.rand(4096, dtype=torch.float64)
    x = x0.clone()
    eager_passes(list(x.split(1000)), 8)  # blocks are views: x changes in place
    torch.testing.assert_close(x, x0 * (1 + CHAIN_B) ** 8, rtol=1e-13, atol=0)
    out = torch.empty_like(x0)
    _chain(3)(x0, out)
    expected = ((x0 * CHAIN_A + CHAIN_B) * CHAIN_A + CHAIN_B) * CHAIN_A + CHAIN_B
    torch.testing.assert_close(out, expected, rtol=1e-15, atol=0)


def _sees_a_gpu() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def test_without_a_gpu_the_default_device_says_it_measures_the_cpu(tmp_path, capsys):
    """A GPU runner with a CPU-only torch build measured its CPU without a word."""
    if _sees_a_gpu():
        pytest.skip("torch sees a GPU here: the default device is it")
    argv = ["calibrate", "--quick", "--sweep", "eager", "--threads", "1", "--precisions", "fp32"]
    assert run(argv) == 0  # a --check says no GPU is visible instead (test_calibrate_no_gpu.py)
    err = capsys.readouterr().err
    assert "no CUDA device found" in err and "measuring the CPU" in err


def test_without_a_gpu_the_default_device_is_not_stored_as_the_runners_roof(tmp_path, capsys):
    """``--store`` made the CPU's ceilings a GPU runner's measured roof."""
    if _sees_a_gpu():
        pytest.skip("torch sees a GPU here: the default device is it")
    db = f"sqlite:///{tmp_path}/history.db"
    argv = ["calibrate", "--quick", "--store", "--db", db, "--runner", "ci-gpu"]
    assert run([*argv, "--output", str(tmp_path / "ceilings.json")]) == 2
    assert "--device cpu" in capsys.readouterr().err
    assert not (tmp_path / "ceilings.json").exists()  # refused before measuring
