"""No reader gets a live match's chained hash: it would give the hidden hands away.

The chain hashes every stored entry, and the stored deal holds every hand in full, with no
secret salt. A seat receives every other entry's exact bytes (public entries are sent as
stored), so with ``MatchInfo.last_hash`` it can try each way the cards it has not seen could
lie and keep the one that hashes to it: a helper's probe found both opponents' Triathlon hands
from seat 0 after five tricks in 8,000 tries, and a spectator's three hands after nine; a
whole deal, C(26, 13) tries, took about a minute. So the hash is shown once the match has
ended (its log is then public), to every reader alike, and never before, to anyone: the
operator, a seat and a stranger see the same empty field. In-process server on 127.0.0.1:0.
"""

from __future__ import annotations

from pathlib import Path

from cardarena.server.api import Access
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT as RPC
from ..calls import audit, auth, run
from .support import channel_to, create_table, play_hosted_to_end, play_lowest, secret, served

OPERATOR = secret()


def test_a_live_match_shows_no_reader_its_hash_and_an_ended_one_shows_every_reader(
    data_dir: Path,
) -> None:
    async def scenario() -> None:
        access = Access(operator_token=OPERATOR)
        async with (
            served(data_dir, access=access) as server,
            channel_to(f"127.0.0.1:{server.port}") as (_, api),
        ):
            table = await create_table(api, metadata=auth(OPERATOR))
            readers = {
                "stranger": (),
                "seat": auth(table.tokens[0]),
                "operator": auth(OPERATOR),
            }

            async def hashes() -> dict[str, tuple[bytes, bytes]]:
                shown = {}
                for who, metadata in readers.items():
                    got = await api.GetMatch(
                        spb.GetMatchRequest(match_id=table.match_id),
                        metadata=metadata,
                        timeout=RPC,
                    )
                    page = await api.ListMatches(
                        spb.ListMatchesRequest(), metadata=metadata, timeout=RPC
                    )
                    (line,) = [m for m in page.matches if m.match_id == table.match_id]
                    shown[who] = (got.match.last_hash, line.last_hash)
                return shown

            hosted = server.arena.matches[table.match_id]
            for actions in (0, 1, 20):  # just dealt, one card played, late in the deal
                while hosted.last_seq < 3 + actions and not hosted.ended:
                    await play_lowest(server, api, table)
                assert not hosted.ended
                assert await hashes() == dict.fromkeys(readers, (b"", b"")), actions

            await play_hosted_to_end(server, api, table)
            log = await api.GetMatchLog(
                spb.GetMatchLogRequest(match_id=table.match_id), timeout=RPC
            )
            audit(log)
            last = log.entries[-1].hash
            assert await hashes() == dict.fromkeys(readers, (last, last))

    run(scenario(), 60)
