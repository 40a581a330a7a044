"""How long a match can last and how far its scores can go, from its setup alone.

OpenSpiel asks for both up front (``max_game_length``, ``min_utility``, ``max_utility``) and
checks them on every simulated match, so they must be true bounds for every option, not
typical values. They are worked out per family from the rules (RULES.md), loosely where the
exact bound would need a search:

* a trick round: every card is one decision (Triathlon adds its three trump calls); a seat's
  score is at most the multiplier times every trick and every card point the round has;
* a Fan Tan round: 52 plays, and between two plays at most ``2n - 1`` passes (with voluntary
  passes, once every seat has passed in succession the next seat that can play must play), so
  fewer than ``52 * 2n`` decisions; a seat scores at most its passes plus its cards;
* Crazy Sixes: a hand ends only once every six, ace and king is down, so the totals grow by at
  least 12 a hand and the highest reaches ``target_score`` within ``ceil(n * target / 12)``
  hands; a seat scores at most the deck plus 5 a hand, and the match ends in the hand some
  total reaches the target;
* Triathlon: at most ``max_deals`` deals of 42 decisions, a deal scoring 0 to 153.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from cardarena.engine import GAMES, MatchSetup
from cardarena.engine.traits import RoundTraits, Trump


@dataclass(frozen=True)
class Bounds:
    decisions: int
    """The most actions the seats can take in one match (forced passes are not theirs)."""
    low: int
    """The lowest total a seat can end with."""
    high: int
    """The highest total a seat can end with."""


def _round(traits: RoundTraits, players: int, multiplier: int) -> Bounds:
    cards = len(traits.deck)
    if traits.scoring is None:  # a layout: Fan Tan (the Norwegian family's only one)
        decisions = 52 * 2 * players
        return Bounds(decisions, 0, multiplier * (decisions + cards))
    scoring = traits.scoring
    tricks = cards // players
    points = [p for p in scoring.card_points if p]
    high = max(scoring.per_trick, 0) * tricks + sum(p for p in points if p > 0)
    low = min(scoring.per_trick, 0) * tricks + sum(p for p in points if p < 0)
    calls = 3 if traits.trump is Trump.CHOSEN else 0
    return Bounds(cards + calls, multiplier * low, multiplier * high)


def bounds(match_setup: MatchSetup) -> Bounds:
    """The bounds of every match this setup can start."""
    spec = GAMES[match_setup.game]
    options, players = match_setup.options, match_setup.players
    if "rounds" in options:  # a fixed schedule (the Norwegian family)
        decisions = low = high = 0
        for index, entry in enumerate(options["rounds"]):
            kind = entry["type"]
            multiplier = int(entry.get("multiplier", options[kind]["multiplier"]))
            part = _round(spec.round_traits(options, players, index), players, multiplier)
            decisions += part.decisions
            low += part.low
            high += part.high
        return Bounds(decisions, low, high)
    if "target_score" in options:  # Crazy Sixes
        target = int(options["target_score"])
        deck = len(spec.round_traits(options, players, 0).deck)
        hands = ceil(players * target / 12)
        return Bounds(hands * deck, 0, target + deck + 5)
    if "max_deals" in options:  # Triathlon
        deals = int(options["max_deals"])
        return Bounds(deals * 42, 0, deals * 153)
    raise NotImplementedError(f"no bounds are known for {match_setup.game}")


def signed(totals: tuple[float, ...], *, lowest_wins: bool) -> list[float]:
    """Totals as utilities, higher being better (what OpenSpiel's and PettingZoo's learners
    maximise): negated in the games that the lowest total wins, as they are."""
    return [-t for t in totals] if lowest_wins else list(totals)
