"""``cardarena play``: one match of bots in this process, no server, with a served match's log.

For testing a bot in a second: the match is played as a server hosts it
(:func:`cardarena.clients.bots.play`), so ``--log`` writes the very log a server's
``GetMatchLog`` would return (``cardarena audit`` and ``cardarena replay`` take it), and
``--html`` the replay page. A bot that raises, answers no legal action or runs out of
``--move-ms`` is played by its default action with a ``TimedOut`` entry, as the server's
clock would, and counted as a fault. Exit codes: 0 played, 2 refused arguments.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from cardarena.engine import events as ev
from cardarena.engine import setup
from cardarena.engine.fairdeal import SEED_SIZE
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1 import service_pb2 as spb

from ..audit import audit_log, failure_text
from ..bots.decider import Decider, PythonDecider
from ..bots.external import ExternalDecider
from ..bots.local import DEFAULT_MOVE_MS, play, seat_seed
from ..logs import save_log
from ..replay import build_timeline, html_page
from ..tournament.botspec import BotEntry, make_python_bot
from .argtypes import (
    MAX_MOVE_MS,
    MAX_SEATS,
    checked_bot,
    json_object,
    output_file,
    seed_hex,
    whole,
    writing,
)


def configure(name: str, parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """play one match of bots in this process, no server: totals, the log, an HTML replay"""
    parser.epilog = (
        "bots: path/to/bot.py:Class, module:Class, a short name (random, rules, mc),"
        " NAME=SPEC[,KEY=VALUE…] for constructor arguments, or exec:NAME=COMMAND for a program"
        " speaking docs/bot-protocol.md; with fewer bots than --players they take the seats in"
        " turn"
    )
    parser.add_argument("game", metavar="GAME", help="the game, e.g. triathlon")
    parser.add_argument(
        "--bot", action="append", metavar="SPEC", required=True, help="a seat's bot (repeat)"
    )
    parser.add_argument(
        "--players",
        type=whole(1, MAX_SEATS),
        help="seats, as many as the game is played by (default: one per bot; bots take turns)",
    )
    parser.add_argument("--options", type=json_object, default={}, help="game options as JSON")
    parser.add_argument(
        "--seed",
        type=seed_hex,
        help=f"{SEED_SIZE * 2} hex digits: the match's seed, to play it again (default: random)",
    )
    parser.add_argument(
        "--move-ms",
        type=whole(1, MAX_MOVE_MS),
        default=DEFAULT_MOVE_MS,
        help=f"the time per move, 1..{MAX_MOVE_MS} (default: %(default)s): a bot over it is"
        " played by default from then on",
    )
    parser.add_argument(
        "--log", type=output_file, metavar="OUT", help="write the log (.json, else binary .pb)"
    )
    parser.add_argument(
        "--html", type=output_file, metavar="OUT.html", help="write a self-contained HTML replay"
    )
    parser.add_argument("--quiet", action="store_true", help="only the totals and the winners")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="a bot that raises or answers no legal action stops the match, with its traceback"
        " (default: its turn is played by default, as a server's clock would)",
    )

    def run(args: argparse.Namespace) -> int:
        try:
            entries = seated([checked_bot(text) for text in args.bot], args.players)
            setup(args.game, players=len(entries), options=args.options)
        except ValueError as error:  # a bot, the game, its options or its player count
            parser.error(str(error))
        names = seat_names(entries)
        seed = args.seed if args.seed is not None else secrets.token_bytes(SEED_SIZE)

        faults: dict[int, list[tuple[int, str]]] = {}

        def fault(seat: int, seq: int, why: str) -> None:
            faults.setdefault(seat, []).append((seq, why))

        resp = play(
            args.game,
            [_decider(entry, seed, s) for s, entry in enumerate(entries)],
            seed=seed,
            options=args.options,
            move_ms=args.move_ms,
            names=names,
            on_fault=fault,
            debug=args.debug,
        )
        report(resp, quiet=args.quiet, out=sys.stdout)
        sys.stdout.flush()
        for seat, seen in sorted(faults.items()):
            seq, why = seen[0]
            more = f" (and {len(seen) - 1} more turns)" if len(seen) > 1 else ""
            print(f"{names[seat]} timed out at seq {seq}{more}: {why}", file=sys.stderr)
        if args.seed is None:
            print(f"to play this match again: --seed {seed.hex()}")
        _write(resp, args.log, args.html)
        return 0

    return run


def seated(entries: list[BotEntry], players: int | None) -> list[BotEntry]:
    """The bot of each seat: the bots in turn, round the table."""
    count = players or len(entries)
    if count < len(entries):
        raise ValueError(f"{len(entries)} bots for {count} seats: give at most one bot per seat")
    return [entries[s % len(entries)] for s in range(count)]


def seat_names(entries: Sequence[BotEntry]) -> list[str]:
    """Each seat's bot's name; one that several seats share gets its seat (``rules#2``)."""
    names = [e.name for e in entries]
    return [f"{n}#{s}" if names.count(n) > 1 else n for s, n in enumerate(names)]


def _decider(entry: BotEntry, seed: bytes, seat: int) -> Decider:
    if entry.kind == "exec":
        return ExternalDecider(entry.command)
    bot_seed = seat_seed(seed, seat)
    return PythonDecider(lambda: make_python_bot(entry, seed=bot_seed))


def report(resp: spb.GetMatchLogResponse, *, quiet: bool, out: TextIO) -> None:
    """The match in a few lines: seats, each round's scores (unless ``quiet``), the result."""
    info = resp.match
    names = [s.name for s in sorted(info.seats, key=lambda s: s.seat)]

    def say(text: str) -> None:
        print(text, file=out)

    say(f"{info.game}, {info.players} players, match {info.match_id}")
    say("seats: " + ", ".join(f"{s} {n}" for s, n in enumerate(names)))
    if not quiet:
        width = max(5, *(len(n) for n in names))
        say(f"  {'round':>5} {'':10} " + " ".join(f"{n:>{width}}" for n in names))
        kind = ""
        for entry in resp.entries:
            event = codec.event_from_pb(pb.Event.FromString(entry.event))
            if isinstance(event, ev.RoundStarted):
                kind = event.kind
            elif isinstance(event, ev.RoundScored):
                scores = " ".join(f"{s!s:>{width}}" for s in event.scores)
                say(f"  {event.round + 1:>5} {kind:10} {scores}")
    totals = [codec.score_from_pb(t) for t in info.totals]
    say("totals: " + ", ".join(f"{n} {t}" for n, t in zip(names, totals, strict=True)))
    say("won by " + ", ".join(names[w] for w in info.winners))
    faulted = [(n, s.faults) for n, s in zip(names, info.seats, strict=True) if s.faults]
    if faulted:
        say(
            "played by default (time-outs, faults): "
            + ", ".join(f"{n} {k} turn{'s' if k > 1 else ''}" for n, k in faulted)
        )


def _write(resp: spb.GetMatchLogResponse, log: Path | None, page: Path | None) -> None:
    if log is None and page is None:
        return
    audit = audit_log(resp)
    verdict = "clean" if audit.ok else failure_text(audit)
    if log is not None:
        with writing(log):
            save_log(resp, log)
        print(f"wrote {log}: {len(resp.entries)} entries; audit {verdict}")
    if page is not None:
        timeline = build_timeline(resp)
        with writing(page):
            page.write_text(html_page(timeline, verdict), encoding="utf-8")
        print(f"wrote {page}: {len(timeline.steps)} steps; audit {verdict}")
