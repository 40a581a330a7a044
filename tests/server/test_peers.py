"""Channels to peer replicas: reused while in use, the least recently used closed beyond a
bound (replicas come back with new addresses)."""

from __future__ import annotations

import asyncio

from cardarena.server.api import peers
from cardarena.server.api.peers import Peers


def test_peer_channels_are_reused_and_bounded() -> None:
    async def main() -> None:
        box = Peers("me")
        peers_max = peers.MAX_PEERS
        first = box.stub("127.0.0.1:1")
        assert box.stub("127.0.0.1:1") is first
        for port in range(2, peers_max + 2):
            box.stub(f"127.0.0.1:{port}")
            box.stub("127.0.0.1:1")  # in use: stays the most recently used
        assert len(box._channels) == peers_max
        assert "127.0.0.1:1" in box._channels and "127.0.0.1:2" not in box._channels
        assert box.stub("127.0.0.1:1") is first
        await box.close()
        assert box._channels == {}

    asyncio.run(main())
