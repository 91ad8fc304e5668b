"""A report cut inside its last quoted cell is refused, not read with a shorter last value.

The csv module takes a quote left open at the end of its input as the end of the cell: a
raw page cut two digits into its last metric was read, that metric a hundredth of its value
(the careful reader), and a details page alike. The cut lost the closing quote, so the
file says it is cut; each reader now says so, naming the line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ncu_files import write_raw

import collectors
from collectors.errors import MalformedReport

METRICS = [("gpu__time_duration.sum", "nsecond"), ("dram__bytes.sum", "byte")]
#: Every CSV report of the corpus whose last cell is quoted (ncu quotes every cell).
QUOTED = [
    "ncu-csv/AndrewXu22_optimal_unified_memory__lassen_nsight_cfd_097K.log",
    "ncu-csv/Gardenia-Tian_LearningNote4Dev__gemm_output_sgemm.csv",
    "ncu-csv/Lashi0812_CudaProgramming__ncu_reduceInteger.csv",
    "ncu-csv/brycelelbach_nsightful__copy_blocked.csv",
    "ncu-csv/leleucas_Actual-Parameter-Collection__bert_flashattn_nsight.csv",
    "ncu-csv/leleucas_Actual-Parameter-Collection__interpolate_nsight_virtual.csv",
    "ncu-csv/meinie0826_Roofline-Analysis__torch_sdpa_flash__gqa_bf16_b32_ctx8k_p64.ncu.csv",
    "ncu-csv/wangzy0327_cuda-roofline__output_V100.csv",
]


@pytest.mark.parametrize("name", QUOTED, ids=lambda n: Path(n).stem[:40])
def test_a_report_cut_inside_its_last_cell_is_refused(
    name: str, corpus_dir: Path, tmp_path: Path
) -> None:
    source = corpus_dir / name
    collectors.collect(source)  # whole, it reads
    body = source.read_bytes().rstrip(b"\r\n")
    assert body.endswith(b'"')
    opening = body.rindex(b'"', 0, len(body) - 1)
    kept = max(1, len(body) - opening - 4)  # the last cell's text, less two characters
    cut = tmp_path / source.name
    cut.write_bytes(body[: opening + 1 + kept])  # its closing quote lost too
    lines = body.count(b"\n") + 1
    with pytest.raises(MalformedReport) as info:
        collectors.collect(cut)
    assert info.value.reason == "a quoted cell is not closed (a cut file?)"
    assert info.value.row == str(lines)


def test_a_roofguard_csv_cut_inside_a_quoted_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text('duration_s,name\n1e-3,"void k<float, 128>(float*)"\n', encoding="utf-8")
    assert collectors.collect(path).kernels[0].name == "void k<float, 128>(float*)"
    path.write_text('duration_s,name\n1e-3,"void k<float, 12', encoding="utf-8")
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert (info.value.row, info.value.reason) == ("2", "a quoted cell is not closed (a cut file?)")


def test_a_raw_page_cut_right_after_a_separator_is_refused(tmp_path: Path) -> None:
    """Its last row has the header's width, an empty last cell: the metric would be lost."""
    source = write_raw(
        tmp_path / "whole.csv", METRICS, [(1, "k", ["1000", "2"]), (2, "j", ["3", "4"])]
    )
    body = source.read_bytes().rstrip(b"\r\n")
    cut = tmp_path / "cut.csv"
    cut.write_bytes(body[: body.rindex(b'","') + 2])  # ends '...,"3",'
    with pytest.raises(MalformedReport) as info:
        collectors.collect(cut)
    assert info.value.reason == "the row ends in a separator (a cut file?)"
    assert info.value.row == str(body.count(b"\n") + 1)


def test_text_after_a_closing_quote_still_reads(corpus_dir: Path, tmp_path: Path) -> None:
    """Only the end of the file is parsed strictly: a space after a quote reads as before."""
    path = tmp_path / "r.csv"
    path.write_text('name,duration_s\n"k 1" ,0.001\nk2,"0.002" \n', encoding="utf-8")
    assert [(k.name, k.duration_s) for k in collectors.collect(path).kernels] == [
        ("k 1", 0.001),
        ("k2", 0.002),
    ]
    details = corpus_dir / QUOTED[1]
    lines = details.read_bytes().split(b"\n")
    lines[len(lines) // 2] += b" "  # a space after a row's last quote, mid-file
    spaced = tmp_path / details.name
    spaced.write_bytes(b"\n".join(lines))
    assert len(collectors.collect(spaced).kernels) == len(collectors.collect(details).kernels)


def test_an_nvbench_csv_cut_in_its_last_number_is_refused(corpus_dir: Path, tmp_path: Path) -> None:
    """nvbench's numbers are not quoted: the last batch GPU time, ``0.0016778905703998602``,
    cut to ``0.00`` kept the row's width and was read as 0 s. nvbench ends every row with a
    line break."""
    source = corpus_dir / "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.csv"
    body = source.read_bytes()
    whole = [k.model_dump(exclude={"source"}) for k in collectors.collect(source).kernels]
    cut = tmp_path / source.name
    cut.write_bytes(body[: body.rindex(b",") + 5])
    with pytest.raises(MalformedReport) as info:
        collectors.collect(cut)
    assert info.value.reason == "the last row does not end in a line break (a cut file?)"
    assert info.value.row == str(body.count(b"\n"))
    cut.write_bytes(body.rstrip(b"\r\n") + b"\r\n\n")  # whole, whatever its line ends
    assert [k.model_dump(exclude={"source"}) for k in collectors.collect(cut).kernels] == whole


V100 = "ncu-csv/wangzy0327_cuda-roofline__output_V100.csv"


def _details_lines(corpus_dir: Path) -> list[bytes]:
    return (corpus_dir / V100).read_bytes().rstrip(b"\r\n").split(b"\n")


def test_a_details_page_cut_right_after_a_separator_is_refused(
    corpus_dir: Path, tmp_path: Path
) -> None:
    """Its last row kept its width, the value empty: the launch lost its hmul count."""
    lines = _details_lines(corpus_dir)
    cut = tmp_path / "cut.csv"
    cut.write_bytes(b"\n".join(lines)[:-3])  # ends '..."inst",'
    with pytest.raises(MalformedReport) as info:
        collectors.collect(cut)
    assert info.value.reason == "the row ends in a separator (a cut file?)"
    assert info.value.row == str(len(lines))


def test_a_details_page_cut_between_the_rows_of_a_launch_is_refused(
    corpus_dir: Path, tmp_path: Path
) -> None:
    """Each row holds one metric: cut between two, the last launch read as whole with fewer
    metrics (its FLOPs from fewer instruction counts). Cut between launches, the page reads:
    nothing in it says more launches followed."""
    lines = _details_lines(corpus_dir)
    launch_of = [line.split(b'","')[0] for line in lines]
    last_start = max(i for i in range(1, len(lines)) if launch_of[i] != launch_of[i - 1])
    cut = tmp_path / "cut.csv"
    cut.write_bytes(b"\n".join(lines[:-3]) + b"\n")
    with pytest.raises(MalformedReport) as info:
        collectors.collect(cut)
    assert info.value.reason == (
        "its last launch has 12 of the 15 metric rows of the launch before it (a cut file?)"
    )
    assert info.value.row == f"{last_start + 1} (launch ID 10)"
    cut.write_bytes(b"\n".join(lines[:last_start]) + b"\n")
    whole = collectors.collect(corpus_dir / V100)
    assert sum(k.launches for k in collectors.collect(cut).kernels) == (
        sum(k.launches for k in whole.kernels) - 1
    )


def test_blank_lines_after_a_details_page_are_not_rows(corpus_dir: Path, tmp_path: Path) -> None:
    """They were refused as a row of no fields; between rows they still are."""
    lines = _details_lines(corpus_dir)
    path = tmp_path / "page.csv"
    path.write_bytes(b"\n".join(lines) + b"\n   \r\n\n")
    whole = collectors.collect(corpus_dir / V100).kernels
    assert [(k.key, k.duration_s) for k in collectors.collect(path).kernels] == [
        (k.key, k.duration_s) for k in whole
    ]
    path.write_bytes(b"\n".join([*lines[:-2], b"", *lines[-2:]]) + b"\n")
    with pytest.raises(MalformedReport, match="row has 0 fields, needs 15"):
        collectors.collect(path)


ROOFGUARD_CSV = "name,duration_s,bytes_dram\nk1,0.0010,4000000\nk2,0.0026,8000000\n"


@pytest.mark.parametrize(
    ("text", "row", "reason"),
    [
        (ROOFGUARD_CSV[:-5], "3", "the last row does not end in a line break (a cut file?)"),
        (ROOFGUARD_CSV[:-8], "3", "the last row does not end in a line break (a cut file?)"),
        ("name,duration_s,bytes_dram\n", "1", "no kernel rows after the header"),
        ("# device: H100-SXM5\nname,duration_s", "2", "no kernel rows after the header"),
    ],
    ids=["in-the-last-number", "after-a-separator", "header-only", "cut-in-the-header"],
)
def test_a_cut_roofguard_csv_is_refused(text: str, row: str, reason: str, tmp_path: Path) -> None:
    """Its numbers are not quoted: ``8000000`` cut to ``80`` kept the row's width and was
    read as 80 bytes; a cut after the header read as a run of no kernels."""
    path = tmp_path / "run.csv"
    path.write_text(ROOFGUARD_CSV, encoding="utf-8")
    assert collectors.collect(path).kernels[-1].bytes == {"dram": 8_000_000.0}
    path.write_text(text, encoding="utf-8")
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert (info.value.row, info.value.reason) == (row, reason)


def test_an_nvbench_csv_of_a_header_alone_is_refused(corpus_dir: Path, tmp_path: Path) -> None:
    source = corpus_dir / "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.csv"
    path = tmp_path / source.name
    path.write_bytes(source.read_bytes().split(b"\n")[0] + b"\n")
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert (info.value.row, info.value.reason) == ("1", "no state rows after the header")


TEXT = "other/brycelelbach_nsightful__copy_blocked.txt"
KERNEL_LINE = "  copy_blocked(float*, float*) ({grid}, 1, 1)x(256, 1, 1), Context 1, Stream 7\n"


def test_ncu_text_cut_inside_a_table_is_refused(corpus_dir: Path, tmp_path: Path) -> None:
    """Cut after its elapsed cycles, the launch read as whole: its duration from the cycles
    (20.848818 ms against the printed 20.85 ms), its DRAM bytes lost."""
    body = (corpus_dir / TEXT).read_bytes()
    cut = tmp_path / Path(TEXT).name
    cut.write_bytes(body[: body.index(b"\n", body.index(b"Elapsed Cycles")) + 1])
    with pytest.raises(MalformedReport) as info:
        collectors.collect(cut)
    reason = "the table of section 'GPU Speed Of Light Throughput' is not closed (a cut file?)"
    assert info.value.reason == reason
    assert info.value.row == str(cut.read_bytes().count(b"\n"))


def test_ncu_text_cut_inside_a_row_says_so(corpus_dir: Path, tmp_path: Path) -> None:
    """The row's own error ("unknown unit 'cycl'") told a person nothing of a cut."""
    body = (corpus_dir / TEXT).read_bytes()
    cut = tmp_path / Path(TEXT).name
    cut.write_bytes(body[: body.index(b"cycle", body.index(b"Elapsed Cycles")) + 4])
    with pytest.raises(MalformedReport) as info:
        collectors.collect(cut)
    assert info.value.reason == "unknown unit 'cycl' (a cut file?)"


def test_ncu_text_cut_between_the_sections_of_its_last_launch_is_refused(
    corpus_dir: Path, tmp_path: Path
) -> None:
    """Each section is read on its own: cut between two, or inside a ``Section:`` line, the
    last launch lost its later sections (its DRAM bytes) and read as whole."""
    text = (corpus_dir / TEXT).read_text(encoding="utf-8")
    page = KERNEL_LINE.format(grid=1024) + text + KERNEL_LINE.format(grid=2048) + text
    second = page.index("(2048, 1, 1)")
    memory = page.index("    Section: Memory Workload Analysis\n", second)
    path = tmp_path / "two.txt"
    for end in (memory, memory + len("    Section: Memory Wor")):
        path.write_text(page[:end], encoding="utf-8")
        with pytest.raises(MalformedReport, match=r"its last launch has \d+ of the \d+ sections"):
            collectors.collect(path)
    path.write_text(page, encoding="utf-8")
    assert collectors.collect(path).kernels[0].launches == 2
