"""Events as short English, with the card codes of RULES.md (``QC``, ``10H``, ``6O``, ``JK``).

Why not the dataclass repr: an auditor's reason or a replay line is read by people, who know
cards as codes and seats by name, not as integer ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction

from cardarena.engine import card_code
from cardarena.engine import events as ev
from cardarena.engine.cards import suit_code


def cards_text(cards: Iterable[int]) -> str:
    return " ".join(card_code(c) for c in cards) or "-"


def score_text(score: int | Fraction) -> str:
    return str(score)


def scores_text(scores: Iterable[int | Fraction]) -> str:
    return " ".join(score_text(s) for s in scores)


def seat_names(names: Sequence[str], players: int) -> list[str]:
    """A display name per seat: its name if it has one, else ``seat N``."""
    return [names[s] if s < len(names) and names[s] else f"seat {s}" for s in range(players)]


def event_text(event: ev.Event, names: Sequence[str] = ()) -> str:
    """One line saying what ``event`` records; ``names`` are the seats' display names."""

    def who(seat: int) -> str:
        return names[seat] if 0 <= seat < len(names) else f"seat {seat}"

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
