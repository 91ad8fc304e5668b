"""The digest's markdown names each kernel apart: long C++ names are cut in the middle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from service.digest.model import Digest, Movement
from service.render.digest_render import NAME_LIMIT, render_digest_markdown

FIRST = datetime(2026, 11, 2, tzinfo=UTC)
#: Two CUTLASS GEMMs that differ in their tile shape only, deep inside the template arguments.
CUTLASS = (
    "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, "
    "int, int>, cutlass::gemm::collective::CollectiveMma<cute::Shape<cute::C<128>, "
    "cute::C<{n}>, cute::C<64>>, cutlass::bfloat16_t, cutlass::gemm::KernelTmaWarpSpecialized"
    "Cooperative>, cutlass::epilogue::collective::Epilogue<float>, "
    "cutlass::gemm::PersistentScheduler>>(Params)"
)


def _movement(kernel: str) -> Movement:
    return Movement(
        kernel=kernel,
        kernel_name=kernel,
        device="H100-SXM5",
        relative_change=-0.12,
        before=42.1,
        after=37.0,
        current=37.0,
        since=FIRST + timedelta(days=2),
        from_commit="a" * 40,
        to_commit="b" * 40,
        age_days=1.0,
    )


def test_long_kernel_names_keep_what_tells_them_apart() -> None:
    """Cut at the 80th character, every CUTLASS GEMM of a fleet read the same in the issue."""
    names = [CUTLASS.format(n=n) for n in (128, 256)]
    digest = Digest(
        repo="acme/engine",
        start=FIRST,
        end=FIRST + timedelta(days=7),
        week="2026-W45",
        measurements=14,
        regressions=[_movement(name) for name in names],
        improvements=[],
        recoveries=[],
        regime_flips=[],
        mislabels=[],
        below_target=[],
        unresolved=[_movement(name) for name in names],
        devices=[],
    )
    rows = [line for line in render_digest_markdown(digest).splitlines() if "H100-SXM5" in line]
    shown = [row.split("`")[1] for row in rows if row.startswith("| `")]
    assert len(shown) == 4 and len(set(shown)) == 2, shown
    assert all(len(cell) <= NAME_LIMIT for cell in shown)
    assert all(cell.startswith("cutlass::device_kernel<") for cell in shown)  # no return type
    assert any("128" in cell and "256" not in cell for cell in shown)
    assert any("256" in cell for cell in shown)
