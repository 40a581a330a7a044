"""GetMatchLog and ListMatches of ended matches are answered from the bytes first made (issue 29.3).

Why: an ended match's log, seed, checkpoint and info are final, yet each read rebuilt a
message per event (or per listed match) on the event loop, and replayed a match no longer in
memory through the engine."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from cardarena.server.api import info as info_module
from cardarena.server.api.kept import LARGEST_SHARE, KeptBytes
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT, audit, run
from ..security.support import address_of, channel_to, create_table, play_hosted_to_end, served


def test_the_answers_kept_are_bounded_in_bytes_the_least_recently_read_dropped_first() -> None:
    """Logs and listed lines alike (one mechanism, two bounds)."""
    logs = KeptBytes(max_bytes=8 * 100)
    for name in "abcdefgh":
        logs.keep(name, bytes(100))
    assert len(logs) == 8 and logs.size == 800
    assert logs.get("a") == bytes(100)  # read: now the most recent
    logs.keep("i", bytes(100))
    assert logs.get("b") is None and logs.get("a") is not None
    assert logs.size == 800
    logs.keep("huge", bytes(800 // LARGEST_SHARE + 1))
    assert logs.get("huge") is None, "one huge log does not push out every other"


def test_an_ended_matchs_log_is_read_again_without_the_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        async with served(tmp_path) as server, channel_to(address_of(server)) as (_, api):
            table = await create_table(api)
            request = spb.GetMatchLogRequest(match_id=table.match_id)
            with pytest.raises(grpc.aio.AioRpcError) as running:
                await api.GetMatchLog(request, timeout=RPC_TIMEOUT)
            assert running.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert len(server.service.ended_logs) == 0, "nothing kept before the end"
            await play_hosted_to_end(server, api, table)
            first = await api.GetMatchLog(request, timeout=RPC_TIMEOUT)
            audit(first)
            assert first.checkpoint.signature and len(server.service.ended_logs) == 1

            async def gone(match_id: str) -> None:
                raise AssertionError(f"{match_id} was loaded again")

            monkeypatch.setattr(server.arena, "get", gone)
            again = await api.GetMatchLog(request, timeout=RPC_TIMEOUT)
            assert again == first

    run(scenario())


def test_an_ended_matchs_info_is_made_once_and_each_reader_gets_its_own_copy(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with served(tmp_path) as server, channel_to(address_of(server)) as (_, api):
            table = await create_table(api)
            hosted = server.arena.matches[table.match_id]
            info_module.match_info(hosted)
            assert hosted not in info_module._FINAL, "a running match's info still changes"
            await play_hosted_to_end(server, api, table)
            first = info_module.match_info(hosted)
            assert hosted in info_module._FINAL
            expected = spb.MatchInfo()
            expected.CopyFrom(first)
            first.seats[0].name = "changed by its reader"  # as the embargo redacts a listing
            assert info_module.match_info(hosted) == expected
            listed = await api.ListMatches(spb.ListMatchesRequest(), timeout=RPC_TIMEOUT)
            assert [m for m in listed.matches if m.match_id == table.match_id] == [expected]

    run(scenario())


def test_a_page_joined_from_kept_bytes_is_the_page_a_message_would_be() -> None:
    infos = [spb.MatchInfo(match_id=f"m{n}", last_seq=n * 300, seed=bytes(32)) for n in range(3)]
    listed = [info_module.listed_field(i) for i in infos]
    data = info_module.page_bytes(spb.ListMatchesResponse, listed, "next-page")
    expected = spb.ListMatchesResponse(matches=infos, next_page_token="next-page")
    assert spb.ListMatchesResponse.FromString(data) == expected
    assert info_module.page_bytes(spb.ListMatchesResponse, [], "") == b""


def test_ended_matches_are_listed_from_the_bytes_kept_and_unfinished_ones_are_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        async with served(tmp_path) as server, channel_to(address_of(server)) as (_, api):
            ended = await create_table(api)
            await play_hosted_to_end(server, api, ended)
            running = await create_table(api)
            waiting = await create_table(api, seat_all=False)
            request = spb.ListMatchesRequest()
            first = await api.ListMatches(request, timeout=RPC_TIMEOUT)
            assert [m.match_id for m in first.matches] == [
                ended.match_id,
                running.match_id,
                waiting.match_id,
            ]
            finals = server.service.final_infos
            assert len(finals) == 1 and finals.get(ended.match_id) is not None

            def made(*args: object) -> None:
                raise AssertionError("an ended match's info was made again")

            monkeypatch.setattr(info_module, "match_info", made)
            only_ended = spb.ListMatchesRequest(status=spb.MATCH_STATUS_ENDED)
            again = await api.ListMatches(only_ended, timeout=RPC_TIMEOUT)
            assert list(again.matches) == [first.matches[0]]
            assert again.matches[0].totals and again.matches[0].seed
            monkeypatch.undo()
            waits = await api.ListMatches(
                spb.ListMatchesRequest(status=spb.MATCH_STATUS_WAITING), timeout=RPC_TIMEOUT
            )
            assert [m.match_id for m in waits.matches] == [waiting.match_id]

    run(scenario())
