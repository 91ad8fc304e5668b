"""An upload answered before is answered from its claim, and only to whom may upload it.

A retry (after a 202 or a lost answer) sends the same bytes, which were parsed and judged
once; the service answers it with the stored verdict without parsing it again. The claim
keeps the run's repository, so a token of another repository replaying those bytes is
refused as its upload of them would be.
"""

from __future__ import annotations

from load_driver import big_run
from svc_helpers import Service


def test_a_retry_gets_the_stored_answer_and_another_repository_is_refused(
    service: Service, repo: str
) -> None:
    run = big_run(repo, 7, 20)
    first = service.upload(run, service.token(repo))
    again = service.upload(run, service.token(repo))
    assert (first.status_code, again.status_code) == (201, 200), again.text
    assert again.json()["run_id"] == first.json()["run_id"] and not again.json()["created"]
    assert again.json()["verdict"] == first.json()["verdict"]
    assert again.json()["markdown"] == first.json()["markdown"]
    other = service.upload(run, service.token(f"{repo}-other"))
    assert other.status_code == 403, other.text
    assert service.app.state.roofguard.metrics.checks._value.get() == 1
