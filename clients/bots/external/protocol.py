"""The messages of the external-bot line protocol (``docs/bot-protocol.md``), as JSON values.

Why text codes everywhere: a bot in any language should need no table of card ids. Cards are
RULES.md codes (``QC``, ``10H``, ``6O``, ``JK``), suits their letters, actions the text of
``cardarena.engine.describe`` (``QC``, ``pass``, ``exclude:S``, ``trump:H``), and the answer
is one of the ``legal`` strings it was offered. Scores are JSON numbers (a Crazy Sixes share
such as 35/2 becomes 17.5; the exact value is in the match log).

Why each turn has an ``id`` of its own (protocol 2): a turn the runner gave up on (no answer in
time) is still answered later by a slow program, and that late line would otherwise be read as
the answer to the next turn. The turn's ``seq`` would not do: it says where the match stands,
and a seat may be asked twice at one ``seq`` (after a refused action). The ids count the
program's turns from 1, and an answer echoes its turn's; an answer without one is taken for the
oldest turn not yet answered (a program writes exactly one answer per turn, in order), which is
what protocol 1 meant.

Why a ``hello`` before ``start`` (protocol 3): a program's start-up (an interpreter, imports, a
model to load) is not a move, but in a hosted tournament the server's clock runs from the moment
a match begins, before anyone could have started a program for it. So a program is started
ahead of its match and told ``hello``; it answers ``{"hello": true}`` once it has loaded what
it needs, and only then is it entered for matches. Programs of protocols 1 and 2 ignore
``hello`` (as they were told to ignore message types they do not know) and still answer
``start``; a ``start`` is answered ``{"ready": true}`` in every version.

Why the clocks (a bank per match, a budget per round: docs/protocol.md, "Clocks") came with no
new version: the version says what a program must *write*, and only ``id`` (2) and ``hello``
(3) changed that. The clocks only add fields to messages a program already reads (``start``'s
and ``match_started``'s ``time_control``, a turn's ``bank_ms`` and ``round_ms``), which every
version was told to ignore when it does not know them; a program that uses them finds them
there (``null`` where the clock is off) and needs no version to tell it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Final

from cardarena.engine import CardSet, describe
from cardarena.engine import events as ev
from cardarena.engine.cards import card_code, cards_of, suit_code
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb
from cardarena.v1.clocks import TimeControl

from ...fields import fields_of
from ..decider import SeatContext
from ..state import SeatState

PROTOCOL_VERSION: Final = 3

_CARD_FIELDS: Final = frozenset({"card"})
_CARDS_FIELDS: Final = frozenset({"cards"})
_SUIT_FIELDS: Final = frozenset({"suit", "trump"})
_SCORE_FIELDS: Final = frozenset({"scores", "totals"})


def hello_message() -> dict[str, Any]:
    """The first message to a program, as soon as it is started, before its match is known."""
    return {"type": "hello", "protocol": PROTOCOL_VERSION}


def is_hello(line: bytes) -> bool:
    """Whether a program's line is the answer to ``hello``: ``{"hello": true}``."""
    return _object(line).get("hello") is True


def is_ready(line: bytes) -> bool:
    """Whether a program's line is the answer to ``start``: ``{"ready": true}``."""
    return _object(line).get("ready") is True


def start_message(context: SeatContext) -> dict[str, Any]:
    return {
        "type": "start",
        "protocol": PROTOCOL_VERSION,
        "match": context.match_id,
        "game": context.game,
        "seat": context.seat,
        "players": context.players,
        "names": list(context.names),
        "options": dict(context.options),
        "lowest_wins": context.lowest_wins,
        "decision_ms": context.decision_ms,
        "time_control": None if context.time_control is None else clocks_json(context.time_control),
    }


def clocks_json(control: TimeControl) -> dict[str, int]:
    """A match's time control: ``move_ms``, ``bank_ms``, ``increment_ms``, ``round_ms`` (0:
    that clock is off)."""
    return dataclasses.asdict(control)


def entry_message(entry: pb.Event) -> dict[str, Any] | None:
    """A log entry as the seat's stream carried it, as an ``event`` line (``None``: a kind
    the line protocol does not show). ``match_started`` has the match's ``time_control``."""
    kind = entry.WhichOneof("kind")
    if kind == "timed_out":
        return timed_out_message(entry.seq, entry.timed_out.seat)
    decoded = codec.event_from_pb(entry)
    if decoded is None:
        return None
    out = event_message(entry.seq, decoded)
    if kind == "match_started":
        out["time_control"] = clocks_json(TimeControl.of_message(entry.match_started))
    return out


def event_message(seq: int, event: ev.Event) -> dict[str, Any]:
    """``{"type": "event", "seq": 12, "event": "card_played", "seat": 1, "card": "QC"}``."""
    out: dict[str, Any] = {"type": "event", "seq": seq, "event": snake(type(event).__name__)}
    for item in dataclasses.fields(event):
        out[item.name] = _field(item.name, getattr(event, item.name))
    return out


def timed_out_message(seq: int, seat: int) -> dict[str, Any]:
    """The server played the default action for ``seat`` because its clock ran out."""
    return {"type": "event", "seq": seq, "event": "timed_out", "seat": seat}


def turn_message(state: SeatState, now_unix_ms: int, *, prompt: int) -> dict[str, Any]:
    """The seat is to act; ``prompt`` is the turn's ``id``, which its answer echoes. With a
    server clock on the move, ``deadline_unix_ms`` is when it runs out and ``remaining_ms`` how
    much of it was left when the message was written (by the runner's clock, so a bot need not
    trust its own against the server's); without one, 0 and ``None``, and ``start``'s
    ``decision_ms`` is all there is. ``bank_ms`` and ``round_ms`` are what the seat has left
    of its bank and of its round budget as the turn starts (``None``: that clock is off)."""
    deadline = state.deadline_unix_ms
    return {
        "type": "turn",
        "id": prompt,
        "seq": state.seq,
        "legal": [describe(a) for a in state.legal],
        "deadline_unix_ms": deadline,
        "remaining_ms": max(0, deadline - now_unix_ms) if deadline else None,
        "bank_ms": state.bank_ms[state.seat] if state.bank_ms else None,
        "round_ms": state.round_ms[state.seat] if state.round_ms else None,
        "state": state_json(state),
    }


def end_message(state: SeatState) -> dict[str, Any]:
    return {
        "type": "end",
        "totals": [number(t) for t in state.totals],
        "winners": list(state.winners),
        "won": state.seat in state.winners,
    }


def state_json(state: SeatState) -> dict[str, Any]:
    """What the seat knows, folded from its events (a convenience: the events say it all)."""
    return {
        **fields_of(state, "seat", "round", "kind", "dealer"),
        "trump": suit_code(state.trump) if state.trump is not None else None,
        "hand": codes(state.hand),
        "hand_sizes": list(state.hand_sizes),
        "trick_leader": state.trick_leader,
        "trick": [{"seat": seat, "card": card_code(card)} for seat, card in state.trick],
        "tricks_won": list(state.tricks_won),
        "table": codes(state.table),
        "passes": list(state.passes),
        "played": [codes(m) for m in state.played],
        "dead": [codes(m) for m in state.dead],
        "excluded_suits": [suit_code(s) for s in state.excluded_suits],
        "totals": [number(t) for t in state.totals],
    }


def answer_id(line: bytes) -> int | None:
    """The turn ``id`` a program's answer echoes, or ``None`` if it carries none (no ``"id"``,
    ``null``, or not a JSON object at all: such a line is the answer to the oldest turn not yet
    answered). ``ValueError`` if it carries one that no turn can have (not a positive integer).
    """
    try:
        answer = json.loads(line)
    except ValueError:
        return None
    echoed = answer.get("id") if isinstance(answer, dict) else None
    if echoed is None:
        return None
    if isinstance(echoed, bool) or not isinstance(echoed, int) or echoed < 1:
        raise ValueError(f"the answer's id {echoed!r} is not a turn's id (a number from 1)")
    return echoed


def parse_answer(line: bytes, legal: Sequence[int]) -> int:
    """The action a program's answer names; ``ValueError`` says what is wrong with it."""
    try:
        answer = json.loads(line)
    except ValueError:
        raise ValueError(f"not a JSON line: {_clip(line)}") from None
    if not isinstance(answer, dict) or not isinstance(answer.get("action"), str):
        raise ValueError(f'expected {{"id": N, "action": "<one of legal>"}}, got {_clip(line)}')
    by_text = {describe(a).upper(): a for a in legal}
    chosen = by_text.get(answer["action"].strip().upper())
    if chosen is None:
        raise ValueError(f"{answer['action']!r} is not one of the legal actions")
    return chosen


def codes(mask: int) -> list[str]:
    return [card_code(c) for c in cards_of(mask)]


def number(score: int | Fraction) -> int | float:
    if isinstance(score, Fraction):
        return int(score) if score.denominator == 1 else float(score)
    return score


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _field(name: str, value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if name in _CARD_FIELDS:
        return card_code(value)
    if name in _CARDS_FIELDS:
        return codes(value.mask) if isinstance(value, CardSet) else [card_code(c) for c in value]
    if name == "hands":
        return [None if hand is None else codes(hand.mask) for hand in value]
    if name in _SUIT_FIELDS:
        return suit_code(value)
    if name in _SCORE_FIELDS:
        return [number(s) for s in value]
    if isinstance(value, tuple):
        return [_field("", v) for v in value]
    return value


def _object(line: bytes) -> dict[str, Any]:
    """The JSON object on a line; an empty one if the line holds none."""
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _clip(line: bytes, limit: int = 80) -> str:
    text = line.decode("utf-8", "replace").strip()
    return repr(text if len(text) <= limit else text[:limit] + "…")
