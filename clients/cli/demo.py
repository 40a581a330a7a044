"""``cardarena demo``: the engine on its own, no server needed.

``demo`` plays random matches of every game and player count, prints each round's scores,
the totals and winners, and replays every log with its seed to show it verifies.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from collections.abc import Callable

from cardarena.engine import GAMES, EngineError, new_match, replay
from cardarena.engine.events import RoundScored, RoundStarted
from cardarena.engine.fairdeal import SEED_SIZE

from .argtypes import seed_hex, whole

MAX_MATCHES = 1000


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """play random matches of every game with the engine and replay them"""
    parser.add_argument(
        "--game", action="append", choices=sorted(GAMES), help="only this game (repeatable)"
    )
    parser.add_argument(
        "--matches",
        type=whole(1, MAX_MATCHES),
        default=1,
        help=f"matches per game and player count, 1..{MAX_MATCHES} (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=seed_hex, default=None, help="64 hex digits: the first match's seed"
    )
    parser.add_argument("--quiet", action="store_true", help="one line per match")
    return run_demo


def run_demo(args: argparse.Namespace) -> int:
    games = args.game or list(GAMES)
    base = args.seed if args.seed is not None else bytes(SEED_SIZE)
    failures = 0
    count = 0
    for game in games:
        for players in GAMES[game].players:
            for k in range(args.matches):
                seed = hashlib.sha256(base + f"{game}/{players}/{k}".encode()).digest()
                failures += not play_one(game, players, seed, quiet=args.quiet)
                count += 1
    verdict = "all verified" if not failures else f"{failures} FAILED"
    print(f"\n{count} matches played and replayed from their seeds: {verdict}")
    return 1 if failures else 0


def play_one(game: str, players: int, seed: bytes, *, quiet: bool) -> bool:
    rng = random.Random(seed)
    match = new_match(game, players=players, seed=seed)
    actions = 0
    while not match.over:
        seat = match.to_act
        assert seat is not None
        match.apply(seat, rng.choice(match.legal_actions()))
        actions += 1
    try:
        replay(match.log, seed=seed)
        verified = "replay verified"
    except EngineError as error:
        print(f"  replay FAILED: {error}", file=sys.stderr)
        verified = "replay FAILED"
    totals = " ".join(str(t) for t in match.totals)
    winners = ", ".join(f"seat {s}" for s in match.winners)
    print(
        f"{game} {players}p seed {seed.hex()[:12]}…: {actions} actions, totals {totals}; won by {winners}; {verified}"
    )
    if not quiet:
        kind = ""
        for event in match.log:
            if isinstance(event, RoundStarted):
                kind = event.kind
            elif isinstance(event, RoundScored):
                scores = " ".join(f"{s!s:>5}" for s in event.scores)
                print(f"    round {event.round + 1:2} {kind:8} {scores}")
    return verified == "replay verified"
