"""Crazy Sixes (seises cabrón), one hand (RULES.md §2.2 and §2.3).

A Fan-Tan-like layout with gaps allowed: an opened suit takes any card strictly below its
lowest or strictly above its highest card on the table, and every card left strictly
between them is dead at once. As in Fan Tan, the table is summarised by one ``playable`` mask.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .actions import PASS
from .cards import OROS, SPANISH_BASE, CardSet, card_code, spanish
from .events import CardPlayed, CardsDead, Event, Passed

SIX_OF_OROS = spanish(OROS, 6)
SIXES = sum(1 << spanish(OROS + s, 6) for s in range(4))
ACES_AND_KINGS = sum(1 << spanish(OROS + s, r) for s in range(4) for r in (1, 12))


def _ranks_mask(suit_index: int, low_rank: int, high_rank: int) -> int:
    """Cards of the suit with ``low_rank <= rank <= high_rank`` (empty when low > high)."""
    if low_rank > high_rank:
        return 0
    width = high_rank - low_rank + 1
    return ((1 << width) - 1) << (SPANISH_BASE + 12 * suit_index + low_rank - 1)


def suit_playable(suit_index: int, low: int, high: int) -> int:
    """Cards of suit ``suit_index`` (0..3 = O C E B) playable with ``low..high`` on the table.

    An unopened suit (``low == 0``) takes only its six; an opened one any card strictly below
    its lowest or strictly above its highest: gaps may be skipped.
    """
    if low == 0:
        return _ranks_mask(suit_index, 6, 6)
    return _ranks_mask(suit_index, 1, low - 1) | _ranks_mask(suit_index, high + 1, 12)


def dead_zone(suit_index: int, low: int, high: int) -> int:
    """Cards strictly between the suit's lowest and highest card on the table."""
    return _ranks_mask(suit_index, low + 1, high - 1) if low else 0


class SixesHand:
    """One hand of Crazy Sixes.

    ``starter`` leads; on the first hand of a match (``must_open_oros``) the holder of 6O
    starts and must play it.
    """

    __slots__ = (
        "dead",
        "deck_mask",
        "finished",
        "hands",
        "high",
        "legal",
        "low",
        "must_open_oros",
        "placed",
        "playable",
        "players",
        "pool",
        "split",
        "starter",
        "table_mask",
        "to_act",
    )

    def __init__(
        self,
        players: int,
        hands: tuple[int, ...],
        deck_mask: int,
        *,
        starter: int | None,
        split: str,
        pool: str,
    ) -> None:
        self.players = players
        self.hands = list(hands)
        self.deck_mask = deck_mask
        self.split = split
        self.pool = pool
        self.low = [0, 0, 0, 0]
        self.high = [0, 0, 0, 0]
        self.dead = [0] * players
        self.placed = [0] * players
        self.playable = SIXES
        self.table_mask = 0
        self.finished = False
        self.must_open_oros = starter is None
        if starter is None:
            starter = next(s for s in range(players) if self.hands[s] >> SIX_OF_OROS & 1)
        self.starter = starter
        self.to_act: int | None = starter
        self.legal = self._compute_legal()

    def start(self, out: list[Event]) -> None:
        """A later hand's starter without a six passes at once."""
        if not self.must_open_oros:
            assert self.to_act is not None
            self._settle(self.to_act, out)
            self.legal = self._compute_legal()

    def forget_legal(self) -> None:
        """Recompute the legal mask (after hands were replaced from outside)."""
        self.legal = self._compute_legal()

    def legal_mask(self) -> int:
        return self.legal

    def _compute_legal(self) -> int:
        if self.to_act is None:
            return 0
        if self.must_open_oros:
            return 1 << SIX_OF_OROS
        return self.hands[self.to_act] & self.playable or 1 << PASS

    def why_illegal(self, action: int) -> str:
        if self.must_open_oros:
            return "the first hand opens with 6O"
        if action == PASS:
            return "you can play, so you must"
        if action > PASS:
            return "play a card"
        assert self.to_act is not None
        if not self.hands[self.to_act] >> action & 1:
            return f"you do not hold {card_code(action)}"
        return (
            f"{card_code(action)} is not playable: a suit opens with its six, then takes only "
            "cards below its lowest or above its highest card on the table"
        )

    def normalize(self, action: int) -> int:
        return action

    def play(self, action: int, out: list[Event]) -> None:
        seat = self.to_act
        assert seat is not None
        self.must_open_oros = False
        self._place(seat, action, out)
        if self.table_mask & ACES_AND_KINGS == ACES_AND_KINGS:
            self.finished = True
            self.to_act = None
            self.legal = 0
            return
        self._settle((seat + 1) % self.players, out)
        self.legal = self._compute_legal()

    def _place(self, seat: int, card: int, out: list[Event]) -> None:
        self.hands[seat] ^= 1 << card
        self.placed[seat] += 1
        self.table_mask |= 1 << card
        out.append(CardPlayed(seat, card))
        offset = card - SPANISH_BASE
        suit, rank = offset // 12, offset % 12 + 1
        if self.low[suit] == 0:
            self.low[suit] = self.high[suit] = rank
        elif rank < self.low[suit]:
            self.low[suit] = rank
        else:
            self.high[suit] = rank
        low, high = self.low[suit], self.high[suit]
        between = dead_zone(suit, low, high) & ~self.table_mask
        for holder in range(self.players):
            newly_dead = self.hands[holder] & between
            if newly_dead:
                self.hands[holder] ^= newly_dead
                self.dead[holder] |= newly_dead
                out.append(CardsDead(holder, CardSet(newly_dead)))
        playable = suit_playable(suit, low, high) & self.deck_mask
        self.playable = (self.playable & ~_ranks_mask(suit, 1, 12)) | playable

    def _settle(self, seat: int, out: list[Event]) -> None:
        """Find the next seat to act from ``seat`` on: empty hands are skipped silently,
        a seat with no legal card passes automatically."""
        while not self.hands[seat] & self.playable:
            if self.hands[seat]:
                out.append(Passed(seat, True))
            seat = (seat + 1) % self.players
        self.to_act = seat

    def scores(self) -> tuple[Fraction, ...]:
        return score_hand(
            self.placed, [d.bit_count() for d in self.dead], split=self.split, pool=self.pool
        )

    def table(self) -> dict[str, Any]:
        return {
            "table": CardSet(self.table_mask),
            "dead": tuple(CardSet(d) for d in self.dead),
            "placed": tuple(self.placed),
        }


def score_hand(
    placed: list[int] | tuple[int, ...],
    dead: list[int] | tuple[int, ...],
    *,
    split: str = "exact",
    pool: str = "all_unplaced",
) -> tuple[Fraction, ...]:
    """RULES.md §2.3: placed cards, the winners' share of the unplaced pool, +5 for a clean hand."""
    best = max(placed)
    winners = [i for i, p in enumerate(placed) if p == best]
    if pool == "all_unplaced":
        unplaced = sum(dead)
    else:
        unplaced = sum(d for i, d in enumerate(dead) if i not in winners)
    share = (
        Fraction(unplaced, len(winners)) if split == "exact" else Fraction(unplaced // len(winners))
    )
    return tuple(
        Fraction(p) + (share + (5 if dead[i] == 0 else 0) if i in winners else 0)
        for i, p in enumerate(placed)
    )
