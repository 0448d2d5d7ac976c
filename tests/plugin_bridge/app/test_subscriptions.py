"""The subscription registry every MCP transport counts against: URIs per stream, streams per
client and in all, URIs in all; a refusal counts nothing, and a closed stream gives back its
place and URIs."""

from __future__ import annotations

import pytest

from plugin_bridge.app.subscriptions import SubscriptionRefused, Subscriptions


def test_each_limit_refuses_in_one_sentence_and_counts_nothing() -> None:
    subs = Subscriptions(per_stream=10, streams_per_client=2, max_streams=3, max_uris=25)
    subs.reserve("a1", "key:phone", 10)
    with pytest.raises(SubscriptionRefused, match="One stream follows at most 10 notes"):
        subs.reserve("a1", "key:phone", 1)
    subs.reserve("a2", "key:phone", 10)
    with pytest.raises(SubscriptionRefused, match="on 2 streams already"):
        subs.reserve("a3", "key:phone", 1)
    subs.reserve("b1", "owner", 5)
    with pytest.raises(SubscriptionRefused, match="carries 3 notification streams"):
        subs.reserve("c1", "key:bot", 1)
    with pytest.raises(SubscriptionRefused, match="follows 25 notes for its clients"):
        subs.reserve("b1", "owner", 1)
    assert (subs.streams, subs.uris) == (3, 25)


def test_a_closed_stream_gives_back_its_place_and_uris() -> None:
    subs = Subscriptions(per_stream=10, streams_per_client=1, max_streams=1, max_uris=10)
    subs.reserve("a", "key:phone", 10)
    subs.release("a", 4)
    subs.reserve("a", "key:phone", 4)
    subs.close("a")
    assert (subs.streams, subs.uris) == (0, 0)
    subs.reserve("b", "key:phone", 10)
    subs.close("b")
    subs.close("b")  # twice: nothing more given back
    assert (subs.streams, subs.uris) == (0, 0)
