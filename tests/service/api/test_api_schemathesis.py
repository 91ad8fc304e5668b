"""Property-based tests of the API against its own OpenAPI document (schemathesis).

A bounded number of generated requests per operation, authenticated with a write token of
one repository: whatever the input, the service answers with a status and a body that the
document declares, and never with a server error.
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from svc_helpers import Service, auth

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
#: Generated requests per operation (13 operations): bounded so the test stays near 20 s.
EXAMPLES = 15
REPO = "acme/fuzz"


def test_api_answers_as_documented(service: Service) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", service.app)
    headers = auth(service.token(REPO, name="fuzz"))
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def answers_as_documented(case) -> None:
            # Most requests name the token's repository, so they reach the code behind auth.
            for part in (case.query, case.body):
                if isinstance(part, dict) and "repo" in part and hash(str(part)) % 4:
                    part["repo"] = REPO
            case.call_and_validate(headers=headers, checks=CHECKS)

        answers_as_documented()
    served = service.app.state.roofguard.metrics.requests.collect()[0].samples
    statuses = {s.labels["status"] for s in served if s.name.endswith("_total")}
    assert sum(s.value for s in served if s.name.endswith("_total")) >= 5 * len(operations)
    assert {"200", "401", "403", "404", "422"} <= statuses
