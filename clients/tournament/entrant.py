"""Playing a server's tournament as one entrant: connect with the key, play every match the
server seats the entrant in, until the tournament ends.

Why nothing is decided here on a bot's behalf: a bot that crashes, hangs or answers nonsense
would otherwise be played by this loop (as the old runner did, with a decent default), and
could win. Here a failed decision is no action at all (the server's clock plays the turn
and counts the time-out as the seat's fault) and an answer outside the legal actions is sent
as it is (the server refuses it and logs the fault). The server's fault policy does the rest.

A broken stream is reconnected with backoff: the server tells a reconnecting entrant again of
every match it sits in that still runs, and a match already being played is not started twice.

Why programs are started before the entrant enters: the server's clock runs on a match from
the moment it begins, which is when the entrant hears of it, and a program's start-up is not a
move (``docs/bot-protocol.md``, "Start-up is not a move"). So an ``exec:`` bot's programs are
started ahead (:class:`~cardarena.clients.bots.external.Ahead`), the entrant enters only once
they have answered ``hello`` (or the start-up allowance is up), and each match takes one
already running. A match's program that is still starting when a turn comes costs that turn
only; one not ready within the allowance is let go and noted.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import grpc

from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import ladder_pb2 as lpb
from cardarena.v1 import tournament_pb2 as tpb
from cardarena.v1.clocks import TimeControl

from ..bots.decider import Decider, SeatContext, describe_error
from ..bots.external import MAX_AHEAD, STARTUP_S, Ahead, ExternalDecider
from ..bots.state import SeatState
from ..client import Abstain, ArenaClient, Ticket
from ..client.cancelling import CLEANUP_S, cancel_until_ended
from ..client.channel import RETRYABLE
from ..client.entropy import Contribution


@dataclass(frozen=True)
class LadderEntry:
    """How an entrant plays on a ladder: as which version of its bot."""

    version: str = ""


MakeDecider = Callable[[tpb.MatchAssigned], Decider]
"""A fresh bot for one seat of one match. It is also made once before the entrant enters, for
an empty ``MatchAssigned`` (no match): an :class:`ExternalDecider` made so says which program
to start ahead of the matches (it is never started itself)."""

NOTES_KEPT: Final = 10
ENTRY_MARGIN_S: Final = 1.0
"""Waiting for programs to start ends this long before the tournament's entry time does (its
first match then starts without the entrants that have not entered)."""


@dataclass
class EntrantReport:
    """What one entrant's run saw: its name, the matches it played, its own bot's failures
    (the server's counts are the ones that score), the answers its program wrote after their
    turns' time had run out (``late``: each dropped, never sent; the turn itself was a failure
    already), and the tournament as it ended. Each match adds its counts when it ends."""

    entrant: str = ""
    matches: int = 0
    failures: int = 0
    notes: list[str] = field(default_factory=list)
    late: int = 0
    late_notes: list[str] = field(default_factory=list)
    final: tpb.TournamentInfo | lpb.LadderInfo | None = None

    def summary(self) -> list[str]:
        """The report in lines, as ``cardarena bot connect`` ends with it."""
        late = f", {self.late} late answers dropped" if self.late else ""
        head = (
            f"entrant {self.entrant}: {self.matches} matches played,"
            f" {self.failures} failures of the bot{late}"
        )
        return [head, *(f"  {note}" for note in [*self.notes, *self.late_notes])]


async def play_entrant(
    client: ArenaClient,
    tournament_id: str,
    key: str,
    make_decider: MakeDecider,
    *,
    reconnect_for: float = 60.0,
    log: Callable[[str], None] | None = None,
    contribution: Contribution = "fresh",
    startup_s: float = STARTUP_S,
    capacity: int = 0,
    ladder: LadderEntry | None = None,
) -> EntrantReport:
    """Play as the entrant ``key`` belongs to until the tournament ends, contributing
    ``contribution`` to the tournament seed (fresh random bytes, your own 32, or none), in at
    most ``capacity`` matches at once (0: as many as the tournament runs). ``startup_s`` is
    the start-up allowance of a program (see the module). With ``ladder``, ``tournament_id``
    is a ladder's: the entrant plays as that version (and at least 1 match at once) until the
    ladder closes."""
    say = log or (lambda text: print(text, file=sys.stderr, flush=True))
    report = EntrantReport()
    playing: dict[str, asyncio.Task[None]] = {}
    ahead: Ahead | None = None
    prepared = False
    loop = asyncio.get_running_loop()
    deadline = loop.time() + reconnect_for
    pause = 0.1
    try:
        while report.final is None:
            try:
                if not prepared and ladder is None:
                    ahead = await _start_ahead(client, tournament_id, make_decider, startup_s, say)
                prepared = True
                entering: Any = (
                    client.tournaments.enter(
                        tournament_id, key, contribution=contribution, capacity=capacity
                    )
                    if ladder is None
                    else client.ladders.enter(
                        tournament_id, key, version=ladder.version, capacity=capacity or 1
                    )
                )
                async for message in entering:
                    deadline, pause = loop.time() + reconnect_for, 0.1
                    kind = message.WhichOneof("kind")
                    if kind == "entered":
                        entered = message.entered
                        report.entrant = entered.player if ladder else entered.entrant
                    elif kind == "match" and not _in_play(playing, message.match.match_id):
                        assigned = message.match
                        playing[assigned.match_id] = asyncio.create_task(
                            _play(client, assigned, make_decider, report, say, ahead, startup_s)
                        )
                    elif kind == "ended":
                        report.final = message.ended
                    elif kind == "closed":
                        report.final = message.closed
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRYABLE or loop.time() > deadline:
                    raise
                say(f"entrant {report.entrant or '?'}: {error.code().name}, reconnecting")
            if report.final is None:
                await asyncio.sleep(pause)
                pause = min(pause * 2, 2.0)
        await asyncio.gather(*playing.values(), return_exceptions=True)
    finally:
        # Until they ended: a match task whose cancellation is lost in a gRPC call would play
        # on after the entrant stopped, and after its programs started ahead were closed.
        await cancel_until_ended(playing.values(), CLEANUP_S)
        if ahead is not None:
            await ahead.close()
    return report


async def _start_ahead(
    client: ArenaClient,
    tournament_id: str,
    make_decider: MakeDecider,
    startup_s: float,
    say: Callable[[str], None],
) -> Ahead | None:
    """For a program bot: start its programs ahead of the matches (one per match the
    tournament may seat the entrant in at once, up to ``MAX_AHEAD``) and, while the entry is
    open, wait up to ``startup_s`` for them to answer ``hello``."""
    try:
        probe = make_decider(tpb.MatchAssigned())
    except Exception:  # a maker that needs a real match: no programs ahead
        return None
    if not isinstance(probe, ExternalDecider):
        return None
    info = await client.tournaments.get(tournament_id)
    left = info.planned - info.started
    keep = min(info.concurrency or 1, MAX_AHEAD, left)
    if info.status == tpb.TOURNAMENT_STATUS_ENDED or keep <= 0:
        return None
    ahead = Ahead(probe.command, stderr_path=probe.stderr_path, keep=keep, limit=left)
    ahead.fill()
    if info.entry_closed:  # its matches run already: waiting would only cost turns
        return ahead
    entry_left = (info.created_unix_ms + info.entry_ms) / 1000 - time.time() - ENTRY_MARGIN_S
    within = min(startup_s, entry_left)
    if within <= 0:
        return ahead
    warmth = await ahead.up(within)
    for failure in warmth.failures:
        say(f"entrant: a program started ahead failed: {failure}")
    if warmth.silent:
        say(
            f"entrant: {warmth.silent} of {warmth.programs} programs started ahead did not say"
            f' {{"hello": true}} within {within:g} s: entering anyway (a program of protocol 1'
            " or 2 never does; one still starting when its match begins may lose moves)"
        )
    return ahead


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
    ahead: Ahead | None = None,
    startup_s: float = STARTUP_S,
) -> None:
    decider = make_decider(assigned)
    if ahead is not None and isinstance(decider, ExternalDecider):
        ahead.hand(decider)
    context = SeatContext(
        match_id=assigned.match_id,
        game=assigned.game,
        seat=assigned.seat,
        players=assigned.players,
        names=tuple(assigned.names),
        options=codec.dict_of(assigned.options),
        lowest_wins=assigned.lowest_wins,
        decision_ms=assigned.move_ms,
        time_control=(
            TimeControl.of_message(assigned.time_control)
            if assigned.HasField("time_control")
            else TimeControl(move_ms=assigned.move_ms)
        ),
    )
    budget = assigned.move_ms / 1000 if assigned.move_ms else None
    broken: list[str] = []
    where = f"match {assigned.match_id} seat {assigned.seat}"

    def failed(what: str) -> None:
        report.failures += 1
        if len(report.notes) < NOTES_KEPT:
            report.notes.append(f"{where}: {what}")

    async def start() -> None:
        """Start the bot (its program may have been started ahead): within the start-up
        allowance, while the seat's stream runs (the server's clock runs already)."""
        try:
            async with asyncio.timeout(startup_s):
                await decider.start(context)
        except TimeoutError:
            broken.append(
                f'not ready within {startup_s:g} s of start (no {{"ready": true}}: the start-up'
                " allowance)"
            )
        except Exception as error:
            broken.append(describe_error(error))
        if broken:
            failed(f"the bot did not start: {broken[0]}")
            decider.abandon()

    starting = asyncio.create_task(start())

    async def decide(state: SeatState) -> int:
        try:
            async with asyncio.timeout(budget):
                await asyncio.shield(starting)
                if broken:
                    raise Abstain
                action = await decider.decide(state)
            codec.action_to_pb(action)  # an answer that is no action at all is not sent
            return action
        except TimeoutError:
            failed("no answer in time" if starting.done() else "the bot was still starting")
        except Abstain:
            raise
        except Exception as error:  # the bot's failure, never this loop's
            failed(describe_error(error))
        raise Abstain

    def observe(state: SeatState, event: pb.Event) -> None:
        with contextlib.suppress(Exception):
            decider.observe(event)

    ticket = Ticket(assigned.match_id, assigned.seat, assigned.token)
    state = SeatState(assigned.match_id, assigned.seat)
    try:
        state = await client.play(ticket, decide=decide, on_event=observe, judge=True)
        report.matches += 1
    except grpc.aio.AioRpcError as error:
        say(f"match {assigned.match_id}: {error.code().name}: {error.details()}")
    except TimeoutError as error:  # no progress for the client's retry_for
        say(f"match {assigned.match_id}: {error}")
    finally:
        if not starting.done():
            starting.cancel()
            decider.abandon()
        with contextlib.suppress(Exception):
            await decider.finish(state)
        if isinstance(decider, ExternalDecider) and decider.late:
            report.late += decider.late
            room = NOTES_KEPT - len(report.late_notes)
            report.late_notes.extend(f"{where}: {note}" for note in decider.late_notes[:room])
