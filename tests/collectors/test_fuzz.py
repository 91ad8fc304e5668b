"""Fuzzing every format: seeded mutations of real reports, and hypothesis-drawn ones.

Each mutant must read as a record that serialises, or fail with a ``CollectorError`` naming
the file (see ``fuzzing.check_outcome``); never ``CollectorBug`` (the internal-error
message), nor any other exception. Three tests:

* ``test_mutants_read_or_fail_naming_the_file``: mutations seeded by file name, so a failure
  reproduces; their number is fixed per file (``SEEDS``).
* ``test_drawn_mutants_read_or_fail_as_bad_input``: hypothesis draws the seed file and one to
  three mutations, the ones above and those past each reader's limits (5,000-digit integers,
  integers beyond a float, 140,000-character fields, rows cut short, repeated or dropped
  blocks, bit flips); derandomised, so every run draws the same cases, and a failure shrinks
  to the fewest mutations. Cases per format (``CASES``): 150 each for gbench-json,
  kineto-trace, ncu-csv-details, ncu-text, nvbench-csv, nvbench-json, nvbench-md,
  pytest-benchmark-json, roofguard-csv and roofguard-json; 80 for ncu-csv-raw; 8 for
  ncu-rep (each read in a child process): 1,588 in all.
* ``test_any_json_value_anywhere``: hypothesis-drawn JSON values put anywhere in a JSON report.

The whole module runs in about half a minute on a 2-core machine.
"""

from __future__ import annotations

import collections
import json
import random
import re
from pathlib import Path

import pytest
from fuzzing import (
    BINARY_MUTATORS,
    HOSTILE_VALUES,
    JSON_MUTATORS,
    LIMIT_MUTATORS,
    TEXT_MUTATORS,
    Mutator,
    _dump,
    _nodes,
    _replace,
    bit_flip,
    check_outcome,
    mutations,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ncu_files import write_raw

import collectors
from collectors.formats.roofguard_csv import to_csv

#: format -> (corpus files, mutants per file). Formats without a corpus file of their own
#: are seeded from one made from the corpus (see ``seed_files``).
SEEDS: dict[str, tuple[tuple[str, ...], int]] = {
    "gbench-json": (
        (
            "gbench/donar337_numa-pmr__bench.json",
            "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json",
        ),
        60,
    ),
    "pytest-benchmark-json": (
        (
            "pytest-benchmark/benchmark-action_github-action-benchmark__pytest_output.json",
            "pytest-benchmark/benchmark-action_github-action-benchmark__pytest_several_units.json",
        ),
        60,
    ),
    "nvbench-json": (("nvbench/NVIDIA_nvbench__examples_outputs_throughput.json",), 80),
    "nvbench-csv": (("nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.csv",), 80),
    "nvbench-md": (("nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.md",), 80),
    "kineto-trace": (("other/xytpai_nvbench__test_kineto_trace.json",), 80),
    "ncu-csv-details": (
        (
            "ncu-csv/Gardenia-Tian_LearningNote4Dev__gemm_output_sgemm.csv",
            "ncu-csv/leleucas_Actual-Parameter-Collection__interpolate_nsight_virtual.csv",
        ),
        40,
    ),
    "ncu-csv-raw": (
        ("ncu-csv/meinie0826_Roofline-Analysis__torch_sdpa_flash__gqa_bf16_b32_ctx8k_p64.ncu.csv",),
        30,
    ),
    "ncu-text": (("other/brycelelbach_nsightful__copy_blocked.txt",), 60),
    "ncu-rep": (("ncu-rep/NVIDIA_nsight-training__sample_report.ncu-rep",), 6),
    "roofguard-json": ((), 80),
    "roofguard-csv": ((), 80),
}
MADE_FROM = "gbench/donar337_numa-pmr__bench.json"
#: Files of the repository's own test data mutated too: schema generations the corpus lacks
#: (nvbench 2021-03 writes its figures as JSON numbers, not strings).
DATA = Path(__file__).parent / "data"
DATA_SEEDS = {
    "gbench-json": ("micro/gbench_gemm_gpu.json",),
    "nvbench-json": ("micro/nvbench_2021_03.json",),
}


def seed_files(fmt: str, corpus: Path, tmp: Path) -> list[Path]:
    """The real files to mutate for ``fmt``; roofguard's own formats are written from one."""
    files, _ = SEEDS[fmt]
    found = [corpus / name for name in files] + [DATA / n for n in DATA_SEEDS.get(fmt, ())]
    if fmt == "roofguard-json":
        out = tmp / "seed-run.json"
        out.write_text(collectors.collect(corpus / MADE_FROM).model_dump_json(indent=1))
        found.append(out)
    elif fmt == "roofguard-csv":
        out = tmp / "seed-run.csv"
        out.write_text(to_csv(collectors.collect(corpus / MADE_FROM)))
        found.append(out)
    elif fmt == "nvbench-md":  # without its log, the axes are found from the table alone
        text = found[0].read_text(encoding="utf-8")
        out = tmp / "seed-no-log.md"
        out.write_text(re.sub(r"(?ms)^# Log$.*?(?=^# Benchmark Results$)", "", text))
        found.append(out)
    elif fmt == "ncu-csv-raw":
        metrics = [("gpu__time_duration.sum", "nsecond"), ("dram__bytes.sum", "Kbyte")]
        rows = [(i, f"k{i % 3}", [str(1000 + i), str(64 * i)]) for i in range(12)]
        found.append(write_raw(tmp / "seed-raw.csv", metrics, rows))
    return found


@pytest.mark.corpus
@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_mutants_read_or_fail_naming_the_file(fmt: str, corpus_dir: Path, tmp_path: Path) -> None:
    _, count = SEEDS[fmt]
    binary = fmt == "ncu-rep"
    tally: collections.Counter[str] = collections.Counter()
    for seed in seed_files(fmt, corpus_dir, tmp_path):
        data = seed.read_bytes()
        assert check_outcome(seed, fmt) == "record", f"the seed {seed} itself must read"
        is_json = seed.suffix == ".json"
        mutators = BINARY_MUTATORS if binary else JSON_MUTATORS if is_json else TEXT_MUTATORS
        for number, mutant in enumerate(mutations(data, seed.name, count, mutators)):
            path = tmp_path / f"mutant-{number}{seed.suffix}"
            path.write_bytes(mutant)
            tally[check_outcome(path, fmt)] += 1
    # A fuzzer whose mutants all fail the same way (or all still read) tests one path only.
    assert len(tally) >= 2, tally


JSON_FORMATS = {
    "gbench-json": "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json",
    "pytest-benchmark-json": SEEDS["pytest-benchmark-json"][0][0],
    "nvbench-json": SEEDS["nvbench-json"][0][0],
    "kineto-trace": SEEDS["kineto-trace"][0][0],
}
#: Any JSON value, with text that may hold lone surrogates (hypothesis leaves them out).
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None, categories=("L", "N", "P", "Cs")), max_size=8)
    | st.sampled_from(HOSTILE_VALUES),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@pytest.mark.corpus
@pytest.mark.parametrize("fmt", sorted(JSON_FORMATS))
@settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(value=JSON_VALUES, where=st.integers(min_value=0))
def test_any_json_value_anywhere(
    fmt: str, value: object, where: int, corpus_dir: Path, tmp_path: Path
) -> None:
    root = json.loads((corpus_dir / JSON_FORMATS[fmt]).read_text(encoding="utf-8"))
    nodes = list(_nodes(root))
    path = tmp_path / "drawn.json"
    path.write_bytes(_dump(_replace(root, nodes[where % len(nodes)], value)))
    check_outcome(path, fmt)


#: Hypothesis examples per format in ``test_drawn_mutants_read_or_fail_as_bad_input`` (the
#: module docstring lists them): ncu-rep reads each file in a child process (~0.4 s).
CASES = {fmt: 150 for fmt in SEEDS} | {"ncu-csv-raw": 80, "ncu-rep": 8}


def _mutators(fmt: str, seed: Path) -> list[Mutator]:
    if fmt == "ncu-rep":
        return [*BINARY_MUTATORS, bit_flip]
    plain = JSON_MUTATORS if seed.suffix == ".json" else TEXT_MUTATORS
    return [*plain, *LIMIT_MUTATORS, *LIMIT_MUTATORS, bit_flip]


@pytest.mark.corpus
@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_drawn_mutants_read_or_fail_as_bad_input(
    fmt: str, corpus_dir: Path, tmp_path: Path
) -> None:
    seeds = seed_files(fmt, corpus_dir, tmp_path)
    tally: collections.Counter[str] = collections.Counter()
    steps = st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=2**32 - 1))

    @settings(max_examples=CASES[fmt], derandomize=True, deadline=None, database=None)
    @given(seed=st.sampled_from(seeds), edits=st.lists(steps, min_size=1, max_size=3))
    def mutant(seed: Path, edits: list[tuple[int, int]]) -> None:
        data, mutators = seed.read_bytes(), _mutators(fmt, seed)
        for which, rng_seed in edits:
            mutator = mutators[which % len(mutators)]
            data = mutator(data, random.Random(rng_seed)) or data
        path = tmp_path / f"drawn{seed.suffix}"
        path.write_bytes(data)
        tally[check_outcome(path, fmt)] += 1

    mutant()
    assert sum(tally.values()) >= CASES[fmt], tally
    assert "record" in tally and len(tally) >= 2, f"one path only: {tally}"
