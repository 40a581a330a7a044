"""Events as short English, with the card codes of RULES.md (``QC``, ``10H``, ``6O``, ``JK``).

Why not the dataclass repr: an auditor's reason or a replay line is read by people, who know
cards as codes and seats by name, not as integer ids. :func:`event_text` says what an engine
event records; :func:`server_event_text` the server's own time-outs, faults and forfeits.
Scores have a form for programs too (:func:`totals_json`), which every JSON output shares.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

from cardarena.engine import card_code, describe
from cardarena.engine import events as ev
from cardarena.engine.cards import suit_code
from cardarena.v1 import codec
from cardarena.v1 import game_pb2 as pb


def cards_text(cards: Iterable[int]) -> str:
    return " ".join(card_code(c) for c in cards) or "-"


def score_text(score: int | Fraction) -> str:
    return str(score)


# Scores as JSON values: a number is a JSON number, and an exact score is never lost. Crazy
# Sixes shares a pool, so a total may be a fraction (7/2), for which JSON has no number:
# ``totals`` holds each total as a number (an integer when whole, else the nearest double),
# for whoever sums or sorts; ``totals_exact`` each exactly (the same integer when whole, else
# the text "p/q", which ``fractions.Fraction`` reads), for whoever recomputes. Every JSON
# output of the clients writes totals so (docs/log-files.md, "Numbers in JSON").


def score_number(score: int | Fraction) -> int | float:
    """A score as a JSON number: an ``int`` when whole, else the nearest ``float``."""
    if isinstance(score, Fraction):
        return score.numerator if score.denominator == 1 else float(score)
    return score


def score_exact(score: int | Fraction) -> int | str:
    """A score exactly: an ``int`` when whole, else ``"p/q"`` in lowest terms."""
    if isinstance(score, Fraction):
        return score.numerator if score.denominator == 1 else str(score)
    return score


def totals_json(totals: Iterable[int | Fraction]) -> dict[str, list[Any]]:
    """``totals`` (numbers) and ``totals_exact`` (exact) of a match's totals, for a JSON object."""
    scores = list(totals)
    return {
        "totals": [score_number(s) for s in scores],
        "totals_exact": [score_exact(s) for s in scores],
    }


def scores_text(scores: Iterable[int | Fraction]) -> str:
    return " ".join(score_text(s) for s in scores)


def seat_names(names: Sequence[str], players: int) -> list[str]:
    """A display name per seat: its name if it has one, else ``seat N``."""
    return [names[s] if s < len(names) and names[s] else f"seat {s}" for s in range(players)]


def _who(names: Sequence[str], seat: int) -> str:
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"


def server_event_text(event: pb.Event, names: Sequence[str] = ()) -> str | None:
    """One line for a time-out, a fault or a forfeit (entries the server writes on its own
    account); ``None`` for any other entry. A refused action is named only where the log
    shows it (a full log, or the log of the seat that sent it)."""
    kind = event.WhichOneof("kind")
    if kind == "timed_out":
        who = _who(names, event.timed_out.seat)
        if event.timed_out.forfeited:
            return f"{who} has forfeited: the server plays its default action"
        return f"{who} timed out"
    if kind == "seat_forfeited":
        forfeit = event.seat_forfeited
        faults = "1 fault" if forfeit.faults == 1 else f"{forfeit.faults} faults"
        return f"{_who(names, forfeit.seat)} forfeits after {faults}"
    if kind != "seat_faulted":
        return None
    fault = event.seat_faulted
    who = _who(names, fault.seat)
    if fault.kind == pb.FAULT_KIND_DISCONNECTED:
        return f"{who} disconnected (a fault)"
    if fault.kind != pb.FAULT_KIND_REFUSED_ACTION:
        return f"{who} faulted"
    if not fault.HasField("action"):
        return f"{who} sent a refused action"
    try:
        sent = describe(codec.action_from_pb(fault.action))
    except (ValueError, ArithmeticError):
        sent = "a malformed action"
    return f"{who} sent a refused action ({sent})"


def event_text(event: ev.Event, names: Sequence[str] = ()) -> str:
    """One line saying what ``event`` records; ``names`` are the seats' display names."""

    def who(seat: int) -> str:
        return _who(names, seat)

    match event:
        case ev.MatchStarted():
            return f"{event.game} for {event.players} players starts"
        case ev.DealerDrawn():
            return f"{who(event.seat)} is drawn as the first dealer"
        case ev.RoundStarted():
            trump = f", trump {suit_code(event.trump)}" if event.trump is not None else ""
            times = f", scores ×{event.multiplier}" if event.multiplier != 1 else ""
            return f"round {event.round + 1} ({event.kind}) starts, dealer {who(event.dealer)}{trump}{times}"
        case ev.TrumpDrawn():
            return f"trump {suit_code(event.suit)} is drawn for round {event.round + 1}"
        case ev.Dealt():
            hands = "; ".join(
                f"{who(s)} {cards_text(h) if h is not None else f'{event.hand_sizes[s]} hidden'}"
                for s, h in enumerate(event.hands)
            )
            return f"round {event.round + 1} is dealt: {hands}"
        case ev.SuitExcluded():
            return f"{who(event.seat)} excludes {suit_code(event.suit)}"
        case ev.TrumpChosen():
            return f"{who(event.seat)} chooses trump {suit_code(event.suit)}"
        case ev.CardPlayed():
            return f"{who(event.seat)} plays {card_code(event.card)}"
        case ev.Passed():
            reason = {True: " (forced)", False: "", None: ""}[event.forced]
            return f"{who(event.seat)} passes{reason}"
        case ev.TrickWon():
            return (
                f"trick {event.trick + 1} led by {who(event.leader)}: {cards_text(event.cards)}, "
                f"won by {who(event.seat)}"
            )
        case ev.CardsDead():
            return f"{who(event.seat)} lays dead {cards_text(event.cards)}"
        case ev.FeatsEarned():
            feats = "; ".join(f"{who(s)} {'+'.join(f) or '-'}" for s, f in enumerate(event.feats))
            return f"feats of round {event.round + 1}: {feats}"
        case ev.RoundScored():
            return (
                f"round {event.round + 1} scores {scores_text(event.scores)}, "
                f"totals {scores_text(event.totals)}"
            )
        case ev.MatchEnded():
            winners = ", ".join(who(s) for s in event.winners)
            return f"the match ends: totals {scores_text(event.totals)}, won by {winners}"
