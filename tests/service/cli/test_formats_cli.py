"""`roofguard formats`: every registered collector, what it reads, how to produce it."""

from collectors.errors import UnknownFormat
from collectors.registry import all_collectors
from service.cli import run


def test_formats_lists_every_collector_with_what_it_reads_and_an_example(capsys):
    assert run(["formats"]) == 0
    out = capsys.readouterr().out
    for collector in all_collectors():
        description, example = collector.description, collector.example
        assert f"{collector.name}  (" in out
        assert description and example, collector.name
        assert f"  reads:   {description}" in out and f"  example: {example}" in out
    assert "ncu --csv --page raw" in out and "--benchmark_format=json" in out


def test_formats_names_only(capsys):
    assert run(["formats", "--names"]) == 0
    names = capsys.readouterr().out.split()
    assert names == sorted(c.name for c in all_collectors())


def test_the_unknown_format_error_points_at_a_command_that_exists(tmp_path, capsys):
    assert "roofguard formats" in str(UnknownFormat("x.bin"))
    junk = tmp_path / "x.bin"
    junk.write_bytes(b"\x00\x01 not a report")
    assert run(["inspect", str(junk)]) == 2
    assert "roofguard formats" in capsys.readouterr().err
