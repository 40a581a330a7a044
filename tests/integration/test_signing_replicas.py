"""Replicas sharing a PostgreSQL store agree on the signing keys: each publishes its own, each
lists every one (its own first), and a log fetched from either replica verifies with a key
that both list, whichever replica signed it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from cardarena.v1 import service_pb2 as spb
from cardarena.v1.signed import checkpoint_of

from ..calls import new_table, play_out, stub
from .test_replicas import running_replicas

pytestmark = pytest.mark.integration


def test_replicas_publish_their_keys_to_each_other_and_logs_verify_from_either(
    tmp_path: Path,
) -> None:
    with running_replicas(tmp_path, 2) as (_, servers):

        async def scenario() -> None:
            async with (
                grpc.aio.insecure_channel(servers[0].address) as first,
                grpc.aio.insecure_channel(servers[1].address) as second,
            ):
                apis = [stub(first), stub(second)]
                table = await new_table(apis[0])
                await play_out(apis[0], table)
                listed = [await api.GetPublicKeys(spb.GetPublicKeysRequest()) for api in apis]
                assert len(listed[0].keys) == len(listed[1].keys) == 2
                assert listed[0].keys[0].key_id != listed[1].keys[0].key_id  # own key first
                assert {k.key_id for k in listed[0].keys} == {k.key_id for k in listed[1].keys}
                keys = {k.key_id: k.public_key for k in listed[0].keys}
                request = spb.GetMatchLogRequest(match_id=table.match_id)
                logs = [await api.GetMatchLog(request, timeout=10) for api in apis]
                assert logs[0].checkpoint == logs[1].checkpoint  # signed once, stored
                point = logs[1].checkpoint
                assert point.last_seq == logs[1].entries[-1].seq
                Ed25519PublicKey.from_public_bytes(keys[point.key_id]).verify(
                    point.signature, checkpoint_of(point)
                )

        asyncio.run(asyncio.wait_for(scenario(), 120))
