"""Day one on a CI runner: `roofguard check` of real A10G, V100 and RTX reports (issue 15).

The device a report names wins; a config `device` only names reports that name none; a
conflict with `--device` is an error naming both; a card the catalog lacks is judged on its
report's roof; a report naming no card says which flag or config key names it.
"""

import json
from pathlib import Path

import pytest

from service.cli import run

A10G = "ncu-rep/AveryClapp_ESMM-Research__profile_output.ncu-rep"
V100_PCIE = "ncu-csv/wangzy0327_cuda-roofline__output_V100.csv"
V100_SXM2 = "ncu-rep/kulnaman_lammps__output.ncu-rep"
RTX_3080 = "ncu-rep/iamcoleman_monte-carlo-pi__profile.ncu-rep"
RTX_2080_TI = "ncu-rep/tanvisharma_nsight-compute-files__3136_64_64_rtx2080ti_sgemm.ncu-rep"
RTX_2060 = "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.md"  # not in the catalog
GBENCH = "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json"  # names no device


def check(tmp_path: Path, report: Path, *extra: str) -> int:
    argv = ["check", str(report), "--repo", "o/r", "--commit", "c1", "--format", "json"]
    argv += ["--output", str(tmp_path / "verdict.json"), "--db", f"sqlite:///{tmp_path}/h.db"]
    return run([*argv, *extra])


def verdict(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "verdict.json").read_text())


@pytest.mark.parametrize(
    ("report", "device"),
    [
        (A10G, "A10G"),
        (V100_PCIE, "V100-PCIe-32GB"),
        (V100_SXM2, "V100-SXM2-16GB"),
        (RTX_3080, "RTX-3080"),
        (RTX_2080_TI, "RTX-2080-Ti"),
    ],
)
def test_check_judges_a_ci_card_on_its_datasheet_roof(corpus_dir, tmp_path, report, device):
    assert check(tmp_path, corpus_dir / report) == 0
    judged = verdict(tmp_path)
    assert (judged["device"], judged["roof"]) == (device, f"{device} (datasheet)")
    assert any(k["percent_of_roof"] is not None for k in judged["kernels"])


def test_a_config_device_does_not_replace_the_device_the_report_names(corpus_dir, tmp_path):
    """The config's device is a default for a fleet's reports, not an error beside theirs."""
    config = tmp_path / "roofguard.toml"
    config.write_text('device = "H100-SXM5"\n')
    assert check(tmp_path, corpus_dir / V100_PCIE, "--config", str(config)) == 0
    assert verdict(tmp_path)["device"] == "V100-PCIe-32GB"


def test_a_device_flag_naming_another_card_is_an_error(corpus_dir, tmp_path, capsys):
    assert check(tmp_path, corpus_dir / V100_PCIE, "--device", "H100-SXM5") == 2
    err = capsys.readouterr().err
    assert "names device 'Tesla V100-PCIE-32GB'" in err and "'H100-SXM5'" in err
    # A card the catalog knows needs no [devices] entry: the fix is to drop the device.
    assert "the catalog knows 'Tesla V100-PCIE-32GB' as V100-PCIe-32GB" in err
    assert "[devices." not in err
    assert not (tmp_path / "verdict.json").exists()
    # The same card under another name is no conflict.
    assert check(tmp_path, corpus_dir / V100_PCIE, "--device", "V100-PCIe-32GB") == 0
    assert verdict(tmp_path)["device"] == "V100-PCIe-32GB"


def test_a_report_naming_no_device_says_which_flag_or_key_names_it(corpus_dir, tmp_path, capsys):
    """It said `unknown device 'unknown'`, which names neither the report nor the fix."""
    assert check(tmp_path, corpus_dir / GBENCH) == 2
    err = capsys.readouterr().err
    assert f"{GBENCH}: the report names no device (it says 'unknown')" in err
    assert "--device NAME" in err and '`device = "NAME"` in roofguard.toml' in err
    assert "unknown device 'unknown'" not in err
    assert not (tmp_path / "verdict.json").exists()


def test_a_config_device_names_reports_that_name_none(corpus_dir, tmp_path):
    config = tmp_path / "roofguard.toml"
    config.write_text('device = "A10G"\n')
    assert check(tmp_path, corpus_dir / GBENCH, "--config", str(config)) == 0
    assert verdict(tmp_path)["device"] == "A10G"


def test_inspect_and_check_agree_on_the_roof(corpus_dir, tmp_path, capsys):
    config = tmp_path / "roofguard.toml"
    config.write_text('device = "H100-SXM5"\n')
    assert run(["inspect", str(corpus_dir / V100_PCIE), "--config", str(config)]) == 0
    assert "V100-PCIe-32GB (datasheet)" in capsys.readouterr().out
    assert run(["inspect", str(corpus_dir / V100_PCIE), "--device", "H100-SXM5"]) == 2
    assert "names device 'Tesla V100-PCIE-32GB'" in capsys.readouterr().err


def test_an_unknown_card_is_judged_on_its_reports_roof_with_a_note(corpus_dir, tmp_path):
    assert check(tmp_path, corpus_dir / RTX_2060) == 0
    judged = verdict(tmp_path)
    assert judged["roof"] == "NVIDIA GeForce RTX 2060 (report)"
    note = next(n for n in judged["notes"] if "not in the hardware catalog" in n)
    assert "closest known: RTX-2080" in note  # same generation (Turing) first


def test_check_takes_roof_like_ingest(corpus_dir, tmp_path, capsys):
    assert check(tmp_path, corpus_dir / A10G, "--roof", "report") == 0
    assert verdict(tmp_path)["roof"] == "A10G (report)"
    assert check(tmp_path, corpus_dir / A10G, "--roof", "roofline") == 2
    assert "--roof: unknown roof source 'roofline'" in capsys.readouterr().err


def test_an_unknown_card_without_peaks_names_the_closest_known_ones(corpus_dir, tmp_path, capsys):
    config = tmp_path / "roofguard.toml"
    config.write_text('device = "Tesla V100-PCIE-48GB"\n')
    assert check(tmp_path, corpus_dir / GBENCH, "--config", str(config)) == 2
    err = capsys.readouterr().err
    assert "unknown device 'Tesla V100-PCIE-48GB'; closest known: V100-PCIe" in err
    # the table to fill in, under the name the check looks up
    assert '[devices."Tesla V100-PCIE-48GB"] with peak_flop_per_s = { <precision> =' in err


def test_a_card_described_in_the_config_is_judged_on_its_datasheet(corpus_dir, tmp_path):
    """The fix the conflict and the stand-in notes suggest: describe the card by its name."""
    config = tmp_path / "roofguard.toml"
    config.write_text(
        '[devices."RTX-2060"]\n'
        'aliases = ["NVIDIA GeForce RTX 2060"]\n'
        'source = "my own measurement"\n'
        "peak_flop_per_s = { fp32 = 6.45e12 }\n"
        "bandwidth_byte_per_s = { dram = 336e9 }\n"
    )
    assert check(tmp_path, corpus_dir / RTX_2060, "--config", str(config)) == 0
    judged = verdict(tmp_path)
    assert judged["roof"] == "RTX-2060 (config)"  # the team's figures, not a datasheet's
    assert not [n for n in judged["notes"] if "not in the hardware catalog" in n]


def test_a_figure_the_config_overrides_is_named_in_the_roof_and_kept_in_the_store(
    corpus_dir, tmp_path, capsys
):
    """The roof was labelled "A10G (datasheet)" though its bandwidth was the config's."""
    config = tmp_path / "roofguard.toml"
    config.write_text('[devices."A10G"]\nbandwidth_byte_per_s = { dram = 500e9 }\n')
    nightly = ("--config", str(config), "--kind", "nightly", "--branch", "main")
    assert check(tmp_path, corpus_dir / A10G, *nightly) == 0
    assert verdict(tmp_path)["roof"] == "A10G (datasheet, dram from config)"
    capsys.readouterr()
    db = f"sqlite:///{tmp_path}/h.db"
    assert run(["compare", "--repo", "o/r", "--db", db, "--format", "markdown"]) == 0
    assert "| A10G \\(datasheet\\, dram from config\\) |" in capsys.readouterr().out


def test_a_sparse_looking_peak_set_in_the_config_is_held_against_the_datasheet(
    corpus_dir, tmp_path
):
    """peak-sanity's own advice ("overriding a device in roofguard.toml, divide a sparse
    figure by two") was never checked: an overridden roof still read as the datasheet's."""
    config = tmp_path / "roofguard.toml"
    config.write_text('[devices."A10G"]\npeak_flop_per_s = { fp32 = 70e12 }\n')
    assert check(tmp_path, corpus_dir / A10G, "--config", str(config)) == 0
    sparse = [f for f in verdict(tmp_path)["findings"] if f["rule"] == "peak-sanity"]
    assert [f["numbers"]["reference"] for f in sparse] == ["A10G (datasheet)"]
    assert "A10G (datasheet, fp32 from config) fp32 peak 54 TFLOP/s is 2.0×" in sparse[0]["message"]


def test_day_one_text_verdict_on_the_a10g(corpus_dir, tmp_path, capsys):
    """Nightlies of the A10G report, then a PR that triples one GEMM's time, as text.

    The headline named the slowest kernel in full (a 100-character template signature) and a
    run with nothing listed said "0 other kernel(s) unchanged." or "4 other kernel(s)".
    """
    db = f"sqlite:///{tmp_path}/h.db"
    report = corpus_dir / A10G
    argv = ["--repo", "o/r", "--db", db, "--format", "text"]
    assert run(["check", str(report), "--commit", "n0", *argv]) == 0
    assert "other kernel(s) unchanged" not in capsys.readouterr().out, "every kernel is new"
    for night in range(1, 4):
        nightly = ["--commit", f"n{night}", "--branch", "main", "--kind", "nightly"]
        assert run(["ingest", str(report), *nightly, "--repo", "o/r", "--db", db]) == 0
    capsys.readouterr()
    assert run(["check", str(report), "--commit", "p1", "--pr", "7", *argv]) == 0
    assert "All 4 kernel(s) unchanged." in capsys.readouterr().out
    capsys.readouterr()
    assert run(["inspect", "--json", str(report)]) == 0
    record = json.loads(capsys.readouterr().out)
    slow = next(k for k in record["kernels"] if k["key"].startswith("warptiling"))
    slow["duration_s"] *= 3
    slow["samples_s"] = [s * 3 for s in slow["samples_s"]]
    pr = tmp_path / "pr.json"
    pr.write_text(json.dumps(record))
    assert run(["check", str(pr), "--commit", "p2", "--pr", "8", *argv]) == 1
    lines = capsys.readouterr().out.splitlines()
    slowest = "GPU time 1.21 → 1.66 ms (1.37×) · slowest: warptiling<(int)128, (int)128, (int)16"
    assert lines[1].startswith(slowest)  # its compact signature, cut in the middle
    assert "222 → 667 µs (3.00×)" in lines[1] and "…" in lines[1] and len(lines[1]) < 160
    assert "3 other kernel(s) unchanged." in lines


@pytest.mark.parametrize(
    ("device", "noted"),
    [("H100", True), ("V100", True), ("H100-PCIe", False), ("A10", False)],
)
def test_a_family_name_the_catalog_takes_as_one_card_is_noted(corpus_dir, tmp_path, device, noted):
    """``device = "H100"`` on an H100 PCIe runner judged it on the SXM5's 3.35 TB/s, silently."""
    assert check(tmp_path, corpus_dir / GBENCH, "--device", device) == 0
    notes = [n for n in verdict(tmp_path)["notes"] if n.startswith(f"device {device!r} is taken")]
    assert bool(notes) == noted
    if device == "H100":
        assert notes == [
            "device 'H100' is taken as H100-SXM5; the catalog also has H100-PCIe, H100-NVL, "
            "with other peaks and bandwidth: name the card the runner has"
        ]


def test_an_unknown_device_flag_for_a_report_naming_none_is_named_as_the_flag(
    corpus_dir, tmp_path, capsys
):
    """It named the report's file, which names no device: the typo is the flag's."""
    assert check(tmp_path, corpus_dir / GBENCH, "--device", "H1000") == 2
    err = capsys.readouterr().err
    assert "roofguard: error: --device: unknown device 'H1000'; closest known: H100-SXM5" in err
    assert not (tmp_path / "verdict.json").exists()
