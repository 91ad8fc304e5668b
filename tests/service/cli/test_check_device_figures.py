"""``[devices.*]`` mistakes refused when the config is read, by ``roofguard check``.

Each passed silently before: a DRAM bandwidth written in TB/s (1.008) put an RTX 4090 kernel
at 281,387,972,962% of its roof and blamed L2 residency; a DRAM bandwidth of 0 left every
kernel unplaced with exit 0; a typo'd id (H800-SMX) added a device no report names while the
H800's figures stayed the datasheet's; an alias already the catalog's lost to it without a
word; a new card without a DRAM bandwidth left its memory-bound kernels unplaced while a note
still named the DRAM roof its report implied.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import run

RTX_4090 = "ncu-rep/victor-lvsy_seq_align__profile.ncu-rep"
RTX_2080_TI = "ncu-rep/tanvisharma_nsight-compute-files__3136_64_64_rtx2080ti_sgemm.ncu-rep"
H800 = "ncu-rep/flyinglandlord_sglang__profile.ncu-rep"
RTX_2060 = "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.csv"  # not in the catalog


def check(tmp_path: Path, report: Path, *extra: str) -> int:
    argv = ["check", str(report), "--repo", "o/r", "--commit", "c1", "--format", "json"]
    argv += ["--output", str(tmp_path / "verdict.json"), "--db", f"sqlite:///{tmp_path}/h.db"]
    return run([*argv, *extra])


def refused(tmp_path: Path, capsys, report: Path, text: str) -> str:
    """The one-line error of ``check`` with ``text`` as ``--config``; nothing is stored."""
    config = tmp_path / "roofguard.toml"
    config.write_text(text)
    assert check(tmp_path, report, "--config", str(config)) == 2
    assert not (tmp_path / "verdict.json").exists()
    err = capsys.readouterr().err
    assert err.startswith(f"roofguard: error: {config}: devices."), err
    return err


def test_a_bandwidth_written_in_tbs_is_refused_with_the_unit_it_looks_like(
    corpus_dir, tmp_path, capsys, monkeypatch
):
    """The roofguard.toml in the working directory, as a CI job finds it."""
    (tmp_path / "roofguard.toml").write_text(
        "[devices.RTX-4090]\nbandwidth_byte_per_s = { dram = 1.008 }\n"
    )
    monkeypatch.chdir(tmp_path)
    assert check(tmp_path, corpus_dir / RTX_4090) == 2
    err = capsys.readouterr().err
    assert (
        f"{tmp_path / 'roofguard.toml'}: devices.RTX-4090.bandwidth_byte_per_s.dram: 1.008 B/s "
        "is below 1e9 B/s, slower than any GPU: 1.008 looks like TB/s: write 1.008e12 "
        "(RTX-4090's catalog figure: 1.008e12 B/s)" in err
    ), err


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (  # was "2.2e13% above the roof"
            "[devices.RTX-2080-Ti]\npeak_flop_per_s = { fp32 = 13.4 }\n",
            "devices.RTX-2080-Ti.peak_flop_per_s.fp32: 13.4 FLOP/s is below 1e9 FLOP/s, slower "
            "than any GPU: 13.4 looks like TFLOP/s: write 13.4e12 (RTX-2080-Ti's catalog "
            "figure: 13.4e12 FLOP/s)",
        ),
        (  # GB/s, and a card the catalog lacks: the catalog's typical DRAM figure decides
            "[devices.my-gpu]\npeak_flop_per_s = { fp32 = 1e13 }\n"
            "bandwidth_byte_per_s = { dram = 900 }\n",
            "devices.my-gpu.bandwidth_byte_per_s.dram: 900 B/s is below 1e9 B/s, slower than "
            "any GPU: 900 looks like GB/s: write 900e9",
        ),
        (
            "[devices.RTX-2080-Ti]\nbandwidth_byte_per_s = { dram = 616e18 }\n",
            "devices.RTX-2080-Ti.bandwidth_byte_per_s.dram: 616e18 B/s is above 1e18 B/s, "
            "faster than any GPU: check the exponent (RTX-2080-Ti's catalog figure: 616e9 B/s)",
        ),
    ],
)
def test_a_figure_no_gpu_has_is_refused(corpus_dir, tmp_path, capsys, text, written):
    err = refused(tmp_path, capsys, corpus_dir / RTX_2080_TI, text)
    assert f"{tmp_path / 'roofguard.toml'}: {written}" in err, err


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (  # every kernel was "unplaced: no bandwidth for dram", exit 0
            "[devices.RTX-4090]\nbandwidth_byte_per_s = { dram = 0 }\n",
            "devices.RTX-4090.bandwidth_byte_per_s.dram: must be positive (B/s), not 0",
        ),
        (
            "[devices.RTX-4090]\npeak_flop_per_s = { fp32 = 0.0 }\n",
            "devices.RTX-4090.peak_flop_per_s.fp32: must be positive (FLOP/s), not 0",
        ),
        (
            "[devices.RTX-4090]\npeak_flop_per_s = { fp32 = -82.6e12 }\n",
            "devices.RTX-4090.peak_flop_per_s.fp32: must be positive (FLOP/s), not -82.6e12",
        ),
    ],
)
def test_a_figure_of_zero_or_below_is_refused(corpus_dir, tmp_path, capsys, text, written):
    err = refused(tmp_path, capsys, corpus_dir / RTX_4090, text)
    assert f"{tmp_path / 'roofguard.toml'}: {written}" in err, err


def test_a_new_id_one_typo_from_a_catalog_card_is_refused(corpus_dir, tmp_path, capsys):
    """H800 reports stayed on the datasheet's 3.35 TB/s while "H800-SMX" got the 2 TB/s."""
    err = refused(
        tmp_path,
        capsys,
        corpus_dir / H800,
        "[devices.H800-SMX]\nbandwidth_byte_per_s = { dram = 2.0e12 }\n",
    )
    assert (
        "devices.H800-SMX: not in the catalog, and one letter edit from H800-SXM: did you mean "
        "H800-SXM? (`roofguard devices` lists the catalog; a card it lacks names itself new "
        "with aliases = [<the names its reports print>])" in err
    ), err


def test_a_new_card_near_a_catalog_one_is_taken_with_the_names_its_reports_print(
    corpus_dir, tmp_path
):
    config = tmp_path / "roofguard.toml"
    config.write_text(
        '[devices."H800-SMX"]\naliases = ["NVIDIA H800 SMX"]\n'
        "peak_flop_per_s = { fp32 = 60e12 }\nbandwidth_byte_per_s = { dram = 2.0e12 }\n"
    )
    assert check(tmp_path, corpus_dir / H800, "--config", str(config)) == 0
    assert json.loads((tmp_path / "verdict.json").read_text())["roof"] == "H800-SXM (datasheet)"


def test_a_new_card_named_as_its_report_prints_it_is_taken(corpus_dir, tmp_path):
    """The unknown-device error suggests ``[devices."<the printed name>"]``: never a typo."""
    config = tmp_path / "roofguard.toml"
    config.write_text(
        '[devices."NVIDIA GeForce RTX 4090 D"]\n'
        "peak_flop_per_s = { fp32 = 73.5e12 }\nbandwidth_byte_per_s = { dram = 1.008e12 }\n"
    )
    assert check(tmp_path, corpus_dir / H800, "--config", str(config)) == 0


def test_an_alias_the_catalog_gives_another_card_is_refused(corpus_dir, tmp_path, capsys):
    """The H800's reports were silently judged on the catalog's H800-SXM, not on NEWCARD."""
    err = refused(
        tmp_path,
        capsys,
        corpus_dir / H800,
        '[devices.NEWCARD]\naliases = ["NVIDIA H800"]\npeak_flop_per_s = { fp32 = 1e12 }\n'
        "bandwidth_byte_per_s = { dram = 1e12 }\n",
    )
    assert (
        "devices.NEWCARD.aliases[0]: 'NVIDIA H800' already names the catalog's H800-SXM: to "
        "change that card's figures write [devices.H800-SXM]; else drop the alias" in err
    ), err


def test_an_alias_two_new_cards_give_is_refused(corpus_dir, tmp_path, capsys):
    err = refused(
        tmp_path,
        capsys,
        corpus_dir / H800,
        '[devices.card-a]\naliases = ["lab card"]\npeak_flop_per_s = { fp32 = 1e12 }\n'
        "bandwidth_byte_per_s = { dram = 1e12 }\n"
        '[devices.card-b]\naliases = ["Lab Card"]\npeak_flop_per_s = { fp32 = 2e12 }\n'
        "bandwidth_byte_per_s = { dram = 1e12 }\n",
    )
    assert "devices.card-b.aliases[0]: 'Lab Card' already names devices.card-a" in err, err


def test_a_new_card_without_a_dram_bandwidth_is_refused(corpus_dir, tmp_path, capsys):
    """Its memory-bound kernels were unplaced, under a note naming the report's 336 GB/s."""
    err = refused(
        tmp_path,
        capsys,
        corpus_dir / RTX_2060,
        '[devices."NVIDIA GeForce RTX 2060"]\npeak_flop_per_s = { fp32 = 6.45e12 }\n',
    )
    assert (
        "devices.NVIDIA GeForce RTX 2060.bandwidth_byte_per_s.dram: a card the catalog lacks "
        "needs its DRAM bandwidth (B/s, e.g. 336e9): without it no kernel's memory time is "
        "placed" in err
    ), err


def test_a_sparse_looking_peak_names_the_unit_of_both_figures(corpus_dir, tmp_path):
    """The message read "peak 23 TFLOP/s is 2.0× RTX-2080-Ti (datasheet)'s 11"."""
    config = tmp_path / "roofguard.toml"
    config.write_text("[devices.RTX-2080-Ti]\npeak_flop_per_s = { fp32 = 26.9e12 }\n")
    assert check(tmp_path, corpus_dir / RTX_2080_TI, "--config", str(config)) == 0
    findings = json.loads((tmp_path / "verdict.json").read_text())["findings"]
    [sparse] = [f for f in findings if f["rule"] == "peak-sanity" and "sparse" in f["message"]]
    assert "× RTX-2080-Ti (datasheet)'s 11 TFLOP/s: it looks like" in sparse["message"], sparse
