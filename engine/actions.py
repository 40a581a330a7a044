"""Actions are small integers, so that legal actions are a bitmask and sort in a fixed order.

* ``0..54`` and ``64..111``: play that card (see :mod:`cards`);
* :data:`PASS`;
* ``EXCLUDE + suit``: name a suit that will not be trump (Triathlon);
* ``CHOOSE_TRUMP + suit``: choose the trump suit (Triathlon).

Cards sort before every other action, so the lowest legal action is the lowest legal card.
The server's default action on a time-out (:func:`default_action`) is the pass whenever the
pass is legal, else the lowest legal action.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from .cards import FRENCH_SUIT_CODES, card_code, is_card, parse_card, parse_suit

Action = int

PASS: Final = 120
EXCLUDE: Final = 124
CHOOSE_TRUMP: Final = 128
MAX_ACTION: Final = CHOOSE_TRUMP + 3


def exclude(suit: int) -> Action:
    return EXCLUDE + suit


def choose_trump(suit: int) -> Action:
    return CHOOSE_TRUMP + suit


def is_action(action: object) -> bool:
    return (
        isinstance(action, int)
        and not isinstance(action, bool)
        and (is_card(action) or action == PASS or EXCLUDE <= action <= MAX_ACTION)
    )


def describe(action: Action) -> str:
    """A short text form: ``QC``, ``pass``, ``exclude:S``, ``trump:H``."""
    if action == PASS:
        return "pass"
    if EXCLUDE <= action < CHOOSE_TRUMP:
        return f"exclude:{FRENCH_SUIT_CODES[action - EXCLUDE]}"
    if CHOOSE_TRUMP <= action <= MAX_ACTION:
        return f"trump:{FRENCH_SUIT_CODES[action - CHOOSE_TRUMP]}"
    return card_code(action)


def parse(text: str, *, spanish_deck: bool = False) -> Action:
    """The inverse of :func:`describe`; raises ``ValueError`` naming what it could not read."""
    word = text.strip()
    lower = word.lower()
    if lower == "pass":
        return PASS
    if lower.startswith("exclude:"):
        return exclude(parse_suit(word.split(":", 1)[1]))
    if lower.startswith("trump:"):
        return choose_trump(parse_suit(word.split(":", 1)[1]))
    return parse_card(word, spanish_deck=spanish_deck)


def default_in(legal: int) -> Action:
    """The default action among ``legal``, a non-empty mask over action ids: what the server
    plays for a seat whose clock ran out (or that forfeited).

    The pass whenever it is legal, else the lowest legal action (the lowest card, else, in
    Triathlon's trump choice, the first suit in C D H S order). A pass is legal beside a card
    only where a seat may pass voluntarily (a Fan Tan round with ``voluntary_pass``), and
    there a time-out must not tell whether the seat could play (docs/rules.md, "Voluntary
    passes"): the default passes for a seat with a playable card as for one without. It still
    cannot pass for ever: once every seat has passed in succession the pass is legal only to a
    seat that cannot play, so the next seat that can play plays its lowest card. Everywhere
    else the pass is legal only alone, and the default is the lowest legal action.
    """
    if legal >> PASS & 1:
        return PASS
    return (legal & -legal).bit_length() - 1


def default_action(legal: Collection[Action]) -> Action:
    """:func:`default_in` for legal actions as a collection (a bot's or a runner's list)."""
    if not legal:
        raise ValueError("no legal action: nobody is to act")
    return PASS if PASS in legal else min(legal)
