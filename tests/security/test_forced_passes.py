"""Forced passes must not give themselves away where voluntary passes are allowed (issue 10,
defect 7): every pass, forced or chosen, is asked of its seat and arrives in the answer to
that seat's own action; nobody else's response or stream shows it any differently."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
import pytest

from cardarena.clients.audit import audit_response
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..calls import RPC_TIMEOUT, auth, create, join_all, run, snapshot_of, stub, watch_feed
from ..serverproc import ServerProcess

if TYPE_CHECKING:
    from cardarena.v1.service_pb2_grpc import MatchServiceAsyncStub

pytestmark = pytest.mark.integration

SEED = bytes(range(32))


def _is_pass(action: pb.Action) -> bool:
    return action.WhichOneof("kind") == "pass"


async def play(
    api: MatchServiceAsyncStub,
    match_id: str,
    tokens: list[str],
    chooser: random.Random,
    actions: int = 10_000,
) -> list[tuple[int, spb.SubmitActionResponse]]:
    """Act for whoever is to act, passing by choice now and then, for at most ``actions``
    actions or to the end; the answers with the seat that acted."""
    answers: list[tuple[int, spb.SubmitActionResponse]] = []
    for _ in range(actions):
        table = await snapshot_of(api, match_id)
        if table.over:
            break
        seat = table.to_act
        mine = await snapshot_of(api, match_id, seat, tokens[seat])
        legal = list(mine.legal_actions)
        assert legal, "the seat to act is always asked, even with only a pass to make"
        passes = [a for a in legal if _is_pass(a)]
        action = passes[0] if passes and chooser.random() < 0.3 else legal[0]
        answer = await api.SubmitAction(
            spb.SubmitActionRequest(
                match_id=match_id,
                seat=seat,
                action=action,
                expected_seq=mine.seq,
                request_id=f"r{mine.seq}",
            ),
            metadata=auth(tokens[seat]),
            timeout=RPC_TIMEOUT,
        )
        answers.append((seat, answer))
    return answers


async def voluntary_match(api: MatchServiceAsyncStub) -> tuple[str, list[str]]:
    info = await create(
        api, "pentathlon", 4, seed=SEED, rounds=["fan_tan"], fan_tan={"voluntary_pass": True}
    )
    return info.match_id, await join_all(api, info.match_id, 4)


def test_a_voluntary_round_with_forced_passes_resumes_after_a_kill(tmp_path: Path) -> None:
    """Forced passes are now actions there: a restarted server must replay them as such."""
    data = tmp_path / "data"
    with ServerProcess(data) as server:

        async def first_half(address: str) -> tuple[str, list[str]]:
            async with grpc.aio.insecure_channel(address) as channel:
                api = stub(channel)
                match_id, tokens = await voluntary_match(api)
                await play(api, match_id, tokens, random.Random(3), actions=40)
                return match_id, tokens

        match_id, tokens = run(first_half(server.address))
        server.kill()
    with ServerProcess(data) as server:

        async def second_half(address: str) -> None:
            async with grpc.aio.insecure_channel(address) as channel:
                api = stub(channel)
                await play(api, match_id, tokens, random.Random(4))
                log = await api.GetMatchLog(
                    spb.GetMatchLogRequest(match_id=match_id), timeout=RPC_TIMEOUT
                )
            kinds = [pb.Event.FromString(e.event).passed.reason for e in log.entries]
            assert pb.PASS_REASON_FORCED in kinds[:45], "forced passes before the kill"
            assert audit_response(log, match_id, head=log.match.last_hash) is None

        run(second_half(server.address), seconds=60)


def test_a_forced_pass_looks_and_groups_like_a_chosen_one(server_process: ServerProcess) -> None:
    async def scenario(address: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            api = stub(channel)
            match_id, tokens = await voluntary_match(api)
            spectator = watch_feed(api, match_id)
            answers = await play(api, match_id, tokens, random.Random(7))
            await spectator.snapshot()
            watched = await spectator.rest()
            log = await api.GetMatchLog(
                spb.GetMatchLogRequest(match_id=match_id), timeout=RPC_TIMEOUT
            )

        full = {e.seq: pb.Event.FromString(e.event) for e in log.entries}
        forced = {
            s
            for s, e in full.items()
            if e.WhichOneof("kind") == "passed" and e.passed.reason == pb.PASS_REASON_FORCED
        }
        chosen = {
            s
            for s, e in full.items()
            if e.WhichOneof("kind") == "passed" and e.passed.reason == pb.PASS_REASON_CHOSEN
        }
        assert forced and chosen, "the deal must show both kinds of pass"
        # Grouping: each answer holds exactly one seat's action, the one it submitted.
        for seat, answer in answers:
            acts = [e for e in answer.events if e.WhichOneof("kind") in ("passed", "card_played")]
            assert len(acts) == 1, f"seat {seat}'s answer carries {len(acts)} actions"
            act = acts[0]
            assert (act.passed.seat if act.HasField("passed") else act.card_played.seat) == seat
        # Content: the spectator's and the seats' copies of a forced pass are those of a chosen
        # pass by the same seat (no forced flag, nothing else).
        seen = {e.seq: e for e in watched}
        for seq in forced | chosen:
            event = seen[seq]
            hidden = pb.Passed(seat=full[seq].passed.seat, reason=pb.PASS_REASON_HIDDEN)
            assert event.passed == hidden
        for _, answer in answers:
            for event in answer.events:
                if event.seq in forced | chosen:
                    hidden = pb.Passed(
                        seat=full[event.seq].passed.seat, reason=pb.PASS_REASON_HIDDEN
                    )
                    assert event.passed == hidden

    run(scenario(server_process.address), seconds=60)
