"""The tournament runner: plays a schedule of matches against a server, many at once.

Why asyncio and one channel: a match is mostly waiting (for the server, for a bot's answer),
so ``concurrency`` matches share one event loop and one HTTP/2 connection; CPU-bound Python
bots think in threads and external programs in their own processes, so no bot's thinking
stalls another match's stream.

Each match is :func:`~.match.play_match`; a match that fails for any reason other than a bot
is recorded with its error and the tournament goes on. :func:`play_tournament` also ranks the
results by the rules of :mod:`cardarena.competition` (standings and ratings, :mod:`.ranking`),
as the command and the main job print them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

import grpc

from cardarena.competition import MatchPlan, mixed_seed, schedule

from ..client import ArenaClient
from ..client.cancelling import gather_or_cancel
from .config import TournamentConfig, TournamentError
from .match import play_match
from .outcomes import MatchResult, TournamentResult
from .progress import Progress
from .ranking import BotStanding, rank

E = TypeVar("E", bound=BaseException)


async def run_tournament(
    config: TournamentConfig, *, progress: Callable[[int], Progress] | None = None
) -> TournamentResult:
    """Play every planned match; return the results in schedule order."""
    names = [b.name for b in config.bots]
    started = time.monotonic()
    client = ArenaClient(config.address, operator_token=config.operator_token)
    async with client:
        players, lowest_wins = await _game_setup(client, config)
        # No entrant contributes to the seed here, so the mixed seed is the tournament's own.
        mixed = mixed_seed(config.seed, [None] * len(names))
        plans = schedule(mixed, deals=config.deals, entrants=len(names), players=players)
        result = TournamentResult(config.game, players, lowest_wins, names)
        bar = progress(len(plans)) if progress is not None else None
        if bar is not None:
            bar.draw(force=True)
        queue: asyncio.Queue[MatchPlan] = asyncio.Queue()
        for plan in plans:
            queue.put_nowait(plan)
        done: dict[int, MatchResult] = {}

        async def worker() -> None:
            while not queue.empty():
                plan = queue.get_nowait()
                outcome = await play_match(client, config, plan, players, lowest_wins)
                done[plan.index] = outcome
                if bar is not None:
                    bar.advance(faults=outcome.fault_count, failed=not outcome.ok)

        try:
            # Not a TaskGroup: a worker whose cancellation is lost in a gRPC call would play
            # the rest of the schedule after another met a TournamentError.
            await gather_or_cancel(worker() for _ in range(max(1, config.concurrency)))
        except ExceptionGroup as group:
            # Not ``except*``: on CPython before 3.11.4 (Debian 12 ships 3.11.2) a ``raise``
            # inside ``except*`` comes out wrapped in a new ExceptionGroup.
            raise (first_of(group, TournamentError) or group) from None
        finally:
            if bar is not None:
                bar.close()
        result.matches = [done[p.index] for p in plans]
    result.seconds = time.monotonic() - started
    return result


def first_of(group: BaseExceptionGroup[BaseException], kind: type[E]) -> E | None:
    """The first exception of ``kind`` in ``group``, however deeply nested, or None."""
    for error in group.exceptions:
        found = first_of(error, kind) if isinstance(error, BaseExceptionGroup) else error
        if isinstance(found, kind):
            return found
    return None


async def _game_setup(client: ArenaClient, config: TournamentConfig) -> tuple[int, bool]:
    try:
        games = {g.name: g for g in await client.list_games()}
    except grpc.aio.AioRpcError as error:
        raise TournamentError(
            f"cannot reach the server at {config.address}: {error.details()}"
        ) from None
    game = games.get(config.game)
    if game is None:
        raise TournamentError(f"unknown game {config.game!r}; the server has {', '.join(games)}")
    allowed = list(game.players)
    players = config.players
    if players == 0:
        players = len(config.bots) if len(config.bots) in allowed else game.default_players
    if players not in allowed:
        raise TournamentError(
            f"{config.game} is for {', '.join(map(str, allowed))} players, not {players}"
        )
    return players, game.lowest_wins


async def play_tournament(
    config: TournamentConfig, *, progress: bool = True, label: str = ""
) -> tuple[TournamentResult, list[BotStanding]]:
    """Run the tournament and rank it: the library entry point (the main job uses it too)."""

    def bar(total: int) -> Progress:
        return Progress(total, label=label or config.game, enabled=None if progress else False)

    result = await run_tournament(config, progress=bar)
    return result, rank(result)
