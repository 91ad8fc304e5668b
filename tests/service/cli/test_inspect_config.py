"""``roofguard inspect`` with a roofguard.toml: declared work marked where it is, devices named.

One ``*`` went on the bytes cell whichever count a work model declared: a GEMM with declared
FLOPs and no bytes read ``-*``, as if its bytes were declared. And a config's device the
catalog lacks (``device = "H100-SMX5"``) left every kernel unplaced with exit 0, where
``check`` refuses it: the name, read into a report naming none, passed for the report's own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from service.cli import run

CSV = (
    "name,duration_s,param_M,param_N,param_K,launches\n"
    "gemm_bf16,0.000229,4096,4096,4096,1\n"
    "copy_kernel,0.0001,1048576,1,1,1\n"
)
MODELS = """
[[work_models]]
pattern = "gemm*"
flops = { tensor_bf16 = "2*M*N*K" }

[[work_models]]
pattern = "copy*"
bytes = { dram = "8*M" }
"""


def _inspect(tmp_path: Path, config: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    report, toml = tmp_path / "r.csv", tmp_path / "roofguard.toml"
    report.write_text(CSV, encoding="utf-8")
    toml.write_text(config, encoding="utf-8")
    code = run(["inspect", str(report), "--config", str(toml)])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_the_declared_count_is_the_one_marked(tmp_path, capsys) -> None:
    code, out = _inspect(tmp_path, 'device = "H100-SXM5"\n' + MODELS, capsys)
    assert code == 0
    gemm = next(line for line in out.splitlines() if line.startswith("gemm_bf16"))
    copy = next(line for line in out.splitlines() if line.startswith("copy_kernel"))
    assert "tensor_bf16 137.4G* " in gemm and "-*" not in gemm  # 2 * 4096^3 FLOPs, no bytes
    assert "dram 8.389M*" in copy and " -* " not in copy  # 8 * 1,048,576 bytes, no FLOPs


def test_a_config_device_the_catalog_lacks_is_refused(tmp_path, capsys) -> None:
    code, out = _inspect(tmp_path, 'device = "H100-SMX5"\n' + MODELS, capsys)
    assert code == 2
    assert "unknown device 'H100-SMX5'" in out and "H100-SXM5" in out  # the closest known
