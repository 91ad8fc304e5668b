"""Two cards taking turns on one branch's nights: each card's gate reads the other's nights.

An A100 runner on odd nights, an H100 runner on even ones; a GEMV 36% slower from night 15
on both. The A100 confirmed it on night 17; the H100 was suspect on 16 and on 18 only warned
"tonight 55%, at the 55% it held once before": the A100's two fallen nights, left out of its
level as not yet confirmed there, were read into the H100's history as the A100's segment
(its last ``n`` nights, not the ``n`` its level is of), a visit to a second mode.
"""

from __future__ import annotations

from device_fleet import KERNELS, nightly_check, nights, slowed

A100, H100 = "A100-SXM4-80GB", "H100-SXM5"
#: Each night's GEMV time over its level's: about ±1.5%, noisier than ``device_fleet``'s wobble,
#: so a card's two fallen nights are not yet a confirmed level of its own (the bug's condition).
NOISE = (1.0, 1.03, 0.99, 0.985, 1.01, 1.0, 0.98, 1.02, 1.005, 0.995)


def _gemv(verdict: dict) -> list[tuple[str, str]]:
    return [(f["rule"], f["severity"]) for f in verdict["findings"] if f["kernel"] == "gemv"]


def test_each_card_confirms_the_fall_on_its_second_night_down(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    found = {}
    for night in range(1, 21):
        [record] = nights(A100 if night % 2 else H100, 1, start=night, kernels=KERNELS)
        factor = (1.36 if night >= 15 else 1.0) * NOISE[night % len(NOISE)]
        found[night] = _gemv(nightly_check(tmp_path, url, slowed(record, factor)))
    assert found[15] == found[16] == [("roof-drop", "warn")]  # each card's first night down
    assert found[17] == found[18] == [("roof-drop", "fail")]  # confirmed on each card
    assert found[19] == found[20] == []  # then it is the level


def test_the_level_across_cards_is_counted_as_the_gate_judged_it(tmp_path) -> None:
    """Night 18 on the H100, its fall confirmed: the gate judged 14 runs, the A100's 7 of its
    level scaled to the H100, then 7 H100 nights (its 8th, the first night down, left out).
    The finding read "over 7 runs on A100-SXM4-80GB scaled to its 8 nights on H100-SXM5"
    beside a ``baseline_n`` of 14: neither count was the level's."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    for night in range(1, 19):
        [record] = nights(A100 if night % 2 else H100, 1, start=night, kernels=KERNELS)
        factor = (1.36 if night >= 15 else 1.0) * NOISE[night % len(NOISE)]
        verdict = nightly_check(tmp_path, url, slowed(record, factor))
    [finding] = [f for f in verdict["findings"] if f["kernel"] == "gemv"]
    assert finding["numbers"]["baseline_n"] == 14
    words = f"over 14 runs, 7 on {A100} scaled to {H100} and its 7 nights there"
    assert words in finding["message"]
