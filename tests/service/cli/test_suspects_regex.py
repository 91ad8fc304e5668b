"""The suspects as one regular expression, for ncu's ``-k regex:`` and gbench's filter."""

from __future__ import annotations

import re
from pathlib import Path

from demo_cli import VERIFY, demo_db, invoke
from verdict_factory import regression_verdict

from rules import KernelStatus, Verdict
from service.cli.demo_cmd import DEMO_CONFIG, DEMO_REPO
from service.cli.suspects import suspects_regex, write_suspects
from service.demo.generate import DATA_DIR

#: Kernel names as roofguard reads them from the corpus's ncu reports (demangled signatures,
#: with the characters a regular expression would take for its own).
CORPUS_NAMES = (
    "reduceNeighbored(int *, int *, unsigned int)",  # Lashi0812 ncu_reduceInteger.csv
    "reduceNeighboredLess(int *, int *, unsigned int)",
    "void InitializeMatrix_kernel<__half, (bool)1>(T1 *, int, int, int)",  # cuda-roofline V100
    "void cutlass::Kernel<cutlass_80_wmma_tensorop_f16_s161616gemm_f16_16x16_128x1_tn_align8>"
    "(T1::Params)",  # leleucas bert_flashattn_nsight.csv
    "void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, "
    "at::native::MeanOps<float, float>, unsigned int, float, (int)4>>(T3)",  # pooling_nsight16
    "void <unnamed>::kernel<[lambda() (instance 1)]>(float *, float *, int)",  # corpus.md forms
    "copy_blocked[v1,cw51c](Array<long long, 1, C, mutable, aligned>)",
    r"odd|name.with$every^special*char+?{2}\\",
)


def test_each_suspect_s_regex_selects_exactly_that_kernel() -> None:
    # ncu -k "regex:..." matches anywhere in the name (as re.search does), against the name
    # --kernel-name-base gives it: "demangled" is the form roofguard's names have.
    for name in CORPUS_NAMES:
        regex = suspects_regex([name])
        assert [n for n in CORPUS_NAMES if re.search(regex, n)] == [name]
    together = suspects_regex(CORPUS_NAMES)
    assert all(re.search(together, n) for n in CORPUS_NAMES)
    assert re.search(together, "") is None
    # ncu's default base is the bare function name, which the signature does not match.
    assert not re.search(suspects_regex(CORPUS_NAMES[:1]), "reduceNeighbored")


def test_the_regex_escapes_only_what_is_special() -> None:
    # Escapes that POSIX extended expressions leave undefined (\<, \], \/) are never written.
    assert suspects_regex(["void f<int, 2>(T *)"]) == r"void f<int, 2>\(T \*\)"
    assert suspects_regex(["copy[v1]{2}/x"]) == r"copy\[v1]\{2}/x"
    assert suspects_regex([]) == ""


def test_the_suspects_and_their_regex_are_written_together(tmp_path: Path) -> None:
    base = regression_verdict()
    suspect = [k.model_copy(update={"status": "suspect"}) for k in base.kernels[:2]]
    verdict = base.model_copy(update={"kernels": (*suspect, *base.kernels[2:])})
    names = ["decode_gemv<half>", "void gemm<float, 128>(float const*, int)"]
    assert [k.name for k in suspect] == names
    write_suspects(verdict, tmp_path / "s.txt", tmp_path / "s.regex")
    assert (tmp_path / "s.txt").read_text().splitlines() == names
    assert (tmp_path / "s.regex").read_text() == (
        r"decode_gemv<half>|void gemm<float, 128>\(float const\*, int\)"
    )


def test_a_kernel_failing_regime_flip_has_its_suspect_drop_listed(tmp_path_factory) -> None:
    """The demo's GEMM fell off the tensor cores: regime-flip fails it at once, and its
    roof-drop said "re-measure to confirm", yet the suspects file was empty."""
    db = demo_db(tmp_path_factory, "suspects")
    out = tmp_path_factory.mktemp("out")
    pr = ["--commit", "5c5eed0", "--pr", "1235", "--repo", DEMO_REPO, "--db", db]
    suspects = out / "suspects.txt"
    invoke(
        [
            "check",
            str(DATA_DIR / "pr-1234.csv"),
            *pr,
            "--config",
            str(DEMO_CONFIG),
            "--format",
            "json",
            "--output",
            str(out / "v.json"),
            "--suspects",
            str(suspects),
        ]
    )
    verdict = Verdict.model_validate_json((out / "v.json").read_text())
    flagged = {f.kernel for f in verdict.findings if f.status == KernelStatus.SUSPECT}
    assert VERIFY in {k.name for k in verdict.kernels if k.key in flagged}
    assert VERIFY in suspects.read_text().splitlines()
