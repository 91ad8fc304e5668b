"""Identity keys (``collectors.identity``): the shortcuts a million names take change no key."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from collectors import identity
from collectors.identity import KeyOptions, normalise_name

#: Names made of what signatures hold: nested parentheses and templates, operators, spaces.
_PIECES = ["(", ")", "<", ">", ",", " ", "*", "::", "operator", "void ", "k", "int", "()"]
NAMES = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)


@given(NAMES)
def test_a_flat_parameter_list_is_dropped_as_the_scan_drops_it(name: str) -> None:
    """The scan from the end (every name before) and the shortcut for one flat list agree."""
    stripped = name.rstrip()
    scanned = identity._strip_nested_parameter_list(name, stripped)
    want = scanned if stripped.endswith(")") else name
    assert identity._strip_parameter_list(name) == want


@given(st.sampled_from(["triton_poi_fused_add_3", "triton_red_x_12", "xtriton_poi_3", "k_3"]))
def test_only_triton_names_have_their_suffix_folded(name: str) -> None:
    folded = normalise_name(name, KeyOptions())
    assert folded == (name.rsplit("_", 1)[0] if name.startswith("triton_") else name)


def test_common_signatures() -> None:
    assert normalise_name("void kernel_7(float *)") == "kernel_7"
    assert normalise_name("Foo::operator()(int)") == "Foo::operator()"
    assert normalise_name("Foo::operator()") == "Foo::operator()"
    assert normalise_name("f(g(int), h)") == "f"
    assert normalise_name("odd)") == "odd)"
