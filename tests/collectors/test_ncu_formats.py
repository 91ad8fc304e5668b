"""Format details of the ncu collectors on small files written by the tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from ncu_files import write_details, write_raw

import collectors
from collectors.identity import KeyOptions
from collectors.units import unit_factor

OP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
RAW_METRICS = [
    ("gpu__time_duration.sum", "usecond"),
    ("dram__bytes_read.sum", "Kbyte"),
    ("dram__bytes_write.sum", "Mbyte"),
    ("lts__t_sectors.sum", "sector"),
    (OP.format("fadd"), "inst"),
    (OP.format("fmul"), "inst"),
    (OP.format("ffma"), "inst"),
    ("launch__func_cache_config", ""),
]


def test_raw_page_units_separators_and_aggregation(tmp_path: Path) -> None:
    gemm_name = "void gemm<float>(float *, int)"
    path = write_raw(
        tmp_path / "raw.csv",
        RAW_METRICS,
        [
            (0, gemm_name, ["1,500.5", "2", "1.5", "100", "10", "20", "1,000", "CachePreferNone"]),
            (1, gemm_name, ["500", "n/a", "0", "1", "0", "0", "0", "CachePreferNone"]),
            (2, "triton_poi_fused_add_3", ["7", "1", "1", "1", "1", "1", "1", "CachePreferNone"]),
            (3, "triton_poi_fused_add_4", ["3", "1", "1", "1", "1", "1", "1", "CachePreferNone"]),
        ],
    )
    record = collectors.collect(path)
    assert record.sources[0].format == "ncu-csv-raw"
    gemm, triton = record.kernels
    assert gemm.key == "gemm<float>"
    assert gemm.launches == 2
    assert gemm.samples_s == pytest.approx((1500.5e-6, 500e-6))
    assert gemm.flops["fp32"] == pytest.approx(10 + 20 + 2 * 1000)
    # launch 1 has no dram read (n/a): dram is left out, and said so
    assert "dram" not in gemm.bytes
    assert any(m.startswith("bytes.dram: present in 1 of 2") for m in gemm.missing)
    assert gemm.bytes["l2"] == pytest.approx(32 * 101)
    assert gemm.provenance["bytes.l2"].kind == "sectors"
    assert triton.key == "triton_poi_fused_add"  # numbered Triton suffix folded
    assert triton.launches == 2
    assert triton.bytes["dram"] == pytest.approx(2 * (1e3 + 1e6))  # Kbyte = 1000, Mbyte = 1e6
    assert triton.provenance["bytes.dram"].kind == "sum"


def test_keys_option_keeps_launch_config(tmp_path: Path) -> None:
    path = write_raw(tmp_path / "raw.csv", RAW_METRICS[:1], [(0, "k", ["1"]), (1, "k", ["2"])])
    opts = collectors.CollectOptions(keys=KeyOptions(include_launch_config=True))
    (kernel,) = collectors.collect(path, options=opts).kernels
    assert kernel.key == "k grid(80, 1, 1) block(256, 1, 1)"


def test_raw_page_without_roofline_metrics_names_what_to_collect(tmp_path: Path) -> None:
    path = write_raw(
        tmp_path / "raw.csv", [("gpu__time_duration.sum", "nsecond")], [(0, "k", ["1000"])]
    )
    (kernel,) = collectors.collect(path).kernels
    assert kernel.duration_s == pytest.approx(1e-6)
    assert kernel.flops == {} and kernel.bytes == {}
    text = " ".join(kernel.missing)
    assert "--set roofline" in text
    assert "dram__bytes_read.sum,dram__bytes_write.sum" in text


def test_failed_launch_is_counted_not_averaged(tmp_path: Path) -> None:
    metrics = RAW_METRICS[:2]
    path = write_raw(
        tmp_path / "raw.csv", metrics, [(0, "k", ["2", "1"]), (1, "k", ["nan", "nan"])]
    )
    record = collectors.collect(path)
    (kernel,) = record.kernels
    assert (kernel.launches, kernel.failed_launches) == (1, 1)
    assert kernel.duration_s == pytest.approx(2e-6)
    assert "1 of 2 launches failed or had no duration" in record.notes


def test_details_page_print_metric_name_forms(tmp_path: Path) -> None:
    """``label`` (default), ``name`` and ``label-name`` give the same figures."""
    sol = "GPU Speed Of Light Throughput"
    forms = {
        "label": ("Duration", "DRAM Frequency"),
        "name": ("gpu__time_duration.sum", "dram__cycles_elapsed.avg.per_second"),
        "label-name": (
            "Duration (gpu__time_duration.sum)",
            "DRAM Frequency (dram__cycles_elapsed.avg.per_second)",
        ),
    }
    durations = set()
    for form, (duration, freq) in forms.items():
        path = write_details(
            tmp_path / f"{form}.csv",
            [
                (0, "k", sol, duration, "usecond", "12.5"),
                (0, "k", sol, freq, "cycle/nsecond", "1.2"),
                (0, "k", "Memory Workload Analysis", "Memory Throughput", "Gbyte/second", "100"),
            ],
        )
        (kernel,) = collectors.collect(path).kernels
        durations.add(round(kernel.duration_s, 12))
        assert kernel.bytes["dram"] == pytest.approx(100e9 * 12.5e-6)
    assert durations == {12.5e-6}


def test_text_output_with_kernel_lines(tmp_path: Path) -> None:
    table = (
        "    Section: GPU Speed Of Light Throughput\n"
        "    ------------- ----------- ------------\n"
        "    Metric Name   Metric Unit Metric Value\n"
        "    ------------- ----------- ------------\n"
        "    Duration               us        {dur}\n"
        "    ------------- ----------- ------------\n\n"
    )
    text = "[4242] app@127.0.0.1\n"
    for number, dur in enumerate(("1,200.50", "800.00")):
        text += "  scale(float *) (80, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 9.0\n"
        text += table.format(dur=dur)
        del number
    path = tmp_path / "ncu.txt"
    path.write_text(text)
    record = collectors.collect(path)
    (kernel,) = record.kernels
    assert record.sources[0].format == "ncu-text"
    assert kernel.launches == 2
    assert kernel.duration_s == pytest.approx(2000.5e-6)
    assert record.device.compute_capability == "9.0"


def test_fast_and_careful_raw_readers_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pandas chunk reader and the row-by-row reader give the same record."""
    from collectors.ncu import frames

    names = [f"kernel_{k % 3}<float>(float *)" for k in range(40)]
    rows = [
        (i, names[i], [f"{1000 + i}", f"{i}", f"{i / 10}", f"{3 * i}", "1", "2", f"{i * 7}", "x"])
        for i in range(40)
    ]
    rows[5] = (5, names[5], ["nan", "nan", "nan", "nan", "nan", "nan", "nan", "x"])  # failed replay
    rows[9] = (9, names[9], ["900", "n/a", "1", "2", "3", "4", "5", "x"])  # one counter n/a
    path = write_raw(tmp_path / "raw.csv", RAW_METRICS, rows)
    fast = collectors.collect(path)

    def refuse(*args: object, **kwargs: object) -> None:
        raise frames.Fallback("forced")

    monkeypatch.setattr(frames, "read", refuse)
    careful = collectors.collect(path)
    assert len(fast.kernels) == 3
    assert _same(fast, careful)


def _same(a: collectors.RunRecord, b: collectors.RunRecord) -> bool:
    for ka, kb in zip(a.kernels, b.kernels, strict=True):
        assert ka.key == kb.key
        assert (ka.launches, ka.failed_launches) == (kb.launches, kb.failed_launches)
        assert ka.duration_s == pytest.approx(kb.duration_s)
        assert sorted(ka.samples_s) == pytest.approx(sorted(kb.samples_s))
        assert ka.flops == pytest.approx(kb.flops)
        assert ka.bytes == pytest.approx(kb.bytes)
        assert ka.provenance == kb.provenance
        assert set(ka.missing) == set(kb.missing)
    return a.device == b.device


def test_ncu_messages_after_the_table_are_not_rows(tmp_path: Path) -> None:
    path = write_raw(
        tmp_path / "raw.csv", RAW_METRICS[:1], [(0, "k", ["1000"]), (1, "k", ["3000"])]
    )
    with path.open("a") as handle:
        handle.write("==PROF== Disconnected from process 4242\n")
    (kernel,) = collectors.collect(path).kernels
    assert kernel.launches == 2
    assert kernel.duration_s == pytest.approx(4e-3)  # usecond


def test_raw_page_with_label_name_headers(tmp_path: Path) -> None:
    metrics = [("Duration (gpu__time_duration.sum)", "nsecond"), ("DRAM (dram__bytes.sum)", "byte")]
    path = write_raw(tmp_path / "raw.csv", metrics, [(0, "k", ["2000", "64"])])
    (kernel,) = collectors.collect(path).kernels
    assert kernel.duration_s == pytest.approx(2e-6)
    assert kernel.bytes["dram"] == 64


@pytest.mark.parametrize("line_end", [b"\r\n", b"\r"])
def test_raw_page_with_windows_or_old_mac_line_ends(tmp_path: Path, line_end: bytes) -> None:
    """A lone carriage return ends lines too: such a page was taken for a details page
    ("the details-page header lacks 'Section Name'")."""
    rows = [(0, "k", ["1", "2", "3", "4", "5", "6", "7", "x"]), (1, "j", ["2"] * 7 + ["x"])]
    plain = write_raw(tmp_path / "plain.csv", RAW_METRICS, rows)
    other = tmp_path / "other.csv"
    other.write_bytes(plain.read_bytes().replace(b"\n", line_end))
    assert collectors.detect(other).name == "ncu-csv-raw"
    got, want = collectors.collect(other), collectors.collect(plain)
    assert [k.model_dump(exclude={"source"}) for k in got.kernels] == [
        k.model_dump(exclude={"source"}) for k in want.kernels
    ]


LASHI = "ncu-csv/Lashi0812_CudaProgramming__ncu_reduceInteger.csv"
LASHI_DRAM = '"dram__bytes.sum","byte","104040704"'  # launch 0's DRAM bytes


@pytest.mark.parametrize(
    ("unit", "value"),
    [
        ("Kibyte", "101602.25"),
        ("KiB", "101602.25"),
        ("Mibyte", "99.220947265625"),
        ("MiB", "99.220947265625"),
        ("Kbyte", "104040.704"),
        ("kbyte", "104040.704"),
        ("kB", "104040.704"),
        ("MB", "104.040704"),
    ],
)
def test_binary_byte_prefixes_are_powers_of_1024(
    tmp_path: Path, corpus_dir: Path, unit: str, value: str
) -> None:
    """``Kibyte`` was read as 1000 bytes (the ``i`` dropped); ``MiB``, ``kB`` were refused."""
    text = (corpus_dir / LASHI).read_text()
    assert LASHI_DRAM in text
    path = tmp_path / "binary.csv"
    path.write_text(text.replace(LASHI_DRAM, f'"dram__bytes.sum","{unit}","{value}"'))
    first = collectors.collect(path).kernels[0]
    assert first.bytes["dram"] == pytest.approx(104040704, rel=1e-12)
    raw = write_raw(
        tmp_path / "raw.csv",
        [*RAW_METRICS[:1], ("dram__bytes.sum", unit)],
        [(0, "k", ["1", value])],
    )
    assert collectors.collect(raw).kernels[0].bytes["dram"] == pytest.approx(104040704)


LASHI_TIME = '"gpu__time_duration.sum","nsecond","814048"'  # launch 0's duration


@pytest.mark.parametrize("micro", ["\u00b5s", "\u03bcs"], ids=["micro sign", "greek mu"])
def test_microseconds_read_with_either_mu(tmp_path: Path, corpus_dir: Path, micro: str) -> None:
    """``µs`` (U+00B5) was read while ``μs`` (U+03BC), which looks the same, was refused."""
    text = (corpus_dir / LASHI).read_text()
    assert LASHI_TIME in text
    path = tmp_path / "mu.csv"
    path.write_text(text.replace(LASHI_TIME, f'"gpu__time_duration.sum","{micro}","814.048"'))
    first = collectors.collect(path).kernels[0]
    assert first.duration_s == pytest.approx(814048e-9, rel=1e-12)


GARDENIA = "ncu-csv/Gardenia-Tian_LearningNote4Dev__gemm_output_sgemm.csv"
GARDENIA_CLOCK = '"smsp__cycles_elapsed.avg.per_second","cycle/second","764,999,991.90"'


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("unit", "value"),
    [("cycle/us", "764.9999919"), ("cycle/ns", "0.7649999919"), ("cycle/ms", "764999.9919")],
)
def test_short_rate_denominators_scale(
    tmp_path: Path, corpus_dir: Path, unit: str, value: str
) -> None:
    """``cycle/usecond`` was read, ``cycle/us`` refused as an unknown unit."""
    text = (corpus_dir / GARDENIA).read_text()
    assert GARDENIA_CLOCK in text
    path = tmp_path / "rate.csv"
    edited = f'"smsp__cycles_elapsed.avg.per_second","{unit}","{value}"'
    path.write_text(text.replace(GARDENIA_CLOCK, edited, 1))
    want = collectors.collect(corpus_dir / GARDENIA).kernels[0].sm_clock_hz
    assert want and collectors.collect(path).kernels[0].sm_clock_hz == pytest.approx(want)


@pytest.mark.parametrize(
    ("unit", "factor"),
    [("byte/us", 1e6), ("Kbyte/ms", 1e6), ("kB/s", 1e3), ("inst/ns", 1e9), ("cycle/us", 1e6)],
)
def test_rate_units_scale_to_per_second(unit: str, factor: float) -> None:
    assert unit_factor(unit) == factor
