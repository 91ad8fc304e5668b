"""Webhook signatures (GitHub's documented test vector), staleness, replays; the accept command."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from service.errors import BadInput, WebhookSignatureInvalid
from service.github.commands import AcceptCommand, CommandSyntaxError, parse_accept
from service.github.signatures import (
    check_delivery_id,
    check_fresh,
    event_time,
    sign,
    verify_signature,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_signature_matches_githubs_documented_vector() -> None:
    # docs.github.com "Validating webhook deliveries" test values.
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert sign("It's a Secret to Everybody", b"Hello, World!") == expected
    verify_signature("It's a Secret to Everybody", b"Hello, World!", expected)


@pytest.mark.parametrize(
    ("secret", "header", "message"),
    [
        ("s3cret", None, "missing X-Hub-Signature-256"),
        ("s3cret", "sha1=abc", "X-Hub-Signature-256 is not a sha256= signature"),
        ("s3cret", "sha256=" + "0" * 64, "does not match"),
        ("s3cret", "sha256=é", "X-Hub-Signature-256 is not a sha256= signature"),
        (None, "sha256=" + "0" * 64, "not configured"),
    ],
)
def test_bad_signatures_are_refused(secret, header, message) -> None:
    with pytest.raises(WebhookSignatureInvalid, match=message):
        verify_signature(secret, b"{}", header)


def test_signature_of_another_body_is_refused() -> None:
    with pytest.raises(WebhookSignatureInvalid, match="does not match"):
        verify_signature("s3cret", b'{"a": 2}', sign("s3cret", b'{"a": 1}'))


def _updated(when: datetime) -> dict:
    return {"pull_request": {"updated_at": when.isoformat()}}


def test_missing_ids_and_stale_events_are_refused() -> None:
    age = timedelta(minutes=10)
    check_fresh("pull_request", _updated(NOW - timedelta(minutes=1)), NOW, age)
    with pytest.raises(WebhookSignatureInvalid, match="stale"):
        check_fresh("pull_request", _updated(NOW - timedelta(minutes=11)), NOW, age)
    assert check_delivery_id("d-1") == "d-1"
    with pytest.raises(WebhookSignatureInvalid, match="X-GitHub-Delivery"):
        check_delivery_id(None)


@pytest.mark.parametrize(
    ("event", "payload", "key"),
    [
        ("pull_request", {"action": "synchronize"}, "pull_request.updated_at"),
        ("issue_comment", {"comment": {"body": "x"}}, "comment.updated_at"),
        ("pull_request", {"pull_request": {"updated_at": "yesterday"}}, "pull_request.updated_at"),
    ],
)
def test_a_payload_without_its_time_names_the_key(event: str, payload: dict, key: str) -> None:
    """It was refused as "stale delivery", which sent an operator after the clock."""
    with pytest.raises(BadInput, match=f"webhook payload: {key} is missing or not a time"):
        check_fresh(event, payload, NOW, timedelta(minutes=10))


def test_event_time_comes_from_the_payload() -> None:
    payload = {"comment": {"updated_at": "2026-11-30T11:59:00Z"}, "issue": {"updated_at": "x"}}
    assert event_time(payload) == datetime(2026, 11, 30, 11, 59, tzinfo=UTC)
    assert event_time({"pull_request": {"updated_at": "not a time"}}) is None
    assert event_time({}) is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/roofguard accept -- fused on purpose", AcceptCommand(None, "fused on purpose")),
        (
            "LGTM\n/roofguard accept `gemv<half>` -- new tiling\n",
            AcceptCommand("gemv<half>", "new tiling"),
        ),
        (
            "/roofguard  accept  decode_gemv  --  wider tiles",
            AcceptCommand("decode_gemv", "wider tiles"),
        ),
        ("please run /roofguard accept -- x", None),
        ("no command here", None),
    ],
)
def test_accept_command_is_read_from_its_own_line(body, expected) -> None:
    assert parse_accept(body) == expected


def test_accept_without_a_reason_says_the_syntax() -> None:
    with pytest.raises(CommandSyntaxError, match=r"-- REASON"):
        parse_accept("/roofguard accept decode_gemv")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "/roofguard rerun",
            "unknown /roofguard command 'rerun'; known commands: /roofguard accept",
        ),
        ("thanks\n/roofguard  ", "/roofguard names no command; known commands: /roofguard accept"),
    ],
)
def test_an_unknown_command_names_the_known_ones(body: str, message: str) -> None:
    with pytest.raises(CommandSyntaxError, match=f"^{message}"):
        parse_accept(body)


def test_an_accept_beside_an_unknown_command_is_read() -> None:
    body = "/roofguard rerun\n/roofguard accept -- fused on purpose"
    assert parse_accept(body) == AcceptCommand(None, "fused on purpose")
    assert parse_accept("/roofguardian says hi") is None
