"""A damaged .ncu-rep that makes NVIDIA's reader abort is one clear error, not a dead process.

The fixture is made from a corpus report: one byte of the cutlass report, changed as a
seeded mutation sweep over the corpus found it, makes ``ncu_report`` abort inside protobuf
(``Check failed: count >= 0``, SIGABRT).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import collectors
from collectors import isolation
from collectors.errors import MalformedReport, ReaderCrashed
from collectors.formats.ncu_rep import NcuRep
from service.cli import run

pytest.importorskip("ncu_report")

SOURCE = "ncu-rep/panjd123_cutlass__report-s4.ncu-rep"
OFFSET, BYTE = 307, 0x92  # was 0x66 ('f'): a field length inside the first message


@pytest.fixture
def aborting_report(corpus_dir: Path, tmp_path: Path) -> Path:
    data = bytearray((corpus_dir / SOURCE).read_bytes())
    assert data[OFFSET] == 0x66, "the corpus report changed; find a new aborting mutation"
    data[OFFSET] = BYTE
    path = tmp_path / "damaged.ncu-rep"
    path.write_bytes(bytes(data))
    return path


def test_an_aborting_report_is_one_error_naming_the_file(aborting_report: Path) -> None:
    with pytest.raises(ReaderCrashed) as info:
        collectors.collect(aborting_report)
    text = str(info.value)
    assert text.startswith(f"{aborting_report}: the report reader crashed (SIGABRT)")
    assert "Check failed: count >= 0" in text  # the native library's own words
    assert isinstance(info.value, MalformedReport)  # exit 2 in the CLI, 422 in the API


def test_the_cli_exits_2_and_says_why(
    aborting_report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["inspect", str(aborting_report)]) == 2
    assert f"{aborting_report}: the report reader crashed" in capsys.readouterr().err


def test_the_same_file_undamaged_still_reads(corpus_dir: Path) -> None:
    record = collectors.collect(corpus_dir / SOURCE)
    assert len(record.kernels) == 2


def test_a_reader_over_its_time_is_stopped(
    corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(NcuRep, "limits", isolation.Limits(time_s=0.01))
    with pytest.raises(ReaderCrashed, match=r"took longer than 0\.01 s"):
        collectors.collect(corpus_dir / SOURCE)


def test_a_reader_over_its_memory_is_stopped(
    corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = isolation.Limits(memory_bytes=256 * 1024, preload=("ncu_report",))
    monkeypatch.setattr(NcuRep, "limits", limits)
    path = corpus_dir / SOURCE
    with pytest.raises(ReaderCrashed) as info:
        collectors.collect(path)
    assert str(info.value) == f"{path}: reading it needed more than its 0.25 MiB of memory"


def test_the_childs_own_errors_keep_their_row(tmp_path: Path, corpus_dir: Path) -> None:
    data = (corpus_dir / "ncu-rep/flyinglandlord_sglang__profile.ncu-rep").read_bytes()
    path = tmp_path / "cut.ncu-rep"
    path.write_bytes(data[: int(len(data) * 0.9)])
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert not isinstance(info.value, ReaderCrashed)
    assert info.value.path == str(path)
    assert "truncated" in info.value.reason


def test_a_kernel_name_with_an_undecodable_byte_reads_with_a_replacement(
    corpus_dir: Path, tmp_path: Path
) -> None:
    data = bytearray((corpus_dir / SOURCE).read_bytes())
    at = 1314659  # inside a demangled name: "(int)8" becomes "(\x8fnt)8"
    assert data[at : at + 3] == b"int"
    data[at] = 0x8F
    path = tmp_path / "name.ncu-rep"
    path.write_bytes(bytes(data))
    record = collectors.collect(path)
    assert any("(\ufffdnt)8" in kernel.name for kernel in record.kernels)
    record.model_dump_json()  # a name the library decoded with surrogates still serialises
