"""A Kineto trace over two GPUs keeps one device and notes the events of the other.

The corpus trace with its kernel moved to device 1 was read as "kineto on device 1, 1
kernel(s)", its device-0 copy and memset gone with no note, where nvbench notes every state of
another device (``collectors/README.md``: a run holds one device).
"""

from __future__ import annotations

import json

import pytest

from collectors import CollectOptions, collect

KINETO = "other/xytpai_nvbench__test_kineto_trace.json"
SECOND = "NVIDIA GeForce RTX 3090"


def _kernel_on_device_1(corpus_dir, tmp_path):
    """The corpus trace with its one kernel launched on a second GPU, an RTX 3090."""
    root = json.loads((corpus_dir / KINETO).read_text())
    other = dict(root["deviceProperties"][0], id=1, name=SECOND, computeMinor=6, numSms=82)
    root["deviceProperties"].append(other)
    kernels = [e for e in root["traceEvents"] if str(e.get("cat")).lower() == "kernel"]
    assert len(kernels) == 1
    kernels[0]["args"]["device"] = 1
    path = tmp_path / "two_gpus.json"
    path.write_text(json.dumps(root))
    return path


@pytest.mark.corpus
def test_the_first_kernels_device_is_kept_and_the_others_events_noted(corpus_dir, tmp_path):
    record = collect(_kernel_on_device_1(corpus_dir, tmp_path))
    assert (record.device.name, record.device.compute_capability) == (SECOND, "8.6")
    assert [k.name[:12] for k in record.kernels] == ["void cutlass"]
    assert (
        "2 GPU event(s) on device 0 (NVIDIA GeForce RTX 4090) not ingested: a run holds one "
        "device (choose it with --device)" in record.notes
    ), record.notes


@pytest.mark.corpus
def test_the_device_named_keeps_its_events_and_notes_the_kernel_left(corpus_dir, tmp_path):
    options = CollectOptions(device="NVIDIA GeForce RTX 4090")
    record = collect(_kernel_on_device_1(corpus_dir, tmp_path), options=options)
    assert sorted(k.name[:6] for k in record.kernels) == ["Memcpy", "Memset"]
    assert any(n.startswith(f"1 GPU event(s) on device 1 ({SECOND})") for n in record.notes)


@pytest.mark.corpus
def test_a_trace_on_one_device_has_no_such_note(corpus_dir):
    record = collect(corpus_dir / KINETO)
    assert not [n for n in record.notes if "on device" in n], record.notes
