"""What the hosted-tournament tests share: bots that misbehave or play by rote, a tournament
played to its end by in-process entrants, and the command line as an entrant would run it."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import Any

from cardarena.clients.audit import audit_log
from cardarena.clients.bots import Bot, SeatState
from cardarena.clients.bots.decider import PythonDecider
from cardarena.clients.bots.random_bot import RandomBot
from cardarena.clients.client import ArenaClient, Entrant
from cardarena.clients.tournament.entrant import EntrantReport, MakeDecider, play_entrant
from cardarena.v1 import tournament_pb2 as tpb


class AlwaysCrashes:
    name = "crasher"

    def choose(self, state: SeatState) -> int:
        raise ZeroDivisionError("a bug in the bot")


class Hangs:
    name = "hanger"

    def choose(self, state: SeatState) -> int:
        time.sleep(3600)
        raise AssertionError("unreachable")


class Illegal:
    name = "illegal"

    def choose(self, state: SeatState) -> int:
        return 999


def decider(factory: Callable[[], Bot]) -> PythonDecider:
    return PythonDecider(factory)


def makers(bots: Mapping[str, Callable[[], Bot]]) -> list[MakeDecider]:
    """One decider factory per entrant: a fresh bot for every match."""

    def maker(factory: Callable[[], Bot]) -> MakeDecider:
        return lambda _assigned: decider(factory)

    return [maker(factory) for factory in bots.values()]


async def create(
    client: ArenaClient, names: Iterable[str], game: str = "triathlon", **options: Any
) -> tpb.CreateTournamentResponse:
    """Create a ``game`` tournament of entrants called ``names``, every key drawn by the
    server; ``options`` are those of ``client.tournaments.create`` (``deals`` and
    ``move_ms`` at least)."""
    return await client.tournaments.create(game, [Entrant(name) for name in names], **options)


def entrants(
    client: ArenaClient,
    created: tpb.CreateTournamentResponse,
    bots: Mapping[str, Callable[[], Bot]],
    *,
    fixed: bool = False,
    reconnect_for: float = 60.0,
) -> list[Coroutine[Any, Any, EntrantReport]]:
    """The ``created`` tournament's entrants, in the order of ``bots`` (the order they were
    created in), each playing a fresh bot of its own per match through ``client``: not yet
    started, so that a test gathers them or runs them as tasks while it does something else.
    ``fixed``: each contributes :func:`contribution` instead of fresh entropy."""
    tid = created.tournament.tournament_id
    keyed = enumerate(zip(created.entrant_keys, makers(bots), strict=True))
    return [
        play_entrant(
            client,
            tid,
            key,
            make,
            reconnect_for=reconnect_for,
            contribution=contribution(i) if fixed else "fresh",
        )
        for i, (key, make) in keyed
    ]


async def play_all(
    client: ArenaClient,
    created: tpb.CreateTournamentResponse,
    bots: Mapping[str, Callable[[], Bot]],
    *,
    fixed: bool = False,
) -> list[EntrantReport]:
    """Every entrant of ``created`` plays (:func:`entrants`) until the tournament ends."""
    return list(await asyncio.gather(*entrants(client, created, bots, fixed=fixed)))


RANDOMS: dict[str, Callable[[], Bot]] = dict.fromkeys("abc", RandomBot)
"""Three entrants, a, b and c, that play random legal moves."""


async def tournament(
    address: str,
    bots: Mapping[str, Callable[[], Bot]],
    *,
    deals: int = 1,
    move_ms: int = 300,
    game: str = "crazy_sixes",
) -> tuple[tpb.TournamentInfo, list[EntrantReport]]:
    async with ArenaClient(address) as client:
        created = await create(
            client,
            bots,
            game,
            players=3,
            deals=deals,
            move_ms=move_ms,
            concurrency=8,
            forfeit_after=3,
            seed=bytes(range(32)),
        )
        tid = created.tournament.tournament_id
        assert all(created.entrant_keys)
        reports = await asyncio.gather(*entrants(client, created, bots, fixed=True))
        final = await client.tournaments.get(tid, matches=True)
        for line in final.matches:
            report = audit_log(await client.match_log(line.match_id))
            assert report.ok, report.failure
        return final, list(reports)


def contribution(entrant: int) -> bytes:
    """A fixed contribution per entrant: a tournament played again with the same seed and
    the same bots deals the same cards (fresh ones would mix in other entropy each time)."""
    return bytes([entrant + 1]) * 32


def rank(final: tpb.TournamentInfo) -> list[str]:
    return [s.entrant for s in final.standings]


class FirstLegal:
    name = "first"

    def choose(self, state: SeatState) -> int:
        return state.legal[0]


class LastLegal:
    name = "last"

    def choose(self, state: SeatState) -> int:
        return state.legal[-1]


class Scattered:
    """Plays like a random bot, but the same move in the same position: its choice is a hash
    of its hand and the move's number, so a tournament of fixed deals plays out the same
    every time (a random bot's did not, and a test of the stop rule failed on the one run in
    twenty whose samples took every planned group to decide)."""

    name = "scattered"

    def choose(self, state: SeatState) -> int:
        mixed = (state.hand * 0x9E3779B97F4A7C15 + state.seq * 0xBF58476D1CE4E5B9) % (1 << 64)
        return state.legal[(mixed >> 17) % len(state.legal)]


DETERMINISTIC: dict[str, Callable[[], Bot]] = {
    "first-a": FirstLegal,
    "last": LastLegal,
    "first-b": FirstLegal,
}


def results(final: tpb.TournamentInfo) -> list[tuple[str, float, float, int]]:
    return [(s.entrant, round(s.mean, 9), s.wins, s.matches) for s in final.standings]


CREATOR = "c" * 40


async def until_match(stream: Any) -> Any:
    """The entrant stream's messages up to its first ``match``."""
    async for message in stream:
        yield message
        if message.WhichOneof("kind") == "match":
            return


ROOT = Path(__file__).resolve().parents[2]


CLI = [sys.executable, "-c", "from cardarena.clients.cli import main; raise SystemExit(main())"]


DETERMINISTIC_BOTS = [
    "first=tests.tournament_bots:FirstLegal",
    "last=tests.tournament_bots:LastLegal",
    "illegal=tests.tournament_bots:IllegalMover",
]


def tournament_command(address: str, *extra: str) -> list[str]:
    return [
        *CLI,
        "tournament",
        "--server",
        address,
        "--game",
        "crazy_sixes",
        "--players",
        "3",
        *(arg for bot in DETERMINISTIC_BOTS for arg in ("--bot", bot)),
        "--deals",
        "4",
        "--move-ms",
        "5000",
        "--concurrency",
        "2",
        "--seed",
        "cd" * 32,
        "--no-progress",
        *extra,
    ]


def standings(path: Path) -> list[tuple[Any, ...]]:
    report = json.loads(path.read_text())
    assert report["tournament"]["finished"] == report["tournament"]["planned"] == 12
    assert len(report["matches"]) == 12 and all(m["last_hash"] for m in report["matches"])
    return [
        (r["bot"], r["matches"], r["mean"], r["wins"], r["faults"], r["forfeits"])
        for r in report["standings"]
    ]


NODE_BOT = ROOT / "clients" / "examples" / "first_legal_bot.js"


SILENT_BOT = ROOT / "tests" / "tournament_bots.py"
