"""`roofguard check` and `roofguard demo` end to end on a real SQLite store."""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from rules.verdict import Conclusion
from service.cli import run
from service.cli.demo_cmd import run_demo
from tests.factories import make_kernel, make_run

DEMO_KEYS = {
    "verify": "verify_gemm_bf16<512, 14336, 4096>",
    "fused": "fused_add_rmsnorm_kernel<__nv_bfloat16, 4096>",
    "add": "residual_add_kernel<__nv_bfloat16>",
    "norm": "rmsnorm_kernel<__nv_bfloat16, 4096>",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    db = tmp_path_factory.mktemp("demo") / "history.db"
    return run_demo(f"sqlite:///{db}")


def findings_by_rule(verdict):
    out: dict[str, set[str]] = {}
    for finding in verdict.findings:
        out.setdefault(finding.rule, set()).add(finding.kernel or "")
    return out


def test_demo_fails_the_pr_for_the_gemm_that_left_the_tensor_cores(demo):
    verdict = demo.verdict
    assert verdict.conclusion == Conclusion.FAIL
    assert DEMO_KEYS["verify"] in findings_by_rule(verdict)["regime-flip"]
    verify = next(k for k in verdict.kernels if k.key == DEMO_KEYS["verify"])
    assert verify.binding == "fp32" and verify.regime == "compute-bound"
    assert verify.baseline is not None and verify.baseline.n == 14


def test_demo_reports_the_broken_fusion_as_new_and_missing_kernels(demo):
    rules = findings_by_rule(demo.verdict)
    assert {DEMO_KEYS["add"], DEMO_KEYS["norm"]} <= rules["new-kernel"]
    assert DEMO_KEYS["fused"] in rules["missing-kernel"]


def test_demo_verdict_markdown_names_the_findings(demo):
    md = demo.markdown
    assert md.startswith("<!-- roofguard:verdict repo=example/llm-serving pr=1234")
    assert "regime-flip" in md and "fell off the tensor cores" in md.replace("\\", "")


def test_demo_percent_of_roof_is_reproducible_from_the_record(demo):
    verify = next(k for k in demo.verdict.kernels if k.key == DEMO_KEYS["verify"])
    # rules/README.md: percent of roof = T_roof / T with T_roof = F_fp32 / P_fp32 here.
    flops = 4 * 2.0 * 512 * 14336 * 4096
    assert verify.t_roof_s == pytest.approx(flops / 66.9e12)
    assert verify.percent_of_roof == pytest.approx(100 * verify.t_roof_s / verify.time_s)


def nightly(path: Path, night: int, scale: float = 1.0) -> Path:
    gemv = make_kernel("gemv", flops={"tensor_bf16": 2e10}, dram_bytes=4e9, time_s=1.5e-3 * scale)
    norm = make_kernel("norm", flops={"fp32": 1e7}, dram_bytes=4e8, time_s=2e-4)
    kernels = [gemv, norm]
    ts = datetime(2026, 11, 1, 2, tzinfo=UTC) + timedelta(days=night)
    record = make_run(kernels=kernels, commit=f"c{night:04d}", timestamp=ts)
    path.write_text(record.model_dump_json(), encoding="utf-8")
    return path


@pytest.fixture
def history(tmp_path):
    db = f"sqlite:///{tmp_path / 'h.db'}"
    for night in range(8):
        report = nightly(tmp_path / f"n{night}.json", night, scale=1 + 0.01 * (night % 3))
        args = [
            "ingest",
            str(report),
            "--repo",
            "acme/kernels",
            "--commit",
            f"c{night:04d}",
            "--branch",
            "main",
            "--kind",
            "nightly",
            "--db",
            db,
        ]
        assert run(args) == 0
    return tmp_path, db


def check(tmp_path, db, report, *extra):
    out = tmp_path / "verdict.json"
    args = [
        "check",
        str(report),
        "--repo",
        "acme/kernels",
        "--commit",
        "f00d",
        "--pr",
        "7",
        "--db",
        db,
        "--format",
        "json",
        "--output",
        str(out),
        *extra,
    ]
    return run(args), json.loads(out.read_text()) if out.exists() else None


def test_check_passes_an_unchanged_pr_and_writes_the_json_contract(history):
    tmp_path, db = history
    code, verdict = check(tmp_path, db, nightly(tmp_path / "pr.json", 9))
    assert code == 0 and verdict["conclusion"] == "pass"
    gemv = next(k for k in verdict["kernels"] if k["key"] == "gemv")
    assert {"key", "name", "percent_of_roof", "regime", "binding", "baseline"} <= set(gemv)
    assert gemv["baseline"]["n"] == 8
    assert verdict["findings"] == [] or all(
        {"rule", "kernel", "severity", "message", "advice"} <= set(f) for f in verdict["findings"]
    )


def test_a_run_with_no_baseline_is_said_not_judged_not_pass(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'empty.db'}"
    code, verdict = check(tmp_path, db, nightly(tmp_path / "pr.json", 0))
    assert code == 0 and verdict["conclusion"] == "pass"  # the JSON keeps the conclusion
    assert "verdict (not judged) written to" in capsys.readouterr().err


def test_check_fails_a_pr_that_slows_a_kernel_and_exits_1(history):
    tmp_path, db = history
    again = nightly(tmp_path / "again.json", 9, scale=1.24)
    pr = nightly(tmp_path / "pr.json", 9, scale=1.25)
    code, verdict = check(tmp_path, db, pr, "--rerun", str(again))
    assert code == 1 and verdict["conclusion"] == "fail"
    drops = [f for f in verdict["findings"] if f["rule"] == "roof-drop"]
    assert drops and drops[0]["kernel"] == "gemv" and drops[0]["severity"] == "fail"
    gemv = next(k for k in verdict["kernels"] if k["key"] == "gemv")
    assert gemv["status"] == "regressed"
    first, second = gemv["measurements"]  # the verdict shows every measurement
    assert second == pytest.approx(first * 1.25 / 1.24)
    assert drops[0]["numbers"]["remeasured_1"] == pytest.approx(second)


def test_one_slower_measurement_is_a_suspect_and_the_suspects_file_names_it(history):
    tmp_path, db = history
    pr, listed = nightly(tmp_path / "pr.json", 9, scale=1.25), tmp_path / "suspects.txt"
    code, verdict = check(tmp_path, db, pr)
    assert code == 0 and verdict["conclusion"] == "warn"
    gemv = next(k for k in verdict["kernels"] if k["key"] == "gemv")
    assert gemv["status"] == "suspect" and gemv["measurements"] == [gemv["percent_of_roof"]]
    code, _ = check(
        tmp_path, db, nightly(tmp_path / "big.json", 9, scale=2.0), "--suspects", str(listed)
    )
    assert code == 0  # the caller re-measures: nothing fails on one measurement
    assert listed.read_text() == "gemv\n"
    code, _ = check(tmp_path, db, nightly(tmp_path / "ok.json", 9), "--suspects", str(listed))
    assert code == 0 and listed.read_text() == ""


def test_a_normal_re_measurement_clears_a_one_off_dip(history):
    tmp_path, db = history
    dip = nightly(tmp_path / "pr.json", 9, scale=1.5)
    normal = nightly(tmp_path / "again.json", 9, scale=1.01)
    code, verdict = check(tmp_path, db, dip, "--rerun", str(normal))
    assert code == 0 and verdict["conclusion"] == "pass"
    gemv = next(k for k in verdict["kernels"] if k["key"] == "gemv")
    assert gemv["status"] == "unchanged" and len(gemv["measurements"]) == 2
    # The comment says so, with both figures: the first alone read as a regression.
    (cleared,) = [f for f in verdict["findings"] if f["kernel"] == "gemv"]
    assert (cleared["rule"], cleared["severity"]) == ("roof-drop", "info")
    assert "on the first measurement; cleared: re-measured " in cleared["message"]
    assert cleared["numbers"]["remeasured_1"] == pytest.approx(gemv["measurements"][1])
    md = tmp_path / "v.md"
    args = ["check", str(dip), "--repo", "acme/kernels", "--commit", "f00d", "--db", db]
    code = run(
        [*args, "--pr", "7", "--rerun", str(normal), "--format", "markdown", "--output", str(md)]
    )
    assert code == 0 and "🔁 1 suspect cleared by re-measurement: `gemv`." in md.read_text()
    assert cleared["numbers"]["outcome"] == "cleared"  # counted on that line, not a row


def test_bad_re_measurements_are_one_clear_error_and_nothing_is_written(history, capsys):
    tmp_path, db = history
    pr = nightly(tmp_path / "pr.json", 9, scale=1.25)
    other = tmp_path / "other.json"
    extra = make_kernel("extra_kernel", flops={"fp32": 1e7}, dram_bytes=4e8, time_s=2e-4)
    other.write_text(make_run(kernels=[extra], commit="c0009").model_dump_json(), encoding="utf-8")
    listed = tmp_path / "suspects.txt"
    code, verdict = check(tmp_path, db, pr, "--rerun", str(other), "--suspects", str(listed))
    err = capsys.readouterr().err
    assert code == 2 and verdict is None and not listed.exists()
    assert str(other) in err and "extra_kernel" in err and "not in the run" in err
    elsewhere = tmp_path / "elsewhere.json"
    gemv = make_kernel("gemv", flops={"tensor_bf16": 2e10}, dram_bytes=4e9, time_s=1.5e-3)
    wrong = make_run(kernels=[gemv], commit="beef")
    elsewhere.write_text(wrong.model_dump_json(), encoding="utf-8")
    code, _ = check(tmp_path, db, pr, "--rerun", str(elsewhere))
    err = capsys.readouterr().err
    assert code == 2 and str(elsewhere) in err and "'beef'" in err and "same commit" in err
    nothing = tmp_path / "nothing.json"  # a kernel filter that matched no kernel
    nothing.write_text(make_run(kernels=[], commit="c0009").model_dump_json(), encoding="utf-8")
    code, _ = check(tmp_path, db, pr, "--rerun", str(nothing))
    err = capsys.readouterr().err
    assert code == 2 and str(nothing) in err and "re-measured nothing" in err


def test_check_twice_is_idempotent(history, capsys):
    tmp_path, db = history
    report = nightly(tmp_path / "pr.json", 9, scale=1.25)
    first = check(tmp_path, db, report)[1]
    second = check(tmp_path, db, report)[1]
    assert first["run_id"] == second["run_id"]
    assert first["findings"] == second["findings"]


def ingest_nightly(tmp_path, db, night, scale):
    report = nightly(tmp_path / f"n{night}.json", night, scale=scale)
    args = ["ingest", str(report), "--repo", "acme/kernels", "--commit", f"c{night:04d}"]
    assert run([*args, "--branch", "main", "--kind", "nightly", "--db", db]) == 0


def test_a_stored_run_checked_again_keeps_its_verdict(history, capsys):
    tmp_path, db = history
    again = nightly(tmp_path / "again.json", 9, scale=1.24)
    report = nightly(tmp_path / "pr.json", 9, scale=1.25)
    code, first = check(tmp_path, db, report, "--rerun", str(again))
    assert code == 1 and first["conclusion"] == "fail"
    for night in range(10, 17):  # the base branch then settles at the PR's level
        ingest_nightly(tmp_path, db, night, 1.25)
    code, again = check(tmp_path, db, report)
    # The stored findings are the run's verdict; the conclusion must be theirs, not a
    # fresh one against a history that has moved on (which would pass the same findings).
    assert (code, again["conclusion"]) == (1, "fail")
    assert again["findings"] == first["findings"]
    # ... and so are the kernel statuses they set (afresh, the slow kernel is unchanged now).
    statuses = {k["key"]: k["status"] for k in again["kernels"]}
    assert statuses == {k["key"]: k["status"] for k in first["kernels"]}
    assert "regressed" in statuses.values()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--device", "H10"], "closest known: H100-SXM5"),
        (["--format", "yaml"], "must be one of auto, text, markdown, json"),
    ],
)
def test_check_bad_input_exits_2(history, capsys, extra, message):
    tmp_path, db = history
    code, _ = check(tmp_path, db, nightly(tmp_path / "pr.json", 9), *extra)
    assert code == 2
    assert message in capsys.readouterr().err


def test_check_config_with_a_wrong_key_names_file_and_key(history, capsys):
    tmp_path, db = history
    cfg = tmp_path / "roofguard.toml"
    cfg.write_text('base_brnach = "main"\n')
    code, _ = check(tmp_path, db, nightly(tmp_path / "pr.json", 9), "--config", str(cfg))
    err = capsys.readouterr().err
    assert code == 2 and "roofguard.toml" in err and "base_brnach" in err


def test_check_unreadable_report_stores_nothing(history, capsys):
    tmp_path, db = history
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    code, _ = check(tmp_path, db, bad)
    assert code == 2
    assert (
        run(
            [
                "ingest",
                str(nightly(tmp_path / "n.json", 20)),  # a past night: future runs are refused
                "--repo",
                "acme/kernels",
                "--commit",
                "c9999",
                "--branch",
                "main",
                "--db",
                db,
            ]
        )
        == 0
    )
    assert "ingested run 9 " in capsys.readouterr().out


def test_demo_command_prints_the_verdict(tmp_path, capsys):
    assert run(["demo", "--db", f"sqlite:///{tmp_path / 'd.db'}"]) == 0
    captured = capsys.readouterr()
    assert "verify_gemm_bf16" in captured.out
    assert "PR #1234 judged: fail" in captured.err


def test_demo_groups_compare_like_with_like(demo):
    groups = {g.name: g for g in demo.verdict.groups}
    # The catch-all group's baseline holds only its own kernels (first matching group wins),
    # so the broken fusion moves it by points, not by the 20 points a mixed baseline showed.
    elementwise = groups["elementwise"]
    assert elementwise.baseline is not None
    assert abs(elementwise.percent_of_roof - elementwise.baseline.center) < 3
    # MFU of the baseline is measured against the precision the baseline used (bf16 tensor
    # cores), not the fp32 roof the broken PR fell to.
    verify = groups["speculative verify"]
    assert verify.mfu_baseline is not None
    assert 0.65 < verify.mfu_baseline.center < 0.8
    # The broken fusion does cost the elementwise kernels time: the memory-bound group is
    # judged on its time (not its MFU), and that rise is real.
    drops = [f for f in demo.verdict.findings if f.kernel == "group:elementwise"]
    assert [f.numbers["measure"] for f in drops] == ["time_s"]
    assert 0.03 < float(drops[0].numbers["relative_change"]) < 0.15


def test_check_writes_the_roofline_chart_and_lists_it_as_an_artifact(history):
    tmp_path, db = history
    charts = tmp_path / "charts"
    code, _ = check(tmp_path, db, nightly(tmp_path / "pr.json", 9), "--charts", str(charts))
    assert code == 0
    svg = (charts / "roofline.svg").read_text()
    assert 'id="kernels"' in svg and 'id="roof:tensor_bf16:dram"' in svg
    md = tmp_path / "verdict.md"
    args = [
        "check",
        str(tmp_path / "pr.json"),
        "--repo",
        "acme/kernels",
        "--commit",
        "f00d",
        "--pr",
        "7",
        "--db",
        db,
        "--charts",
        str(charts),
        "--output",
        str(md),
    ]
    assert run(args) == 0
    assert "charts in artifact `roofguard`: `roofline.svg`" in md.read_text()


def test_ingest_and_check_key_kernels_alike_under_the_config(tmp_path):
    # Identity keys come from the config for both commands, so a nightly ingested with
    # `roofguard ingest` is the baseline of a PR checked with `roofguard check`.
    cfg = tmp_path / "roofguard.toml"
    cfg.write_text("[keys]\nstrip_template_args = true\n")
    db = f"sqlite:///{tmp_path / 'h.db'}"

    def report(name: str, night: int) -> Path:
        # roofguard's flat CSV derives the key from the name with the config's key options.
        path = tmp_path / name
        path.write_text(
            "# device: NVIDIA H100 80GB HBM3\n"
            "name,duration_s,flops_tensor_bf16,bytes_dram\n"
            f'"gemv<float, 128>",{1.5e-3 * (1 + 0.01 * night)},2e10,4e9\n'
        )
        return path

    for night in range(4):
        args = [
            "ingest",
            str(report(f"n{night}.csv", night)),
            "--repo",
            "acme/kernels",
            "--commit",
            f"c{night}",
            "--branch",
            "main",
            "--kind",
            "nightly",
            "--config",
            str(cfg),
            "--db",
            db,
        ]
        assert run(args) == 0
    code, verdict = check(tmp_path, db, report("pr.csv", 1), "--config", str(cfg))
    assert code == 0
    assert [(k["key"], k["baseline"]["n"]) for k in verdict["kernels"]] == [("gemv", 4)]


def _check_as(tmp_path, db, report, fmt, *extra):
    out = tmp_path / f"verdict.{fmt}"
    base = ["check", str(report), "--repo", "acme/kernels", "--commit", "f00d", "--pr", "7"]
    code = run([*base, "--db", db, "--format", fmt, "--output", str(out), *extra])
    return code, out.read_text(encoding="utf-8")


def test_every_measurement_shows_in_markdown_text_and_json(history):
    # issue 16: the verdict shows every measurement of a kernel, not only in a finding.
    tmp_path, db = history
    pr = nightly(tmp_path / "pr.json", 9, scale=1.25)
    again = nightly(tmp_path / "again.json", 9, scale=1.24)
    listed = tmp_path / "suspects.txt"
    extra = ("--rerun", str(again), "--suspects", str(listed))
    code, text = _check_as(tmp_path, db, pr, "json", *extra)
    gemv = next(k for k in json.loads(text)["kernels"] if k["key"] == "gemv")
    first, second = gemv["measurements"]
    # Confirmed by the re-measurement: regressed, no longer a suspect to re-measure.
    assert code == 1 and gemv["status"] == "regressed" and listed.read_text() == ""
    shown = f"{gemv['percent_of_roof']:.1f}%, re-measured {second:.1f}%"
    assert first == pytest.approx(gemv["percent_of_roof"]) and first != second
    code, markdown = _check_as(tmp_path, db, pr, "markdown", *extra)
    row = next(line for line in markdown.splitlines() if line.startswith("| ❌ | `gemv`"))
    assert code == 1 and f"| {shown} |" in row  # the "% of roof now" cell
    code, terminal = _check_as(tmp_path, db, pr, "text", *extra)
    line = next(line for line in terminal.splitlines() if line.startswith("gemv "))
    assert code == 1 and shown in line
    # Without a re-measurement the cells show the run's figure alone; the run keeps the
    # verdict its re-measurement confirmed (stored findings, their conclusion).
    code, markdown = _check_as(tmp_path, db, pr, "markdown")
    assert code == 1 and "re-measured" not in markdown


def test_the_gate_reads_its_own_longer_window_of_the_baseline(history):
    tmp_path, db = history
    config = tmp_path / "roofguard.toml"
    config.write_text("[baseline]\nwindow = 4\ngate_window = 8\n", encoding="utf-8")
    pr = nightly(tmp_path / "pr.json", 9, scale=1.25)
    code, verdict = check(tmp_path, db, pr, "--config", str(config))
    assert code == 0, "a suspect warns: one measurement fails nothing"
    gemv = next(k for k in verdict["kernels"] if k["key"] == "gemv")
    drop = next(f for f in verdict["findings"] if f["rule"] == "roof-drop")
    assert gemv["status"] == "suspect" and gemv["baseline"]["n"] == 4, "shown: the window"
    assert drop["numbers"]["baseline_n"] == 8, "judged: the gate's window, all 8 nights"


def test_a_re_measurement_given_twice_is_refused(history, capsys):
    """It counted as two measurements of one: a suspect confirmed by one run, twice."""
    tmp_path, db = history
    pr = nightly(tmp_path / "pr.json", 9, scale=1.25)
    again = nightly(tmp_path / "again.json", 9, scale=1.25)
    code, verdict = check(tmp_path, db, pr, "--rerun", str(again), "--rerun", str(again))
    assert code == 2 and verdict is None
    assert f"--rerun {again}: given twice" in capsys.readouterr().err
