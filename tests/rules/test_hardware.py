import pytest

from rules.hardware import UnknownDevice, builtin_catalog

REQUIRED = [
    "V100-SXM2-32GB",
    "T4",
    "A10",
    "A100-PCIe-40GB",
    "A100-SXM4-40GB",
    "A100-SXM4-80GB",
    "A100-PCIe-80GB",
    "L4",
    "L40S",
    "H100-SXM5",
    "H100-PCIe",
    "H100-NVL",
    "H200-SXM",
    "GH200-96GB",
    "B200",
    "RTX-4090",
    "MI300X",
    "TPU-v5e",
]


@pytest.mark.parametrize("device_id", REQUIRED)
def test_required_devices_have_peaks_bandwidth_and_source(device_id):
    spec = builtin_catalog().lookup(device_id)
    assert spec.bandwidth_byte_per_s["dram"] > 1e11
    assert spec.peak_flop_per_s and all(v > 1e11 for v in spec.peak_flop_per_s.values())
    assert spec.source


@pytest.mark.parametrize(
    ("printed", "device_id"),
    [
        ("NVIDIA H100 80GB HBM3", "H100-SXM5"),
        ("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"),
        ("A100-PCIE-40GB", "A100-PCIe-40GB"),
        ("Tesla V100-SXM2-16GB", "V100-SXM2-16GB"),
        ("NVIDIA GeForce RTX 4090", "RTX-4090"),
        ("h100 sxm5", "H100-SXM5"),
    ],
)
def test_names_tools_print_resolve(printed, device_id):
    assert builtin_catalog().lookup(printed).id == device_id


def test_unknown_device_lists_closest_names():
    with pytest.raises(UnknownDevice) as err:
        builtin_catalog().lookup("H10 SXM")
    assert "H100-SXM5" in err.value.suggestions
    assert "closest known" in str(err.value)


def test_catalog_peaks_are_dense_not_sparse():
    h100 = builtin_catalog().lookup("H100-SXM5").peak_flop_per_s
    assert h100["tensor_bf16"] == pytest.approx(989.4e12)
    assert h100["tensor_fp8"] == pytest.approx(2 * h100["tensor_bf16"], rel=1e-3)


def test_overrides_modify_and_add_devices():
    cat = builtin_catalog().with_overrides(
        {
            "H100-SXM5": {"bandwidth_byte_per_s": {"dram": 3.0e12}},
            "my-runner": {
                "peak_flop_per_s": {"fp32": 1e12},
                "bandwidth_byte_per_s": {"dram": 1e11},
            },
        }
    )
    h100 = cat.lookup("NVIDIA H100 80GB HBM3")
    assert h100.bandwidth_byte_per_s["dram"] == 3.0e12
    assert h100.peak_flop_per_s["tensor_bf16"] == pytest.approx(989.4e12)
    assert cat.lookup("my-runner").roof().peak_flop_per_s == {"fp32": 1e12}
    assert builtin_catalog().lookup("H100-SXM5").bandwidth_byte_per_s["dram"] == 3.35e12
