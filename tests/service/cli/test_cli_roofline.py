"""The calculator through the real console entry point (a subprocess) and through run()."""

import json
import subprocess
import sys

import pytest

from service.cli import run


def roofguard(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service", *args], capture_output=True, text=True, check=False
    )


def test_decode_step_batch_1_h100_fp8_through_the_entry_point():
    proc = roofguard(
        "roofline",
        "--device",
        "H100-SXM5",
        "--precision",
        "fp8",
        "--flops",
        "140e9",
        "--bytes",
        "70e9",
        "--time",
        "0.025",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["intensity_flop_per_byte"] == pytest.approx(2.0)
    assert out["ridge_flop_per_byte"] == pytest.approx(590.7, abs=0.1)
    assert out["regime"] == "memory-bound" and out["borderline"] is False
    assert out["roof_time_s"] == pytest.approx(20.9e-3, abs=0.05e-3)
    assert out["attainable_flop_per_s"] == pytest.approx(2 * 3.35e12)
    assert out["achieved_flop_per_s"] == pytest.approx(140e9 / 0.025)
    assert out["percent_of_roof"] == pytest.approx(100 * 0.0208955 / 0.025, rel=1e-4)
    keys = {
        "device",
        "precision",
        "tier",
        "intensity_flop_per_byte",
        "ridge_flop_per_byte",
        "regime",
        "borderline",
        "attainable_flop_per_s",
        "roof_time_s",
    }
    assert keys <= set(out)


def test_decode_step_batch_32_is_still_memory_bound(capsys):
    assert (
        run(
            [
                "roofline",
                "--device",
                "H100-SXM5",
                "--precision",
                "fp8",
                "--flops",
                "4480e9",
                "--bytes",
                "70e9",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["intensity_flop_per_byte"] == pytest.approx(64.0)
    assert out["regime"] == "memory-bound"
    assert "percent_of_roof" not in out


def test_h100_bf16_ridge(capsys):
    run(
        [
            "roofline",
            "--device",
            "NVIDIA H100 80GB HBM3",
            "--precision",
            "bf16",
            "--flops",
            "1",
            "--bytes",
            "1",
            "--json",
        ]
    )
    assert json.loads(capsys.readouterr().out)["ridge_flop_per_byte"] == pytest.approx(295.3, 0.01)


def test_tiled_fp32_matmul_intensity_and_custom_hardware(capsys):
    n = 1024
    run(
        [
            "roofline",
            "--peak-flops",
            "4e12",
            "--bandwidth",
            "25.6e9",
            "--flops",
            str(2 * n**3),
            "--bytes",
            str(3 * 4 * n**2),
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert out["intensity_flop_per_byte"] == pytest.approx(170.67, abs=0.01)
    assert out["ridge_flop_per_byte"] == pytest.approx(4e12 / 25.6e9)
    assert out["regime"] == "compute-bound"
    assert out["device"] == "custom"


def test_text_output_has_table_and_plot(capsys):
    assert (
        run(
            [
                "roofline",
                "--device",
                "H100-SXM5",
                "--precision",
                "fp8",
                "--flops",
                "140e9",
                "--bytes",
                "70e9",
                "--time",
                "0.025",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "memory-bound" in out and "83.6 %" in out
    assert "*" in out and "ridge + at 590.7" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--device", "H10"], "closest known: H100-SXM5"),
        (["--device", "T4", "--precision", "fp8"], "T4 has no tensor_fp8 peak"),
        (["--device", "T4", "--tier", "l3"], "unknown tier 'l3'"),
        ([], "give --device, or both --peak-flops and --bandwidth"),
        (["--device", "T4", "--precision", "fp12"], "unknown precision 'fp12'"),
        (["--device", "T4", "--time", "0"], "--time: must be a positive finite number of seconds"),
        (["--device", "T4", "--time", "inf"], "--time: must be a positive finite number"),
    ],
)
def test_bad_input_exits_2_with_one_clear_message(args, message):
    proc = roofguard("roofline", "--flops", "1e9", "--bytes", "1e9", *args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stderr.count("error") == 1


def strict_json(text: str) -> dict:
    """Parse as strict JSON: ``Infinity`` and ``NaN`` are not JSON and fail the test."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_zero_bytes_is_a_compute_bound_kernel_with_unbounded_intensity(capsys):
    args = ["roofline", "--device", "H100-SXM5", "--flops", "1e9", "--bytes", "0"]
    assert run([*args, "--time", "1e-4"]) == 0
    out = capsys.readouterr().out
    assert "unbounded" in out and "compute-bound" in out and "14.9 %" in out
    assert run([*args, "--json"]) == 0
    result = strict_json(capsys.readouterr().out)
    assert result["intensity_flop_per_byte"] is None  # as a verdict's JSON writes it
    assert result["regime"] == "compute-bound"
    assert result["attainable_flop_per_s"] == pytest.approx(66.9e12)
    assert result["roof_time_s"] == pytest.approx(1e9 / 66.9e12)


def test_no_flops_and_no_bytes_is_neither_regime(capsys):
    args = ["roofline", "--device", "H100-SXM5", "--flops", "0", "--bytes", "0", "--time", "1"]
    assert run(args) == 0
    assert "neither" in capsys.readouterr().out
    assert run([*args, "--json"]) == 0
    result = strict_json(capsys.readouterr().out)
    assert result["regime"] is None and result["intensity_flop_per_byte"] is None
    assert result["percent_of_roof"] is None


@pytest.mark.parametrize(
    ("flops", "nbytes", "message"),
    [
        ("inf", "1", "--flops: must be a finite number (got inf)"),
        ("1", "-inf", "--bytes: must be a finite number (got -inf)"),
        ("nan", "1", "--flops: must be a finite number (got nan)"),
        ("-1", "1", "--flops: must be a non-negative number"),
    ],
)
def test_infinite_or_nan_work_is_refused_naming_the_option(flops, nbytes, message):
    proc = roofguard("roofline", "--device", "H100-SXM5", "--flops", flops, "--bytes", nbytes)
    assert proc.returncode == 2
    assert message in proc.stderr and "unexpected" not in proc.stderr
    assert proc.stderr.count("error") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--peak-flops", "-5", "--bandwidth", "1e9"], "--peak-flops: must be a positive finite"),
        (["--peak-flops", "0", "--bandwidth", "1e9"], "--peak-flops: must be a positive finite"),
        (["--peak-flops", "1e12", "--bandwidth", "nan"], "--bandwidth: must be a positive finite"),
        (["--peak-flops", "1e12", "--bandwidth", "0"], "--bandwidth: must be a positive finite"),
        (["--peak-flops", "inf", "--bandwidth", "1e9"], "--peak-flops: must be a positive finite"),
        (["--device", "H100-SXM5", "--bandwidth", "-1"], "--bandwidth: must be a positive finite"),
    ],
)
def test_a_rate_that_is_not_positive_and_finite_is_refused_naming_the_option(args, message):
    proc = roofguard("roofline", "--flops", "1e9", "--bytes", "1e9", *args)
    assert proc.returncode == 2
    assert message in proc.stderr and "unexpected" not in proc.stderr
    assert proc.stderr.count("error") == 1


def test_devices_json_lists_catalog(capsys):
    assert run(["devices", "--json"]) == 0
    devices = json.loads(capsys.readouterr().out)
    assert any(d["id"] == "H100-SXM5" and d["source"] for d in devices)


def test_schema_command_prints_run_record_schema(capsys):
    assert run(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "RunRecord"
