"""Every tournament setting of the command line, each a flag and the request field it sets.

Why a table: ``cardarena tournament`` (the launcher of this machine's bots) and ``cardarena
tournament create`` (a tournament for named entrants) take the same settings, and the server
accepts more of them over time. Each :class:`Setting` declares its flag (type, default,
help) and the one ``CreateTournamentRequest`` field it sets, in one place: a new setting (a
pairing design, a clock) is one more entry in :func:`settings`, for both commands, for their
TOML files (``--config``: the keys are the flags) and for the request alike.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cardarena.v1 import tournament_pb2 as tpb

from ..client import StopRule
from .argtypes import (
    MAX_CONCURRENCY,
    MAX_DEALS,
    MAX_FORFEIT_AFTER,
    MAX_MOVE_MS,
    MAX_SEATS,
    json_object,
    seed_hex,
    whole,
)

MAX_ENTRY_MS = 3_600_000
MAX_ENTRANTS = 64
MAX_NAME = 100
MAX_ADVANTAGE = 1_000_000.0
"""The server's bound on an SPRT hypothesis, points per match either way."""
SPRT_KEYS = ("a", "b", "d0", "d1", "alpha", "beta")

Put = Callable[[tpb.CreateTournamentRequest, Any], None]


@dataclass(frozen=True)
class Setting:
    """One flag and the field of ``CreateTournamentRequest`` it sets (``put(request, value)``,
    given the flag's value, its default included)."""

    flag: str
    put: Put
    options: dict[str, Any] = field(default_factory=dict)
    """``add_argument``'s keyword arguments: type, default, metavar, help."""

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")


def settings(who: str) -> list[Setting]:
    """Every setting, its help in the words of ``who`` enters: ``"bot"`` for the launcher,
    ``"entrant"`` for ``create``."""
    return [
        Setting(
            "--game",
            _put_field("game"),
            {"help": "the game, e.g. hexathlon (cardarena games lists them)"},
        ),
        Setting(
            "--players",
            _put_field("players"),
            {
                "type": whole(1, MAX_SEATS, zero=f"one per {who}"),
                "default": 0,
                "help": f"seats per match, as many as the game is played by (default: one per"
                f" {who})",
            },
        ),
        Setting(
            "--options",
            _put_options,
            {"type": json_object, "default": {}, "help": "game options as JSON"},
        ),
        Setting(
            "--deals",
            _put_field("deals"),
            {
                "type": whole(1, MAX_DEALS),
                "default": 2,
                "help": f"deal seeds, each in every rotation, 1..{MAX_DEALS} (default:"
                " %(default)s)",
            },
        ),
        Setting(
            "--concurrency",
            _put_field("concurrency"),
            {
                "type": whole(1, MAX_CONCURRENCY),
                "default": 4,
                "help": f"matches played at once, 1..{MAX_CONCURRENCY} (default: %(default)s)",
            },
        ),
        Setting(
            "--pairing",
            _put_pairing,
            {
                "choices": list(PAIRINGS),
                "default": "every",
                "help": f"who sits down together: every (every lineup of {who}s, each deal),"
                " balanced (each deal a round in which every"
                f" {who} plays as many groups as the seats: linear in the {who}s) or gauntlet"
                f" (the first --candidates {who}s against the others; docs/tournaments.md,"
                ' "Pairings"; default: %(default)s)',
            },
        ),
        Setting(
            "--candidates",
            _put_candidates,
            {
                "type": whole(1, MAX_ENTRANTS, zero="none: not a gauntlet"),
                "default": 0,
                "metavar": "N",
                "help": f"a gauntlet's candidates: the first N {who}s, in the order given",
            },
        ),
        Setting(
            "--move-ms",
            _put_clock("move_ms"),
            {
                "type": whole(1, MAX_MOVE_MS, zero="no per-move clock: a bank or round budget"),
                "default": 10_000,
                "help": f"the time per move, 1..{MAX_MOVE_MS} (default: %(default)s): on expiry"
                " the server plays the seat's default action and counts a fault; 0: none (give"
                " --bank-ms or --round-ms instead)",
            },
        ),
        Setting(
            "--bank-ms",
            _put_clock("bank_ms"),
            {
                "type": whole(1, MAX_MOVE_MS, zero="no bank"),
                "default": 0,
                "metavar": "MS",
                "help": "each seat's bank for the whole match, as in chess: a turn lasts at most"
                " what is left, and takes what it uses (0: none, the default)",
            },
        ),
        Setting(
            "--increment-ms",
            _put_clock("increment_ms"),
            {
                "type": whole(1, MAX_MOVE_MS, zero="no increment"),
                "default": 0,
                "metavar": "MS",
                "help": "added to a seat's bank after each of its actions in time (0: none)",
            },
        ),
        Setting(
            "--round-ms",
            _put_clock("round_ms"),
            {
                "type": whole(1, MAX_MOVE_MS, zero="no round budget"),
                "default": 0,
                "metavar": "MS",
                "help": "each seat's budget per round, renewed at every round's start (0: none)",
            },
        ),
        Setting(
            "--forfeit-after",
            _put_forfeit_after,
            {
                "type": whole(1, MAX_FORFEIT_AFTER, zero="never"),
                "default": 3,
                "help": f"faults in a match after which a seat forfeits it, 1..{MAX_FORFEIT_AFTER}"
                " (0: never, the fallback policy; default: %(default)s)",
            },
        ),
        Setting(
            "--seed",
            _put_field("seed", b""),
            {
                "type": seed_hex,
                "default": None,
                "help": "64 hex digits: the tournament's seed, to replay one (default: the server"
                " draws a secret one and shows it when the tournament ends)",
            },
        ),
        Setting(
            "--entry-ms",
            _put_field("entry_ms"),
            {
                "type": whole(1, MAX_ENTRY_MS, zero="the server's default, 60 s"),
                "default": 0,
                "metavar": "MS",
                "help": f"the longest the first match waits for every {who} to enter,"
                f" 1..{MAX_ENTRY_MS} ms from the creation (0: the server's default, 60 s); it"
                " starts as soon as all have (default: %(default)s)",
            },
        ),
        Setting(
            "--sprt",
            _put_sprt,
            {
                "type": sprt_rule,
                "default": None,
                "metavar": "RULE",
                "help": "a=A,b=B,d1=D1[,d0=D0,alpha=P,beta=P]: stop early when a sequential"
                f" test decides between H0 (the {who} A's mean advantage over B is D0 points"
                " per match, default 0) and H1 (it is D1 > D0), with error rates alpha and"
                " beta (default 0.05 each); or the same as a JSON object",
            },
        ),
        Setting(
            "--name",
            _put_field("name"),
            {
                "type": tournament_name,
                "default": "",
                "help": f"the tournament's name, for people (at most {MAX_NAME} characters)",
            },
        ),
    ]


def add_settings(parser: argparse.ArgumentParser, who: str) -> None:
    for setting in settings(who):
        parser.add_argument(setting.flag, **setting.options)


def request_of(args: argparse.Namespace, who: str) -> tpb.CreateTournamentRequest:
    """The request the settings in ``args`` make, without entrants or secrets."""
    request = tpb.CreateTournamentRequest()
    for setting in settings(who):
        setting.put(request, getattr(args, setting.dest))
    return request


def check_settings(args: argparse.Namespace, names: Sequence[str], who: str) -> None:
    """``ValueError`` for settings that cannot make a tournament, before anything is created:
    no clock, a gauntlet's candidates (and only a gauntlet's), the stop rule's entrants."""
    if not (args.move_ms or args.bank_ms or args.round_ms):
        raise ValueError(
            f"a tournament needs a clock, so that a {who} who is away cannot stall it:"
            " --move-ms, --bank-ms or --round-ms"
        )
    if args.increment_ms and not args.bank_ms:
        raise ValueError("--increment-ms adds to a bank: give --bank-ms too")
    if args.pairing == "gauntlet" and not 1 <= args.candidates < len(names):
        raise ValueError(
            f"--pairing gauntlet needs --candidates N, 1..{len(names) - 1}: the first N {who}s"
            f" play the others"
        )
    if args.pairing != "gauntlet" and args.candidates:
        raise ValueError("--candidates is a gauntlet's: give --pairing gauntlet too")
    check_stop_rule(args.sprt, names, who)


def check_stop_rule(rule: StopRule | None, names: Sequence[str], who: str) -> None:
    """``ValueError`` unless both entrants of the stop rule enter, so that a typo is refused
    before anything is created."""
    if rule is None:
        return
    for side in (rule.a, rule.b):
        if side not in names:
            raise ValueError(
                f"--sprt: {side!r} is not one of the {who}s ({', '.join(map(repr, names))})"
            )


def _put_field(name: str, absent: Any = None) -> Put:
    def put(request: tpb.CreateTournamentRequest, value: Any) -> None:
        if value is None:
            value = absent
        if value is not None:
            setattr(request, name, value)

    return put


def _put_options(request: tpb.CreateTournamentRequest, value: dict[str, Any]) -> None:
    request.options.update(value)


def _put_clock(name: str) -> Put:
    def put(request: tpb.CreateTournamentRequest, value: int) -> None:
        setattr(request.time_control, name, value)

    return put


PAIRINGS = {
    "every": tpb.PAIRING_KIND_EVERY_LINEUP,
    "balanced": tpb.PAIRING_KIND_BALANCED,
    "gauntlet": tpb.PAIRING_KIND_GAUNTLET,
}
"""The pairing designs by the names the flag takes."""


def _put_pairing(request: tpb.CreateTournamentRequest, value: str) -> None:
    request.pairings.kind = PAIRINGS[value]


def _put_candidates(request: tpb.CreateTournamentRequest, value: int) -> None:
    request.pairings.candidates = value


def _put_forfeit_after(request: tpb.CreateTournamentRequest, value: int) -> None:
    if value:
        request.fault_policy.forfeit_after = value
    else:
        request.fault_policy.fallback = True


def _put_sprt(request: tpb.CreateTournamentRequest, rule: StopRule | None) -> None:
    if rule is not None:
        request.stop.CopyFrom(
            tpb.SprtRule(
                a=rule.a, b=rule.b, d0=rule.d0, d1=rule.d1, alpha=rule.alpha, beta=rule.beta
            )
        )


def tournament_name(text: str) -> str:
    if len(text) > MAX_NAME or not text.isprintable():
        raise argparse.ArgumentTypeError(f"a name is at most {MAX_NAME} printable characters")
    return text


def sprt_rule(text: str) -> StopRule:
    """``--sprt``'s type: ``a=A,b=B,d1=D1[,d0=D0][,alpha=P][,beta=P]``, or the same as a JSON
    object (for names with a comma, and for a TOML table), checked as the server would."""
    fields = _sprt_fields(text)
    unknown = sorted(set(fields) - set(SPRT_KEYS))
    if unknown:
        raise argparse.ArgumentTypeError(
            f"the keys are {', '.join(SPRT_KEYS)}; not {', '.join(unknown)}"
        )
    a, b = str(fields.get("a", "")), str(fields.get("b", ""))
    if not a or not b or "d1" not in fields:
        raise argparse.ArgumentTypeError("give a=ENTRANT, b=ENTRANT and d1=POINTS")
    if a == b:
        raise argparse.ArgumentTypeError(f"a and b are the same, {a!r}")
    d0, d1 = _number(fields, "d0", 0.0), _number(fields, "d1", 0.0)
    if not (abs(d0) <= MAX_ADVANTAGE and abs(d1) <= MAX_ADVANTAGE):
        raise argparse.ArgumentTypeError(f"d0 and d1 are within ±{MAX_ADVANTAGE:g}")
    if not d0 < d1:
        raise argparse.ArgumentTypeError(f"d1 ({d1:g}) must be greater than d0 ({d0:g})")
    alpha, beta = _number(fields, "alpha", 0.05), _number(fields, "beta", 0.05)
    for name, rate in (("alpha", alpha), ("beta", beta)):
        if not 0 < rate < 0.5:
            raise argparse.ArgumentTypeError(f"{name} is in (0, 0.5), got {rate:g}")
    return StopRule(a=a, b=b, d0=d0, d1=d1, alpha=alpha, beta=beta)


def _sprt_fields(text: str) -> dict[str, Any]:
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"not JSON: {error}") from None
        if not isinstance(value, dict):
            raise argparse.ArgumentTypeError("expected a JSON object")
        return value
    fields: dict[str, Any] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(
                f"expected a=A,b=B,d1=D1[,d0=D0,alpha=P,beta=P], got {text!r}"
            )
        fields[key.strip()] = value.strip()
    return fields


def _number(fields: dict[str, Any], key: str, default: float) -> float:
    value = fields.get(key, default)
    if isinstance(value, bool):
        raise argparse.ArgumentTypeError(f"{key} is a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{key} is a number, got {value!r}") from None
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"{key} is a finite number, got {value!r}")
    return number
