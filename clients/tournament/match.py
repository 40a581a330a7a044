"""One tournament match against a server, from creation to result, whatever goes wrong.

Create it with its duplicate group's seed and the time control, every seat reserved for the bot
the plan puts there; start every seat's bot (programs are spawned before the seats join, so
none is still starting when the clock arms); join the seats under the bots' names; play every
seat with ``ArenaClient.play``; read the result from the server. A match that fails for any
reason other than a bot (the server went away, say) is recorded with its error and cancelled
with its creator secret, so that it does not stay running; only a refusal that every match
would meet (:class:`~.config.TournamentError`) stops the tournament.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import grpc

from cardarena.competition import MatchPlan, bot_seed
from cardarena.v1 import codec
from cardarena.v1 import service_pb2 as spb
from cardarena.v1.clocks import TimeControl

from ..bots.base import Bot
from ..bots.decider import Decider, PythonDecider, SeatContext, describe_error
from ..bots.external import ExternalDecider
from ..bots.state import SeatState
from ..client import ArenaClient, new_secret
from ..client.cancelling import gather_or_cancel, wait_within
from .botspec import BotEntry, make_python_bot
from .config import TournamentConfig, TournamentError
from .guard import GuardedSeat
from .outcomes import MatchResult


class MatchCancelled(Exception):
    """The server ended a match before its rules did: it is reported as failed."""


async def play_match(
    client: ArenaClient,
    config: TournamentConfig,
    plan: MatchPlan,
    players: int,
    lowest_wins: bool,
) -> MatchResult:
    bots = tuple(config.bots[b].name for b in plan.seats)
    outcome = MatchResult(plan, bots)
    started = time.monotonic()
    seats = [_seat(config, config.bots[b], plan, s) for s, b in enumerate(plan.seats)]
    states: list[SeatState] = []
    # Every seat is reserved for the bot the plan puts there (nobody else can take it), and
    # the runner can cancel the match if it cannot finish it.
    secrets_by_seat = {s: new_secret() for s in range(players)}
    creator = new_secret()
    info: spb.MatchInfo | None = None
    try:
        info = await _create(client, config, plan, players, secrets_by_seat, creator)
        outcome.match_id = info.match_id
        options = codec.dict_of(info.options)
        contexts = [
            SeatContext(
                match_id=info.match_id,
                game=config.game,
                seat=s,
                players=players,
                names=bots,
                options=options,
                lowest_wins=lowest_wins,
                decision_ms=round(config.decision_s * 1000),
                time_control=TimeControl.of_message(info.time_control),
            )
            for s in range(players)
        ]
        await asyncio.gather(*(seat.start(c) for seat, c in zip(seats, contexts, strict=True)))
        # No contributions: every rotation of a duplicate group must deal the group seed's cards.
        tickets = [
            await client.join(
                info.match_id,
                seat=s,
                name=bots[s],
                join_secret=secrets_by_seat[s],
                contribution=None,
            )
            for s in range(players)
        ]
        # Not a TaskGroup: a seat whose cancellation is lost would play on after another failed.
        states = await gather_or_cancel(
            client.play(t, decide=s.decide, on_event=s.observe)
            for t, s in zip(tickets, seats, strict=True)
        )
        final = await client.get_match(info.match_id)
        if final.cancelled:  # by the operator, or by expiry: no result to count
            raise MatchCancelled(f"match {info.match_id} was cancelled before its end")
        outcome.totals = tuple(codec.score_from_pb(t) for t in final.totals)
        outcome.winners = tuple(final.winners)
        outcome.last_hash = final.last_hash
    except TournamentError:
        raise
    except Exception as error:  # a failed match is reported, the rest go on
        outcome.error = _error_text(error)
        if info is not None:
            await _abandon(client, info.match_id, creator, outcome.error)
    finally:
        if not states:
            states = [SeatState(outcome.match_id, s) for s in range(players)]
        await asyncio.gather(
            *(seat.finish(state) for seat, state in zip(seats, states, strict=True))
        )
        outcome.faults = tuple(seat.faults for seat in seats)
        outcome.seconds = time.monotonic() - started
    return outcome


async def _create(
    client: ArenaClient,
    config: TournamentConfig,
    plan: MatchPlan,
    players: int,
    reserved: dict[int, str],
    creator: str,
) -> spb.MatchInfo:
    """Create the match; a refused configuration or credential ends the tournament (every
    match would fail)."""
    try:
        return await client.create_match(
            config.game,
            players=players,
            options=config.options,
            move_ms=config.move_ms,
            seed=plan.seed,
            reserved=reserved,
            creator_secret=creator,
        )
    except grpc.aio.AioRpcError as error:
        if error.code() in REFUSED_FOR_GOOD:
            raise TournamentError(f"the server refused the match: {error.details()}") from None
        raise


REFUSED_FOR_GOOD = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
    }
)


ABANDON_WITHIN_S = 5.0
"""How long the runner tries to cancel a match it could not finish: its server may be gone."""


async def _abandon(client: ArenaClient, match_id: str, creator: str, why: str) -> None:
    """Cancel a match the runner could not finish, so that it does not stay running on the
    server; it may have ended or be unreachable already, which is fine. Within
    :data:`ABANDON_WITHIN_S`, even if a cancellation of the call is lost in gRPC (where
    ``asyncio.wait_for`` would wait out the client's whole ``retry_for``)."""
    reason = " ".join(f"the runner gave up: {why}".split())[:200]
    with contextlib.suppress(grpc.aio.AioRpcError, TimeoutError):
        await wait_within(
            client.cancel_match(match_id, reason=reason, secret=creator), ABANDON_WITHIN_S
        )


def _seat(config: TournamentConfig, entry: BotEntry, plan: MatchPlan, seat: int) -> GuardedSeat:
    if entry.kind == "exec":
        log = None
        if config.bot_logs is not None:
            log = config.bot_logs / f"{entry.name}-m{plan.index:05d}-seat{seat}.log"
        decider: Decider = ExternalDecider(entry.command, stderr_path=log)
    else:
        seed = bot_seed(config.seed, plan.index, seat)

        def factory() -> Bot:
            return make_python_bot(entry, seed=seed)

        decider = PythonDecider(factory)
    return GuardedSeat(decider, timeout_s=config.decision_s)


def _error_text(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_error_text(e) for e in error.exceptions)
    if isinstance(error, grpc.aio.AioRpcError):
        return f"{error.code().name}: {error.details()}"
    return describe_error(error)
