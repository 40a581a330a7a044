"""Actions are small integers, so that legal actions are a bitmask and sort in a fixed order.

* ``0..54`` and ``64..111``: play that card (see :mod:`cards`);
* :data:`PASS`;
* ``EXCLUDE + suit``: name a suit that will not be trump (Triathlon);
* ``CHOOSE_TRUMP + suit``: choose the trump suit (Triathlon).

Cards sort before every other action, so the lowest legal action is the lowest legal card,
or else the pass: the server's default action on a timeout.
"""

from __future__ import annotations

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
