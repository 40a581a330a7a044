"""What a house seat is: its bot, its name, its token, and the checks a request's ask meets.

Why a house seat's token derives from the match's seed: the server must be able to act for
the seat again after a restart (or on the replica that takes the match over) without keeping
a credential anywhere. ``HMAC-SHA256(seed, match, seat, bot)`` is secret exactly as long as the
seed, which the server draws and keeps to itself until the match has ended (then it is
revealed, and a seat's token can no longer do anything). So a match with house seats may not
have a chosen seed: its chooser could compute the tokens. The bot is part of the seat's name
("rules (house)") and of the token, so the name cannot be changed without the token noticing:
after a restart a seat is the house's exactly when the token its name derives is the token
its join stored (:func:`house_seat_of`), and nothing else need be kept.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from cardarena.engine import OptionError, get_game
from cardarena.v1 import service_pb2 as spb

from ..errors import BadRequest, HouseBotsOff
from ..hosting import HostedMatch, token_hash

BOTS: Final = ("random", "rules", "mc")
"""The reference bots a house seat may be (``cardarena.clients.bots.REFERENCE``'s names)."""
MC_BUDGET_MS: Final = 50
"""An "mc" seat's thinking time per decision when the request names none (the bot's own)."""
MAX_MC_BUDGET_MS: Final = 200
"""The most an "mc" seat may think per decision: a worker plays many seats."""
NAME_SUFFIX: Final = " (house)"
_NAME = re.compile(r"(random|rules|mc)(?: (\d{1,4})ms)? \(house\)")
_DOMAIN: Final = b"cardarena-house-seat-v1"


@dataclass(frozen=True)
class HouseBot:
    """A house seat's bot: a reference bot's name, and an "mc" seat's budget."""

    kind: str
    budget_ms: int = 0

    @property
    def name(self) -> str:
        """The seat's name, shown to everyone: ``rules (house)``, ``mc 50ms (house)``."""
        budget = f" {self.budget_ms}ms" if self.kind == "mc" else ""
        return f"{self.kind}{budget}{NAME_SUFFIX}"

    def token(self, seed: bytes, match_id: str, seat: int) -> str:
        """The seat's token (43 URL-safe characters), from the match's secret seed."""
        message = b"\0".join((_DOMAIN, match_id.encode(), str(seat).encode(), self.name.encode()))
        digest = hmac.new(seed, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def order(self, match_id: str, seat: int, token: str) -> dict[str, object]:
        """What a worker is told to play this seat with (the token travels only on its pipe)."""
        return {
            "match": match_id,
            "seat": seat,
            "token": token,
            "bot": self.kind,
            "budget_ms": self.budget_ms,
        }


def bot_of_name(name: str) -> HouseBot | None:
    """The bot a house seat's name names; ``None`` for any other name."""
    found = _NAME.fullmatch(name)
    if found is None:
        return None
    kind, budget = found.group(1), found.group(2)
    if (kind == "mc") != (budget is not None):
        return None
    return HouseBot(kind, int(budget) if budget else 0)


def house_seat_of(hosted: HostedMatch, seat: int) -> HouseBot | None:
    """The bot of ``seat`` if it is a house seat (its stored token is the one its name and the
    match's seed derive; constant time), else ``None``."""
    taken = hosted.seats[seat]
    bot = bot_of_name(taken.name) if taken.token_hash is not None else None
    if bot is None or taken.token_hash is None:
        return None
    if json.loads(hosted.record.config).get("seed") is not None:
        return None  # a chosen seed: its chooser could have made the token
    digest = token_hash(bot.token(hosted.record.seed, hosted.match_id, seat))
    return bot if hmac.compare_digest(digest, taken.token_hash) else None


def house_seats(
    request: spb.CreateMatchRequest, reserved: Sequence[int], *, offered: bool
) -> dict[int, HouseBot]:
    """The house seats a CreateMatch asks for, checked (nothing asked: none). Raises
    :class:`HouseBotsOff` on a server that offers none, ``BadRequest`` naming the field."""
    if not request.house_seats:
        return {}
    if not offered:
        raise HouseBotsOff(
            "house_seats: this server offers no house bots (its operator turns them on with"
            " serve --house-bots N); seat your own bots instead"
        )
    if request.seed:
        raise BadRequest(
            "house_seats: not with a chosen seed (a house seat's token derives from the seed"
            " the server draws)"
        )
    players = _players(request)
    chosen: dict[int, HouseBot] = {}
    for i, asked in enumerate(request.house_seats):
        where = f"house_seats[{i}]"
        if players is not None and asked.seat >= players:
            raise BadRequest(f"{where}.seat: seat {asked.seat} does not exist (0..{players - 1})")
        if asked.seat in chosen:
            raise BadRequest(f"{where}.seat: seat {asked.seat} is a house seat twice")
        if asked.seat in reserved:
            raise BadRequest(f"{where}.seat: seat {asked.seat} is reserved for a player")
        chosen[asked.seat] = _bot(where, asked, request.time_control.move_ms)
    if players is not None and len(chosen) >= players:
        raise BadRequest(
            "house_seats: leave at least one seat for a player (a match of house bots alone"
            " is a tournament's business)"
        )
    return chosen


def _bot(where: str, asked: spb.HouseSeat, move_ms: int) -> HouseBot:
    if asked.bot not in BOTS:
        raise BadRequest(f"{where}.bot: one of {', '.join(BOTS)}, got {asked.bot[:40]!r}")
    if asked.bot != "mc":
        if asked.budget_ms:
            raise BadRequest(f"{where}.budget_ms: only an mc seat has a budget")
        return HouseBot(asked.bot)
    budget = asked.budget_ms or MC_BUDGET_MS
    if budget > MAX_MC_BUDGET_MS:
        raise BadRequest(
            f"{where}.budget_ms: 1..{MAX_MC_BUDGET_MS} milliseconds (0: {MC_BUDGET_MS}),"
            f" got {budget}"
        )
    if move_ms and budget * 2 > move_ms:
        raise BadRequest(
            f"{where}.budget_ms: an mc seat thinks {budget} ms a decision, more than half the"
            f" move clock ({move_ms} ms): a smaller budget, or a longer clock"
        )
    return HouseBot("mc", budget)


def _players(request: spb.CreateMatchRequest) -> int | None:
    """The match's seats as the request asks, or ``None`` if it names no game or count the
    server hosts (creating refuses that with its own words)."""
    try:
        game = get_game(request.game)
    except OptionError:
        return None
    players = request.players or game.default_players
    return players if players in game.players else None


def offer(seats: int, idle_seconds: float) -> spb.HouseBots:
    """What ListGames says of the house bots of a server that plays up to ``seats``."""
    return spb.HouseBots(
        bots=list(BOTS),
        max_seats=seats,
        max_budget_ms=MAX_MC_BUDGET_MS,
        idle_seconds=round(idle_seconds),
    )
