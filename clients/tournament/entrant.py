"""Playing a server's tournament as one entrant: connect with the key, play every match the
server seats the entrant in, until the tournament ends.

Why nothing is decided here on a bot's behalf: a bot that crashes, hangs or answers nonsense
would otherwise be played by this loop (as the old runner did, with a decent default), and
could win. Here a failed decision is no action at all (the server's clock plays the turn
and counts the time-out as the seat's fault) and an answer outside the legal actions is sent
as it is (the server refuses it and logs the fault). The server's fault policy does the rest.

A broken stream is reconnected with backoff: the server tells a reconnecting entrant again of
every match it sits in that still runs, and a match already being played is not started twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc

from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import tournament_pb2 as tpb

from ..bots.decider import Decider, SeatContext, describe_error
from ..bots.state import SeatState
from ..client import Abstain, ArenaClient, Ticket
from ..client.channel import RETRYABLE
from ..client.entropy import Contribution

MakeDecider = Callable[[tpb.MatchAssigned], Decider]
"""A fresh bot for one seat of one match."""


@dataclass
class EntrantReport:
    """What one entrant's run saw: its name, the matches it played, its own bot's failures
    (the server's counts are the ones that score), and the tournament as it ended."""

    entrant: str = ""
    matches: int = 0
    failures: int = 0
    notes: list[str] = field(default_factory=list)
    final: tpb.TournamentInfo | None = None


async def play_entrant(
    client: ArenaClient,
    tournament_id: str,
    key: str,
    make_decider: MakeDecider,
    *,
    reconnect_for: float = 60.0,
    log: Callable[[str], None] | None = None,
    contribution: Contribution = "fresh",
) -> EntrantReport:
    """Play as the entrant ``key`` belongs to until the tournament ends, contributing
    ``contribution`` to the tournament seed (fresh random bytes, your own 32, or none)."""
    say = log or (lambda text: print(text, file=sys.stderr, flush=True))
    report = EntrantReport()
    playing: dict[str, asyncio.Task[None]] = {}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + reconnect_for
    pause = 0.1
    try:
        while report.final is None:
            try:
                entering = client.tournaments.enter(tournament_id, key, contribution=contribution)
                async for message in entering:
                    deadline, pause = loop.time() + reconnect_for, 0.1
                    kind = message.WhichOneof("kind")
                    if kind == "entered":
                        report.entrant = message.entered.entrant
                    elif kind == "match" and not _in_play(playing, message.match.match_id):
                        assigned = message.match
                        playing[assigned.match_id] = asyncio.create_task(
                            _play(client, assigned, make_decider, report, say)
                        )
                    elif kind == "ended":
                        report.final = message.ended
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRYABLE or loop.time() > deadline:
                    raise
                say(f"entrant {report.entrant or '?'}: {error.code().name}, reconnecting")
            if report.final is None:
                await asyncio.sleep(pause)
                pause = min(pause * 2, 2.0)
        await asyncio.gather(*playing.values(), return_exceptions=True)
    finally:
        for task in playing.values():
            task.cancel()
    return report


def _in_play(playing: dict[str, asyncio.Task[None]], match_id: str) -> bool:
    """Whether a match is being played here: told of it again (after a reconnect) while the
    task that played it has stopped (its stream failed), the server says it still runs."""
    task = playing.get(match_id)
    return task is not None and not task.done()


async def _play(
    client: ArenaClient,
    assigned: tpb.MatchAssigned,
    make_decider: MakeDecider,
    report: EntrantReport,
    say: Callable[[str], None],
) -> None:
    decider = make_decider(assigned)
    context = SeatContext(
        match_id=assigned.match_id,
        game=assigned.game,
        seat=assigned.seat,
        players=assigned.players,
        names=tuple(assigned.names),
        options=codec.dict_of(assigned.options),
        lowest_wins=assigned.lowest_wins,
        decision_ms=assigned.move_ms,
    )
    budget = assigned.move_ms / 1000 if assigned.move_ms else None
    broken: list[str] = []

    def failed(what: str) -> None:
        report.failures += 1
        if len(report.notes) < 10:
            report.notes.append(f"match {assigned.match_id} seat {assigned.seat}: {what}")

    async def decide(state: SeatState) -> int:
        if broken:
            raise Abstain
        try:
            async with asyncio.timeout(budget):
                action = await decider.decide(state)
            codec.action_to_pb(action)  # an answer that is no action at all is not sent
            return action
        except TimeoutError:
            failed("no answer in time")
        except Exception as error:  # the bot's failure, never this loop's
            failed(describe_error(error))
        raise Abstain

    def observe(state: SeatState, event: pb.Event) -> None:
        with contextlib.suppress(Exception):
            decider.observe(event)

    ticket = Ticket(assigned.match_id, assigned.seat, assigned.token)
    state = SeatState(assigned.match_id, assigned.seat)
    try:
        try:
            await decider.start(context)
        except Exception as error:
            broken.append(describe_error(error))
            failed(f"the bot did not start: {broken[0]}")
        state = await client.play(ticket, decide=decide, on_event=observe, judge=True)
        report.matches += 1
    except grpc.aio.AioRpcError as error:
        say(f"match {assigned.match_id}: {error.code().name}: {error.details()}")
    except TimeoutError as error:  # no progress for the client's retry_for
        say(f"match {assigned.match_id}: {error}")
    finally:
        with contextlib.suppress(Exception):
            await decider.finish(state)
