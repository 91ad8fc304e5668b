"""Every catalog entry: a source, dense peaks that hang together, the names tools print."""

import pytest

from rules.hardware import builtin_catalog

CATALOG = builtin_catalog()
DEVICES = sorted(CATALOG.devices)
#: (tensor precision, CUDA-core precision it must not fall below).
TENSOR_OVER_VECTOR = [
    ("tensor_fp64", "fp64"),
    ("tensor_tf32", "fp32"),
    ("tensor_bf16", "tensor_tf32"),
    ("tensor_fp16", "fp16"),
    ("tensor_fp16", "tensor_tf32"),
    ("tensor_fp8", "tensor_fp16"),
    ("tensor_fp4", "tensor_fp8"),
    ("tensor_int8", "tensor_fp16"),
]


@pytest.mark.parametrize("device_id", DEVICES)
def test_every_entry_has_a_source_peaks_and_dram_bandwidth(device_id):
    spec = CATALOG.devices[device_id]
    assert len(spec.source) > 40, "a source names the datasheet or whitepaper and its table"
    assert spec.vendor and spec.arch and spec.display
    assert spec.peak_flop_per_s and spec.bandwidth_byte_per_s.get("dram", 0) > 5e10


@pytest.mark.parametrize("device_id", DEVICES)
def test_tensor_peaks_are_not_below_the_vector_ones(device_id):
    peaks = CATALOG.devices[device_id].peak_flop_per_s
    for tensor, vector in TENSOR_OVER_VECTOR:
        if tensor in peaks and vector in peaks:
            assert peaks[tensor] >= peaks[vector], f"{tensor} < {vector}"


@pytest.mark.parametrize("device_id", DEVICES)
def test_ridge_points_are_in_a_sane_range(device_id):
    """Dense peaks over DRAM bandwidth: a 2:4-sparse or TOPS-for-TFLOPS slip leaves the range."""
    spec = CATALOG.devices[device_id]
    dram = spec.bandwidth_byte_per_s["dram"]
    ridges = {p: v / dram for p, v in spec.peak_flop_per_s.items()}
    assert all(0.1 <= r <= 1500 for r in ridges.values()), ridges
    assert max(ridges.values()) >= 5  # every card has some precision that is compute-rich
    if "fp32" in ridges:
        assert 1 <= ridges["fp32"] <= 120


#: Entries with an FP32 peak, an SM count and a boost clock (TPUs and some parts publish none).
CLOCKED = [
    d
    for d, s in sorted(CATALOG.devices.items())
    if "fp32" in s.peak_flop_per_s and s.sm_count and s.boost_clock_hz
]


def test_most_entries_carry_sm_count_and_clock():
    assert len(CLOCKED) >= len(DEVICES) - 12


@pytest.mark.parametrize("device_id", CLOCKED)
def test_clock_and_sm_count_agree_with_the_fp32_peak(device_id):
    """FP32 = SMs x FP32 FLOP/clk x boost: 128 (Volta, Turing, GA100, CDNA2) or 256 (GA10x,
    Ada, Hopper, CDNA3): a wrong clock, SM count or a sparse figure falls outside."""
    spec = CATALOG.devices[device_id]
    fp32 = spec.peak_flop_per_s["fp32"]
    assert spec.sm_count and spec.boost_clock_hz
    per_sm_clock = fp32 / (spec.sm_count * spec.boost_clock_hz)
    assert 120 <= per_sm_clock <= 262, per_sm_clock


@pytest.mark.parametrize(
    ("printed", "device_id"),
    [
        ("NVIDIA A10G", "A10G"),
        ("Tesla V100-PCIE-16GB", "V100-PCIe-16GB"),
        ("Tesla V100-PCIE-32GB", "V100-PCIe-32GB"),
        ("V100-SXM2", "V100-SXM2-32GB"),
        ("NVIDIA GeForce RTX 3090", "RTX-3090"),
        ("NVIDIA GeForce RTX 3090 Ti", "RTX-3090-Ti"),
        ("GeForce RTX 3080", "RTX-3080"),  # ncu 2020 prints no "NVIDIA"
        ("NVIDIA GeForce RTX 3070", "RTX-3070"),
        ("NVIDIA GeForce RTX 3060", "RTX-3060"),
        ("NVIDIA GeForce RTX 2080 Ti", "RTX-2080-Ti"),
        ("NVIDIA GeForce RTX 2080", "RTX-2080"),
        ("NVIDIA GeForce RTX 4080", "RTX-4080"),
        ("NVIDIA GeForce RTX 4070", "RTX-4070"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada"),
        ("NVIDIA TITAN V", "Titan-V"),
        ("NVIDIA H20", "H20"),
        ("NVIDIA H800", "H800-SXM"),
        ("NVIDIA GH200 480GB", "GH200-96GB"),
        ("AMD Instinct MI210", "MI210"),
        ("AMD Instinct MI300X", "MI300X"),
        ("Tesla T4", "T4"),
    ],
)
def test_names_reports_print_resolve(printed, device_id):
    assert CATALOG.lookup(printed).id == device_id


def test_corpus_device_attributes_match_the_catalog():
    """SM counts and clocks ncu printed for corpus reports (corpus.md) are the catalog's."""
    for device_id, sms, clock in [
        ("A10G", 80, 1.71e9),
        ("RTX-3070", 46, 1.725e9),
        ("RTX-2080-Ti", 68, 1.545e9),
        ("V100-SXM2-16GB", 80, 1.53e9),
    ]:
        spec = CATALOG.devices[device_id]
        assert (spec.sm_count, spec.boost_clock_hz) == (sms, clock)


@pytest.mark.parametrize(
    ("unknown", "first"),
    [
        ("Tesla V100-PCIE-48GB", "V100-PCIe"),  # V100 before H100-PCIe, whatever the string
        ("Tesla V100-SXM3-32GB", "V100-SXM2"),
        ("NVIDIA GeForce RTX 3050", "RTX-30"),
        ("NVIDIA A30", "A"),
        ("AMD Instinct MI100", "MI"),
    ],
)
def test_suggestions_prefer_the_same_family_and_generation(unknown, first):
    suggestions = CATALOG.suggest(unknown)
    assert suggestions and suggestions[0].startswith(first), suggestions
    if unknown.startswith("Tesla V100"):
        assert all(s.startswith("V100") for s in suggestions), suggestions
