"""The health decision, the runner_ceilings store (real SQLite, and PostgreSQL when set up),
health.json, and the preflight's exit codes, all without torch."""

from __future__ import annotations

import json
import sys
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from calibrate_factories import make_ceilings, scaled

from service.calibrate.health import decide_health, format_rate, uncalibrated
from service.calibrate.storage import (
    device_key,
    latest_ceilings,
    load_ceilings,
    load_health,
    measured_roof,
    save_ceilings,
    write_json_atomic,
)
from service.cli import run
from service.cli.calibrate_cmd import _check
from service.cli.common import store_session
from service.errors import BadInput

STORED = make_ceilings(bandwidth={"dram": 3.1e12}, peaks={"fp32": 60e12, "tensor_bf16": 800e12})


def test_healthy_when_every_ceiling_is_within_tolerance():
    current = scaled(STORED, 0.9, quick=True)
    health = decide_health(current=current, stored=STORED, tolerance=0.8)
    assert health.trusted and health.status == "healthy"
    assert health.reasons == ()
    assert health.ratios == pytest.approx(
        {"bandwidth.dram": 0.9, "peak.fp32": 0.9, "peak.tensor_bf16": 0.9}
    )
    assert "healthy" in health.message and "90%" in health.message


def test_slow_memory_is_named_with_the_calibrated_figure():
    current = make_ceilings(
        bandwidth={"dram": 0.61 * 3.1e12}, peaks={"fp32": 59e12, "tensor_bf16": 790e12}
    )
    health = decide_health(current=current, stored=STORED)
    assert not health.trusted and health.status == "degraded"
    assert health.reasons == ("dram bandwidth 61% of this runner's calibrated 3.1 TB/s",)
    assert health.message.startswith("runner gpu-runner-1 is degraded: dram bandwidth 61%")


def test_several_slow_ceilings_are_listed_worst_first():
    current = make_ceilings(
        bandwidth={"dram": 0.7 * 3.1e12}, peaks={"fp32": 60e12, "tensor_bf16": 0.5 * 800e12}
    )
    health = decide_health(current=current, stored=STORED)
    assert health.reasons == (
        "tensor_bf16 peak 50% of this runner's calibrated 800 TFLOP/s",
        "dram bandwidth 70% of this runner's calibrated 3.1 TB/s",
    )


def test_a_throttled_gpu_is_degraded_even_at_full_speed():
    current = scaled(
        STORED,
        1.0,
        identity=STORED.identity.model_copy(
            update={"throttle_reasons": ("gpu_idle", "hw_thermal_slowdown")}
        ),
    )
    health = decide_health(current=current, stored=STORED)
    assert not health.trusted
    assert health.reasons == ("clocks throttled: hw_thermal_slowdown",)


def test_idle_and_application_clock_reasons_are_normal():
    current = scaled(
        STORED,
        1.0,
        identity=STORED.identity.model_copy(
            update={"throttle_reasons": ("gpu_idle", "applications_clocks_setting")}
        ),
    )
    assert decide_health(current=current, stored=STORED).trusted


def test_driver_clock_and_speed_changes_are_notes_not_reasons():
    then = STORED.model_copy(
        update={
            "identity": STORED.identity.model_copy(
                update={"driver": "535.104", "max_sm_clock_hz": 1.98e9}
            )
        }
    )
    now = scaled(
        then,
        1.0,
        identity=then.identity.model_copy(update={"driver": "550.54", "max_sm_clock_hz": 1.755e9}),
    )
    now = now.model_copy(update={"bandwidth_byte_per_s": {"dram": 1.5 * 3.1e12}})
    health = decide_health(current=now, stored=then)
    assert health.trusted and health.reasons == ()
    assert health.notes == (
        "driver 535.104 at calibration, 550.54 now",
        "max SM clock 1980 MHz at calibration, 1755 MHz now",
        "bandwidth.dram faster than calibrated: the calibration may have run on a busy machine",
        "recalibrate with `roofguard calibrate --store`",
    )
    assert decide_health(current=scaled(STORED, 0.9), stored=STORED).notes == ()


def test_nothing_to_compare_is_not_healthy():
    current = make_ceilings(bandwidth={"l2": 9e12}, peaks={"tensor_fp8": 1e15})
    health = decide_health(current=current, stored=STORED)
    assert not health.trusted
    assert "no ceiling in common" in health.reasons[0]


def test_tolerance_must_be_a_fraction():
    with pytest.raises(ValueError, match="tolerance"):
        decide_health(current=STORED, stored=STORED, tolerance=1.5)


def test_uncalibrated_runner_is_untrusted_and_says_what_to_do():
    health = uncalibrated(STORED.runner or "", STORED.device, "sqlite:///x.db")
    assert health.status == "uncalibrated" and not health.trusted
    assert "roofguard calibrate --store" in health.message


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (3.1e12, "B/s", "3.1 TB/s"),
        (989.4e12, "FLOP/s", "989 TFLOP/s"),
        (57.6e9, "B/s", "57.6 GB/s"),
        (12.0, "B/s", "12 B/s"),
    ],
)
def test_format_rate(value, unit, text):
    assert format_rate(value, unit) == text


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path):
    """A real store: a SQLite file, or the session's PostgreSQL database (open_store migrates)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/history.db"
    return request.getfixturevalue("postgres_url")


def test_store_keeps_the_latest_calibration_per_runner_and_device(store_url):
    runner = f"gpu-{uuid.uuid4().hex[:8]}"  # the PostgreSQL database is shared by the session
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    old = make_ceilings(bandwidth={"dram": 2.0e12}, runner=runner, created_at=t0)
    new = make_ceilings(bandwidth={"dram": 3.0e12}, runner=runner, created_at=t0 + timedelta(1))
    other = make_ceilings(
        bandwidth={"dram": 1.0e12}, runner=runner + "-b", created_at=t0 + timedelta(days=2)
    )
    with store_session(store_url) as session:
        for ceilings in (new, old, other):  # insertion order must not matter
            save_ceilings(session=session, ceilings=ceilings)
    with store_session(store_url) as session:
        # Any name a tool prints for the device finds it.
        latest = latest_ceilings(session=session, runner=runner, device="H100", backend="torch")
        roof = measured_roof(session=session, runner=runner, device="NVIDIA H100 80GB HBM3")
        nobody = measured_roof(session=session, runner="nobody", device="H100")
        other_device = measured_roof(session=session, runner=runner, device="A100-SXM4-80GB")
        cupy = latest_ceilings(session=session, runner=runner, device="H100", backend="cupy")
    assert latest is not None and latest == new
    assert roof is not None and roof.source == "measured" and roof.device == "H100-SXM5"
    assert roof.bandwidth_byte_per_s == {"dram": 3.0e12}
    assert nobody is None and other_device is None and cupy is None


def test_store_needs_a_runner(tmp_path):
    with (
        store_session(f"sqlite:///{tmp_path}/h.db") as session,
        pytest.raises(BadInput, match="--runner"),
    ):
        save_ceilings(session=session, ceilings=make_ceilings(runner=None))


def test_device_key_folds_unknown_names():
    assert device_key("NVIDIA H100 80GB HBM3") == "H100-SXM5"
    assert device_key("AMD EPYC 9654 96-Core Processor") == "epyc965496coreprocessor"


def test_health_file_round_trip_and_errors(tmp_path):
    path = tmp_path / ".roofguard" / "health.json"
    assert load_health(path) is None
    health = decide_health(current=scaled(STORED, 0.5), stored=STORED)
    write_json_atomic(path, health)
    assert load_health(path) == health
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind
    document = json.loads(path.read_text())
    document["trusted"] = "maybe"
    path.write_text(json.dumps(document))
    with pytest.raises(BadInput, match=r"health\.json: field trusted"):
        load_health(path)


def test_bad_ceilings_file_names_file_and_field(tmp_path):
    path = tmp_path / "ceilings.json"
    document = json.loads(STORED.model_dump_json())
    document["bandwidth_byte_per_s"]["dram"] = -1
    path.write_text(json.dumps(document))
    with pytest.raises(BadInput, match=r"ceilings\.json: field bandwidth_byte_per_s\.dram"):
        load_ceilings(path)


def test_preflight_exit_codes_and_health_file(tmp_path):
    """Exit 0 healthy, 1 degraded (2, no stored calibration: ``test_calibrate_cpu``)."""
    health_path = tmp_path / "health.json"
    current = scaled(STORED, 0.95, quick=True)
    assert _check(current, STORED, 0.8, health_path) == 0
    assert load_health(health_path).trusted  # type: ignore[union-attr]
    assert _check(scaled(STORED, 0.5), STORED, 0.8, health_path) == 1
    verdict = json.loads(health_path.read_text())
    assert verdict["trusted"] is False and verdict["status"] == "degraded"
    assert len(verdict["reasons"]) == 3 and verdict["reasons"][0].startswith("dram bandwidth 50%")


def test_without_torch_the_command_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    assert run(["calibrate", "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'roofguard[calibrate]'" in err and "pip install torch" in err


def test_check_and_store_together_are_refused(capsys):
    assert run(["calibrate", "--check", "--store"]) == 2
    assert "--check and --store" in capsys.readouterr().err


def test_unknown_backend_and_bad_threads_are_named(capsys):
    assert run(["calibrate", "--backend", "jax"]) == 2
    assert "--backend: unknown backend 'jax'" in capsys.readouterr().err
    assert run(["calibrate", "--backend", "cupy", "--threads", "2"]) == 2
    assert "--threads: only the torch backend" in capsys.readouterr().err


def test_write_is_atomic_when_serialising_fails(tmp_path):
    path = tmp_path / "ceilings.json"
    path.write_text("previous")

    class Broken(type(STORED)):  # type: ignore[misc]
        def model_dump_json(self, **_: object) -> str:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_json_atomic(path, Broken.model_validate(STORED.model_dump()))
    assert path.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["ceilings.json"]


def test_cli_module_is_registered():
    from service.cli import COMMANDS

    assert "service.cli.calibrate_cmd" in COMMANDS
