"""How each reader numbers the Jokers: its own numbering, made of what it has seen.

Why: the three Jokers are interchangeable (playing "a Joker" plays the lowest one held), but
the deal has to name each card once, so the engine tells them apart as ``JK1..JK3``. Shown
as they are, those numbers leak: a seat that plays ``JK2`` holds no ``JK1``, so whoever has
not seen ``JK1`` learns that another seat holds it. So no reader is shown the engine's
numbers while the match is live. Each reader numbers the Jokers in the order it came to
know them: a seat its own dealt Jokers first (in the engine's order, so "the lowest one
held" is its own lowest), then every other Joker as it is played; a spectator every Joker as
it is played. A reader's numbers thus follow from what it already sees and say nothing
more. Every reader's view is the true match with the Jokers renamed, which the rules cannot
tell apart, so a reader's log replays, and determinizes, as a real one would. The auditor
(and everyone, in a finished match's whole log) sees the engine's own numbers, which the
fair deal produced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .cards import JOKER_MASK, JOKERS, cards_of

NO_NAMES: Mapping[int, int] = {}
"""The engine's own numbers (an auditor's view, or a round without Jokers)."""


def joker_names(own: int, played: Iterable[int]) -> dict[int, int]:
    """Engine Joker id -> the id a reader is shown, for a reader dealt the Jokers in ``own``
    (a mask; 0 for a spectator) that has seen the Jokers ``played`` this round, in order."""
    names: dict[int, int] = {}
    for card in cards_of(own & JOKER_MASK):
        names[card] = JOKERS[len(names)]
    for card in played:
        if card not in names:
            names[card] = JOKERS[len(names)]
    return names


def renamed(cards: Iterable[int], names: Mapping[int, int]) -> tuple[int, ...]:
    """``cards`` with each Joker under its name. Only Jokers the reader has seen are named,
    and no other ever reaches it (another seat's hand is hidden whole)."""
    return tuple(names.get(card, card) for card in cards)


def renamed_mask(mask: int, names: Mapping[int, int]) -> int:
    """A set of cards with each Joker under its name."""
    jokers = mask & JOKER_MASK
    if not jokers or not names:
        return mask
    out = mask ^ jokers
    for card in cards_of(jokers):
        out |= 1 << names.get(card, card)
    return out


def round_names(plays: Iterable[tuple[int, int]], hand: int, viewer: int | None) -> dict[int, int]:
    """The names a round's reader knows now: ``plays`` are the round's Jokers played so far,
    ``(seat, card)`` in order, ``hand`` the reader's hand now (0 for a spectator, whose
    ``viewer`` is ``None``). Its dealt Jokers are those it holds and those it played."""
    plays = tuple(plays)
    own = hand & JOKER_MASK
    for seat, card in plays:
        if seat == viewer:
            own |= 1 << card
    return joker_names(own, (card for _, card in plays))
