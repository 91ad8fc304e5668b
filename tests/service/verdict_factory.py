"""Keyword-default builders of verdicts for the GitHub and markdown tests."""

from __future__ import annotations

from rules.advice import ADVICE_TEXT, Advice
from rules.verdict import (
    BaselineSummary,
    Conclusion,
    Finding,
    GroupVerdict,
    KernelStatus,
    KernelVerdict,
    Severity,
    Stability,
    Verdict,
)

ROOF = "H100-SXM5 (datasheet)"
DEVICE = "H100-SXM5"


def make_baseline(
    center: float = 80.0,
    *,
    spread: float = 0.8,
    n: int = 14,
    current: float | None = None,
    history: tuple[float, ...] | None = None,
    regime: str = "memory-bound",
) -> BaselineSummary:
    rel = None if current is None else (current - center) / center
    hist = (
        history if history is not None else tuple(center + (i % 3 - 1) * spread for i in range(n))
    )
    return BaselineSummary(
        n=n,
        center=center,
        spread=spread,
        regime=regime,
        relative_change=rel,
        history=hist,
        commits=("a1b2c3d", "e4f5a6b"),
    )


def make_kernel(
    name: str = "decode_gemv<half>",
    *,
    key: str | None = None,
    share: float = 0.1,
    pct: float | None = 80.0,
    regime: str | None = "memory-bound",
    binding: str | None = "dram",
    intensity: float = 0.5,
    status: str = "unchanged",
    center: float | None = 80.0,
    history: tuple[float, ...] | None = None,
    advice: Advice | None = Advice.CUT_BYTES,
    borderline: bool = False,
) -> KernelVerdict:
    baseline = None
    if center is not None:
        baseline = make_baseline(center, current=pct, history=history)
    return KernelVerdict(
        key=key or name,
        name=name,
        time_s=share * 1e-2,
        time_share=share,
        percent_of_roof=pct,
        regime=regime,
        borderline=borderline,
        binding=binding,
        intensity={"dram": intensity},
        t_roof_s=None if pct is None else share * 1e-2 * pct / 100,
        roof=ROOF,
        advice=advice,
        status=status,
        baseline=baseline,
    )


def make_finding(
    kernel: KernelVerdict | None = None,
    *,
    rule: str = "roof-drop",
    severity: Severity = Severity.FAIL,
    message: str | None = None,
    stability: Stability = Stability.STABLE,
    advice: Advice | None = Advice.MEMORY_ACCESS,
) -> Finding:
    numbers: dict[str, float | str | None] = {}
    if kernel is not None and kernel.baseline is not None:
        numbers = {
            "current % of roof": kernel.percent_of_roof,
            "baseline centre": kernel.baseline.center,
            "baseline spread": kernel.baseline.spread,
            "baseline n": kernel.baseline.n,
            "intensity dram (FLOP/B)": kernel.intensity.get("dram"),
            "binding": kernel.binding,
        }
    return Finding(
        rule=rule,
        kernel=kernel.key if kernel else None,
        kernel_name=kernel.name if kernel else None,
        device=DEVICE,
        roof=ROOF,
        severity=severity,
        stability=stability,
        message=message or f"percent of roof fell beyond noise ({rule})",
        advice=advice,
        advice_text=ADVICE_TEXT[advice] if advice else None,
        binding=kernel.binding if kernel else None,
        numbers=numbers,
    )


def make_unchanged(
    n: int, *, share: float = 0.5, prefix: str = "elementwise_kernel"
) -> list[KernelVerdict]:
    each = share / n if n else 0.0
    return [
        make_kernel(f"{prefix}_{i}", share=each, pct=60.0 + i % 7, center=60.0 + i % 7)
        for i in range(n)
    ]


def make_verdict(
    kernels: list[KernelVerdict] | None = None,
    findings: list[Finding] | None = None,
    *,
    conclusion: Conclusion | None = None,
    repo: str = "acme/kernels",
    pr: int = 42,
    device: str = DEVICE,
    notes: tuple[str, ...] = (),
    trusted: bool = True,
    commit: str = "0123456789abcdef0123456789abcdef01234567",
    groups: tuple[GroupVerdict, ...] = (),
) -> Verdict:
    kernels = kernels if kernels is not None else []
    findings = findings if findings is not None else []
    if conclusion is None:
        fails = any(f.severity == Severity.FAIL and f.counts for f in findings)
        warns = any(f.severity == Severity.WARN and f.counts for f in findings)
        conclusion = Conclusion.FAIL if fails else Conclusion.WARN if warns else Conclusion.PASS
    return Verdict(
        conclusion=conclusion,
        repo=repo,
        commit=commit,
        pull_request=pr,
        device=device,
        roof=ROOF,
        roofs=(ROOF, "H100-SXM5 (measured)"),
        groups=groups,
        trusted=trusted,
        kernels=tuple(kernels),
        findings=tuple(findings),
        notes=notes,
    )


def regression_verdict(**kwargs: object) -> Verdict:
    """A typical failing PR: one regression, one warning, one improvement, unchanged rest."""
    gemv = make_kernel(
        "decode_gemv<half>",
        share=0.42,
        pct=61.0,
        center=85.0,
        status=KernelStatus.REGRESSED,
        history=(84.0, 85.5, 85.1, 84.7, 85.3, 85.0),
    )
    gemm = make_kernel(
        "void gemm<float, 128>(float const*, int)",
        share=0.3,
        pct=70.0,
        center=71.0,
        regime="compute-bound",
        binding="tensor_fp16",
        intensity=180.0,
        advice=Advice.COMPUTE_EFFICIENCY,
        borderline=True,
    )
    fused = make_kernel(
        "fused_rmsnorm", share=0.05, pct=91.0, center=88.0, status=KernelStatus.IMPROVED
    )
    new = make_kernel("rope_kernel", share=0.01, pct=40.0, center=None, status=KernelStatus.NEW)
    findings = [
        make_finding(gemv),
        make_finding(
            gemm,
            rule="regime-flip",
            severity=Severity.WARN,
            message="regime is borderline: compute-bound vs baseline memory-bound",
        ),
        make_finding(new, rule="new-kernel", severity=Severity.INFO, advice=None),
    ]
    kernels = [gemv, gemm, fused, new, *make_unchanged(6, share=0.22)]
    return make_verdict(kernels, findings, **kwargs)  # type: ignore[arg-type]


def make_time_kernel(
    name: str = "BM_copy/4096",
    *,
    time_s: float = 1.2e-3,
    center: float = 1.0e-3,
    share: float = 0.2,
) -> KernelVerdict:
    """A kernel without counters, judged on wall time (baseline metric ``time_s``)."""
    history = tuple(center * (1 + 0.01 * (i % 3 - 1)) for i in range(8))
    baseline = BaselineSummary(
        n=8,
        center=center,
        spread=center * 0.01,
        regime=None,
        relative_change=(time_s - center) / center,
        history=history,
        metric="time_s",
    )
    return KernelVerdict(
        key=name,
        name=name,
        time_s=time_s,
        time_share=share,
        percent_of_roof=None,
        regime=None,
        binding=None,
        advice=None,
        status=KernelStatus.REGRESSED,
        baseline=baseline,
    )


def make_group(
    name: str = "attention",
    *,
    pct: float = 55.0,
    center: float = 60.0,
    mfu: float = 0.41,
    share: float = 0.5,
) -> GroupVerdict:
    return GroupVerdict(
        name=name,
        kernels=("a", "b"),
        time_s=share * 1e-2,
        time_share=share,
        percent_of_roof=pct,
        mfu=mfu,
        regime="compute-bound",
        target_percent=70.0,
        owners=("@kernels-team",),
        baseline=make_baseline(center, current=pct),
        mfu_baseline=make_baseline(0.45, spread=0.01, current=mfu),
    )
