"""The JSON-RPC 2.0 protocol module: framing, ids, connection state and limits, no sockets."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin_bridge.wire.errors import WireCode, WireError
from plugin_bridge.wire.protocol import (
    CloseCode,
    ErrorReply,
    InboundNotification,
    Protocol,
    Request,
    Response,
    State,
)


def frame(**message: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", **message})


def ready_protocol(max_in_flight: int = 32) -> Protocol:
    protocol = Protocol(max_in_flight=max_in_flight)
    event = protocol.receive_text(frame(id=0, method="initialize", params={}))
    assert isinstance(event, Request)
    protocol.result(0, {})
    assert protocol.state is State.READY
    return protocol


def refused(event: object) -> tuple[Any, int]:
    assert isinstance(event, ErrorReply), event
    reply = json.loads(event.data)
    assert reply["jsonrpc"] == "2.0"
    assert reply["error"]["code"] == event.error.code
    return reply["id"], event.error.code


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("{", WireCode.PARSE_ERROR),
        ("", WireCode.PARSE_ERROR),
        ('{"jsonrpc": "2.0", "id": 1, "method": "health", "params": NaN}', WireCode.PARSE_ERROR),
        ("[" * 100_000 + "]" * 100_000, WireCode.PARSE_ERROR),
        ("[]", WireCode.INVALID_REQUEST),
        ('[{"jsonrpc": "2.0", "id": 1, "method": "health"}]', WireCode.INVALID_REQUEST),
        ('"health"', WireCode.INVALID_REQUEST),
        ("42", WireCode.INVALID_REQUEST),
        ('{"id": 1, "method": "health"}', WireCode.INVALID_REQUEST),
        ('{"jsonrpc": "1.0", "id": 1, "method": "health"}', WireCode.INVALID_REQUEST),
        ('{"jsonrpc": "2.0", "id": 1}', WireCode.INVALID_REQUEST),
        ('{"jsonrpc": "2.0", "id": 1, "method": 7}', WireCode.INVALID_REQUEST),
        ('{"jsonrpc": "2.0", "id": 1, "method": "health", "params": 3}', WireCode.INVALID_REQUEST),
        ('{"jsonrpc": "2.0", "id": null, "method": "health"}', WireCode.INVALID_REQUEST),
        ('{"jsonrpc": "2.0", "id": 1.5, "method": "health"}', WireCode.INVALID_REQUEST),
        ('{"jsonrpc": "2.0", "id": true, "method": "health"}', WireCode.INVALID_REQUEST),
        ('{"jsonrpc": "2.0", "id": [1], "method": "health"}', WireCode.INVALID_REQUEST),
    ],
)
def test_malformed_frames_get_the_matching_error(text: str, code: WireCode) -> None:
    """Unparseable JSON is -32700; batches, non-objects and bad members are -32600."""
    _, got = refused(ready_protocol().receive_text(text))
    assert got == code


def test_the_error_echoes_a_valid_id_and_uses_null_otherwise() -> None:
    """An error reply carries the request's id when it is valid, else null."""
    protocol = ready_protocol()
    assert refused(protocol.receive_text('{"jsonrpc": "1.0", "id": "a", "method": "x"}'))[0] == "a"
    assert refused(protocol.receive_text('{"jsonrpc": "2.0", "id": 2.5, "method": "x"}'))[0] is None


def test_binary_frames_are_refused_with_invalid_request() -> None:
    """A binary frame is answered -32600 and the connection stays usable."""
    protocol = ready_protocol()
    _, code = refused(protocol.receive_bytes(b'{"jsonrpc":"2.0","id":1,"method":"health"}'))
    assert code == WireCode.INVALID_REQUEST
    assert protocol.state is State.READY
    assert isinstance(protocol.receive_text(frame(id=1, method="health")), Request)


def test_requests_before_initialize_get_not_initialized() -> None:
    """Any request other than initialize first is -32002; notifications are ignored."""
    protocol = Protocol()
    _, code = refused(protocol.receive_text(frame(id=1, method="health")))
    assert code == WireCode.NOT_INITIALIZED
    assert protocol.receive_text(frame(method="$/cancelRequest", params={"id": 1})) is None
    assert protocol.state is State.AWAITING_INIT


def test_initialize_result_makes_the_connection_ready() -> None:
    """initialize answered with a result moves the connection to READY."""
    protocol = Protocol()
    request = protocol.receive_text(frame(id="init", method="initialize", params={"token": "t"}))
    assert request == Request("init", "initialize", {"token": "t"})
    states = [protocol.state]
    _, code = refused(protocol.receive_text(frame(id=2, method="health")))
    assert code == WireCode.NOT_INITIALIZED
    reply = json.loads(protocol.result("init", {"ok": True}))
    assert reply == {"jsonrpc": "2.0", "id": "init", "result": {"ok": True}}
    states.append(protocol.state)
    assert states == [State.INITIALIZING, State.READY]


def test_unauthorized_initialize_asks_to_close_with_4401() -> None:
    """initialize answered -32001 closes the connection with code 4401."""
    protocol = Protocol()
    protocol.receive_text(frame(id=1, method="initialize", params={}))
    protocol.error(1, WireError(WireCode.UNAUTHORIZED, "Wrong token."))
    assert protocol.state is State.CLOSED
    assert protocol.close_request is not None
    assert protocol.close_request.code == CloseCode.UNAUTHORIZED
    assert protocol.receive_text(frame(id=2, method="health")) is None


def test_a_failed_initialize_may_be_retried() -> None:
    """initialize answered with another error (bad params) lets the client try again."""
    protocol = Protocol()
    protocol.receive_text(frame(id=1, method="initialize"))
    protocol.error(1, WireError(WireCode.INVALID_PARAMS, "Invalid params."))
    assert protocol.state is State.AWAITING_INIT
    assert isinstance(protocol.receive_text(frame(id=2, method="initialize")), Request)


def test_initialize_twice_is_invalid() -> None:
    """A second initialize on a ready connection is -32600."""
    _, code = refused(ready_protocol().receive_text(frame(id=9, method="initialize")))
    assert code == WireCode.INVALID_REQUEST


def test_notifications_after_initialize_are_events() -> None:
    """A message without id is a InboundNotification."""
    event = ready_protocol().receive_text(frame(method="$/cancelRequest", params={"id": 3}))
    assert event == InboundNotification("$/cancelRequest", {"id": 3})


def test_the_in_flight_limit_refuses_the_request_past_it() -> None:
    """With the limit reached the next request is -32003 until one is answered."""
    protocol = ready_protocol(max_in_flight=2)
    assert isinstance(protocol.receive_text(frame(id=1, method="a")), Request)
    assert isinstance(protocol.receive_text(frame(id=2, method="a")), Request)
    _, code = refused(protocol.receive_text(frame(id=3, method="a")))
    assert code == WireCode.TOO_MANY_REQUESTS
    protocol.result(1, None)
    assert protocol.in_flight == 1
    assert isinstance(protocol.receive_text(frame(id=3, method="a")), Request)


def test_an_id_in_flight_cannot_be_reused() -> None:
    """A request reusing the id of an unanswered request is -32600."""
    protocol = ready_protocol()
    protocol.receive_text(frame(id=5, method="a"))
    _, code = refused(protocol.receive_text(frame(id=5, method="b")))
    assert code == WireCode.INVALID_REQUEST


def test_answering_twice_is_a_programming_error() -> None:
    """Replying to a request that is not in flight raises."""
    protocol = ready_protocol()
    protocol.receive_text(frame(id=5, method="a"))
    protocol.result(5, 1)
    with pytest.raises(ValueError, match="not in flight"):
        protocol.result(5, 1)


def test_responses_match_our_requests_by_id() -> None:
    """The client's answer to a server request is a Response; unknown ids are ignored."""
    protocol = ready_protocol()
    request_id, data = protocol.request("tool/confirm", {"tool": "create_note"})
    assert json.loads(data)["method"] == "tool/confirm"
    assert protocol.receive_text(frame(id="nope", result={})) is None
    event = protocol.receive_text(frame(id=request_id, result={"approved": True}))
    assert event == Response(request_id, {"approved": True}, None)
    assert protocol.receive_text(frame(id=request_id, result={"approved": True})) is None


def test_a_forgotten_request_ignores_its_late_answer() -> None:
    """After forget (a timeout) the answer is dropped."""
    protocol = ready_protocol()
    request_id, _ = protocol.request("tool/confirm", {})
    protocol.forget(request_id)
    assert protocol.receive_text(frame(id=request_id, result={"approved": True})) is None


def test_error_responses_from_the_client_are_delivered() -> None:
    """An error answer to a server request carries the error object."""
    protocol = ready_protocol()
    request_id, _ = protocol.request("tool/confirm", {})
    event = protocol.receive_text(frame(id=request_id, error={"code": 1, "message": "no"}))
    assert event == Response(request_id, None, {"code": 1, "message": "no"})


def test_unserialisable_results_become_internal_errors() -> None:
    """A result that is not JSON (NaN, objects) is replaced by -32603."""
    protocol = ready_protocol()
    protocol.receive_text(frame(id=1, method="a"))
    reply = json.loads(protocol.result(1, {"score": float("nan")}))
    assert reply["error"]["code"] == WireCode.INTERNAL_ERROR
    assert protocol.in_flight == 0


def test_lone_surrogates_are_escaped_not_fatal() -> None:
    """Text that is not encodable as UTF-8 is sent \\u-escaped."""
    protocol = ready_protocol()
    protocol.receive_text(frame(id=1, method="a"))
    data = protocol.result(1, {"text": "bad \ud800 text"})
    assert json.loads(data)["result"]["text"] == "bad \ud800 text"


def test_replies_are_compact_utf8() -> None:
    """Non-ASCII text is sent as UTF-8, not escaped."""
    assert "日本語".encode() in ready_protocol().notification("chat/delta", {"text": "日本語"})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
message_members = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]) | json_values,
        "id": st.integers() | st.text(max_size=5) | json_values,
        "method": st.sampled_from(["initialize", "health", "$/cancelRequest"]) | json_values,
        "params": json_values,
        "result": json_values,
        "error": json_values,
    },
)


def assert_valid_handling(protocol: Protocol, text: str) -> None:
    event = protocol.receive_text(text)
    if isinstance(event, ErrorReply):
        reply = json.loads(event.data)
        assert set(reply) == {"jsonrpc", "id", "error"}
        assert isinstance(reply["error"]["code"], int)
        assert isinstance(reply["error"]["message"], str)
    elif isinstance(event, Request):
        protocol.error(event.id, WireError(WireCode.METHOD_NOT_FOUND, "no"))
    else:
        assert event is None or isinstance(event, (InboundNotification, Response))


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_fuzz_any_text_is_handled(text: str) -> None:
    """Any text frame yields a valid JSON-RPC error, an event, or nothing; never an exception."""
    for protocol in (Protocol(), ready_protocol()):
        assert_valid_handling(protocol, text)


@settings(max_examples=300, deadline=None)
@given(st.binary())
def test_fuzz_any_bytes_are_handled(data: bytes) -> None:
    """Any bytes, as a binary frame or decoded as text, are handled without an exception."""
    protocol = ready_protocol()
    assert isinstance(protocol.receive_bytes(data), ErrorReply)
    assert_valid_handling(protocol, data.decode("utf-8", errors="surrogateescape"))


@settings(max_examples=200, deadline=None)
@given(st.lists(message_members | json_values, min_size=1, max_size=5))
def test_fuzz_any_json_messages_are_handled(messages: list[Any]) -> None:
    """Any sequence of JSON values keeps the protocol consistent and answering."""
    protocol = Protocol()
    for message in messages:
        assert_valid_handling(protocol, json.dumps(message))
    assert protocol.in_flight == 0
