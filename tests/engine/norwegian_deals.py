"""Hand-built deals of the Norwegian family, played through a real match: cards by their
codes, a match dealt the test's own hands, and plans played card by card.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from cardarena.engine import Match, commitment, setup
from cardarena.engine.cards import CardSet, parse_card
from cardarena.engine.events import (
    Dealt,
    Event,
    MatchStarted,
)

C, D, H, S = 0, 1, 2, 3


def cards(codes: str) -> list[int]:
    return [parse_card(c) for c in codes.split()]


# -- hand-built deals played through a real match ------------------------------------------
#
# The deals below are resolved into a match without a seed, so the cards are the test's own,
# and every seat plays its plan card by card (an illegal card would raise). Every expected
# score is worked out by hand from RULES.md in the comment beside it.


def dealt_norwegian(game: str, players: int, options: dict[str, Any]) -> Match:
    config = setup(game, players=players, options=options)
    started = MatchStarted(config.game, players, config.options, commitment(bytes(32)))
    return Match.from_start(started)


def deal_hands(match: Match, hands: Sequence[str]) -> list[Event]:
    assert match.pending == "deal"
    dealt = tuple(CardSet.parse(h) for h in hands)
    return match.resolve(Dealt(match.round_index, dealt, tuple(len(h) for h in dealt)))


def play_plans(match: Match, plans: Sequence[str]) -> None:
    """Play the round in progress, each seat its plan in order, to the round's end."""
    queues = [deque(parse_card(c) for c in plan.split()) for plan in plans]
    while match.to_act is not None:
        seat = match.to_act
        match.apply(seat, queues[seat].popleft())
    assert all(not q for q in queues), "the round ended before every seat played its plan"


# A 4-player trick deal in four roles. The leader holds every heart but QH, and 2D; "last"
# holds every club but QC, and QD; "spades" every spade; "rest" QH, QC and the diamonds but 2D
# and QD. The leader leads AH (QH, the only other heart, must fall to it), then its other
# hearts: it takes 12 tricks. Then it leads 2D: only "last" still holds a diamond, QD, and
# takes the 13th trick, 2D QS QC QD (the others kept those for the end).
LEADER = ("2H 3H 4H 5H 6H 7H 8H 9H 10H JH KH AH 2D", "AH KH JH 10H 9H 8H 7H 6H 5H 4H 3H 2H 2D")
LAST = ("2C 3C 4C 5C 6C 7C 8C 9C 10C JC KC AC QD", "2C 3C 4C 5C 6C 7C 8C 9C 10C JC KC AC QD")
SPADES = ("2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS", "2S 3S 4S 5S 6S 7S 8S 9S 10S JS KS AS QS")
REST = ("QH QC 3D 4D 5D 6D 7D 8D 9D 10D JD KD AD", "QH 3D 4D 5D 6D 7D 8D 9D 10D JD KD AD QC")


def play_twelve_and_one(match: Match, last: int) -> None:
    """Deal and play the round in progress with the roles above: the leader (the seat after
    the dealer) takes 12 tricks, seat ``last`` the 13th; the other two take none."""
    leader = (match.dealer + 1) % 4
    others = [s for s in range(4) if s not in (leader, last)]
    roles = {leader: LEADER, last: LAST, others[0]: SPADES, others[1]: REST}
    deal_hands(match, [roles[s][0] for s in range(4)])
    play_plans(match, [roles[s][1] for s in range(4)])
